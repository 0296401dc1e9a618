// JointStatePublisher: publishes the state of a model's joints as ignition.msgs.Model, as
// gz-sim's (Fortress) JointStatePublisher does, through a JointStateOutput (components/
// messages.h) filled after Physics. See README.md.
#include "joint_state_publisher/joint_state_publisher.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

// "/world/W/model/A/model/B": Gazebo's topicFromScopedName of a model.
std::string scoped_topic(const ecs::Registry& r, ecs::Entity model) {
  std::string topic;
  for (ecs::Entity e = model; e != ecs::kNullEntity; e = r.parent(e)) {
    const auto* n = r.try_get<c::Name>(e);
    const char* kind = r.has<c::World>(e) ? "world" : (r.has<c::Model>(e) ? "model" : nullptr);
    if (!n || !kind) continue;
    topic = fmt::format("/{}/{}{}", kind, n->value, topic);
  }
  return topic;
}

class JointStatePublisher final : public System,
                                  public ISystemConfigure,
                                  public ISystemUpdate,
                                  public ISystemReset {
 public:
  // After Physics (Gazebo publishes in PostUpdate): the state at the end of this step.
  int priority() const override { return priority::kPostPhysicsSensors; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "JointStatePublisher");
    claim_unique_plugin(r, entity, "JointStatePublisher", config);
    const auto names = config.children("joint_name");
    for (const Element* e : names) {
      const ecs::Entity j = find_joint(r, entity, e->value<std::string>(), *e, "joint_name");
      if (std::find(joints_.begin(), joints_.end(), j) != joints_.end()) {
        spdlog::warn("{}: JointStatePublisher: joint '{}' is listed twice (published once)",
                     e->where(), e->value<std::string>());
        continue;
      }
      joints_.push_back(j);
    }
    if (names.empty()) {
      for (const ecs::Entity child : r.children(entity)) {
        if (r.has<c::Joint>(child)) joints_.push_back(child);
      }
    }
    std::sort(joints_.begin(), joints_.end());  // Gazebo keeps them in a std::set
    std::string topic = as_valid_topic(config.get_or<std::string>("topic", ""));
    if (topic.empty()) topic = as_valid_topic(scoped_topic(r, entity) + "/joint_state");
    if (const Element* e = config.child("update_rate")) {
      const double rate = e->value<double>();
      if (!std::isfinite(rate)) {
        throw Error(e->where(), "JointStatePublisher: <update_rate> must be a finite number [Hz]");
      }
      if (rate < 0) {
        spdlog::warn(
            "{}: JointStatePublisher: <update_rate> must be >= 0, got {}: publishing "
            "every step (as Gazebo)",
            e->where(), rate);
      } else if (rate > 0) {
        // Gazebo: duration<double>(1 / rate) cast to the clock's nanoseconds.
        schedule_.period =
            std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / rate));
      }
    }
    out_ = add_joint_state_output(r, entity, topic);
    reject_unknown_parameters(config, "JointStatePublisher", "joint_name, topic, update_rate");
  }

  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;  // Gazebo's PostUpdate sees the same time again: not due
    if (!schedule_.due(info.sim_time + info.dt)) return;
    auto& o = r.get<c::TopicOutputs>(model_).joint_state[out_];
    o.stamp = info.sim_time + info.dt;
    o.name = model_name(r, model_);
    o.id = model_;
    if (const auto* pose = r.try_get<c::Pose>(model_)) o.pose = pose->value;
    o.joints.clear();
    for (const ecs::Entity j : joints_) {
      if (!r.alive(j)) continue;
      auto& jm = o.joints.emplace_back();
      if (const auto* n = r.try_get<c::Name>(j)) jm.name = n->value;
      jm.id = j;
      if (const auto* pose = r.try_get<c::Pose>(j)) jm.pose = pose->value;
      const auto* data = r.try_get<c::JointData>(j);
      if (data) {
        jm.parent = data->parent_name;
        jm.child = data->child_name;
      }
      // Gazebo sends at most two axes of each state vector.
      const auto fill = [&](const std::vector<double>* v, double c::JointStateOutput::Axis::*f) {
        if (!v) return;
        if (!v->empty()) {
          jm.axis1.*f = (*v)[0];
          jm.has_axis1 = true;
        }
        if (v->size() > 1) {
          jm.axis2.*f = (*v)[1];
          jm.has_axis2 = true;
        }
      };
      const auto* q = r.try_get<c::JointPosition>(j);
      fill(q ? &q->data : nullptr, &c::JointStateOutput::Axis::position);
      if (q && !q->data.empty() && data) {
        jm.has_axis1_info = true;
        jm.xyz = data->axis.xyz;
        jm.lower = data->axis.lower;
        jm.upper = data->axis.upper;
        jm.damping = data->axis.damping;
      }
      const auto* v = r.try_get<c::JointVelocity>(j);
      fill(v ? &v->data : nullptr, &c::JointStateOutput::Axis::velocity);
      const auto* f = r.try_get<c::JointForce>(j);
      fill(f ? &f->data : nullptr, &c::JointStateOutput::Axis::force);
    }
    ++o.sequence;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { schedule_.last = Duration{0}; }

 private:
  ecs::Entity model_ = ecs::kNullEntity;
  std::vector<ecs::Entity> joints_;
  std::size_t out_ = 0;
  PublishSchedule schedule_;
};

}  // namespace

std::unique_ptr<System> make_joint_state_publisher() {
  return std::make_unique<JointStatePublisher>();
}

}  // namespace kestrel::systems
