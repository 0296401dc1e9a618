// PosePublisher: gz-sim's publisher of a model's link (and optionally visual, collision, sensor,
// nested model) poses relative to their parents, each step or at update_frequency, as many
// Pose messages or one Pose_V. With static_publisher the poses that cannot change (everything
// but the links that a non-fixed joint moves) go to "<topic>_static" at their own frequency.

#include "pose_publisher/pose_publisher.h"

#include <fmt/format.h>

#include <unordered_set>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kParams =
    "publish_link_pose, publish_nested_model_pose, publish_model_pose, publish_visual_pose, "
    "publish_collision_pose, publish_sensor_pose, update_frequency, static_publisher, "
    "static_update_frequency, use_pose_vector_msg";

// Gazebo's removeParentScope of a "::"-scoped name: everything after the first "::".
std::string without_world(const std::string& scoped) {
  const auto at = scoped.find("::");
  return at == std::string::npos ? scoped : scoped.substr(at + 2);
}

class PosePublisher final : public System,
                            public ISystemConfigure,
                            public ISystemUpdate,
                            public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "PosePublisher");
    links_ = config.get_or<bool>("publish_link_pose", true);
    nested_ = config.get_or<bool>("publish_nested_model_pose", false);
    // Gazebo's default for publish_model_pose is publish_nested_model_pose's value.
    model_pose_ = config.get_or<bool>("publish_model_pose", nested_);
    visuals_ = config.get_or<bool>("publish_visual_pose", false);
    collisions_ = config.get_or<bool>("publish_collision_pose", false);
    sensors_ = config.get_or<bool>("publish_sensor_pose", false);
    // Gazebo: update_frequency <= 0 (its default, -1) is every step.
    const double f = config.get_or<double>("update_frequency", -1.0);
    dynamic_.period = f > 0 ? publish_period(config, "update_frequency", f) : Duration{0};
    static_publisher_ = config.get_or<bool>("static_publisher", false);
    if (static_publisher_) {
      const double sf = config.get_or<double>("static_update_frequency", f);
      static_.period = sf > 0 ? publish_period(config, "static_update_frequency", sf) : Duration{0};
    } else if (const Element* e = config.child("static_update_frequency")) {
      throw Error(e->where(),
                  "PosePublisher: <static_update_frequency> needs "
                  "<static_publisher>true</static_publisher>");
    }
    const bool vector = config.get_or<bool>("use_pose_vector_msg", false);
    reject_unknown_parameters(config, "PosePublisher", kParams);

    // Gazebo configures a model's plugins before the model is attached to its parent, so its
    // topic is the model's scoped name without the world: "/model/<name>/pose" for a top-level
    // model, "/model/<outer>/model/<inner>/pose" for a nested one.
    std::string topic;
    for (ecs::Entity e = model_; e != ecs::kNullEntity && r.has<c::Model>(e); e = r.parent(e)) {
      topic = "/model/" + r.get<c::Name>(e).value + topic;
    }
    c::PosesOutput out;
    out.topic = topic + "/pose";
    out.vector = vector;
    dynamic_out_ = add_poses_output(r, model_, out);
    if (static_publisher_) {
      out.topic = topic + "/pose_static";
      static_out_ = add_poses_output(r, model_, out);
    }
    collect(r);
  }

  // Gazebo's PostUpdate, after Physics.
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    const Duration now = info.sim_time + info.dt;
    // Gazebo's PostUpdate stamps with its simTime, the end of the step.
    const bool publish = dynamic_.due(now);
    bool publish_static = false;
    if (static_publisher_) publish_static = static_.due(now);
    if (!publish && !publish_static) return;
    auto& out = r.get<c::TopicOutputs>(model_).poses;
    if (static_publisher_) {
      if (publish_static) fill(r, out[static_out_], now, /*statics=*/true, /*dynamics=*/false);
      if (publish) fill(r, out[dynamic_out_], now, false, true);
    } else {
      fill(r, out[dynamic_out_], now, true, true);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    dynamic_.last = static_.last = Duration{0};
  }

 private:
  struct Entry {
    ecs::Entity entity;
    std::string frame, child;
    bool dynamic;
  };

  // The entities to publish, depth first from the model (Gazebo's traversal, in entity order).
  void collect(const ecs::Registry& r) {
    std::unordered_set<ecs::Entity> moving;  // links moved by a non-fixed joint
    for (ecs::Entity e : r.descendants(model_)) {
      const auto* j = r.try_get<c::JointData>(e);
      if (!j || j->type == c::JointType::kFixed || r.parent(e) != model_) continue;
      const std::string canonical = canonical_link_name(r, model_);
      for (ecs::Entity l : {j->parent, j->child}) {
        if (l == ecs::kNullEntity || r.parent(l) != model_) continue;
        if (r.get<c::Name>(l).value == canonical) continue;  // the canonical link: static
        moving.insert(l);
      }
    }
    std::vector<ecs::Entity> stack{model_};
    while (!stack.empty()) {
      const ecs::Entity e = stack.back();
      stack.pop_back();
      const ecs::Entity parent = r.parent(e);
      bool wanted = (r.has<c::Link>(e) && links_) || (r.has<c::Visual>(e) && visuals_) ||
                    (r.has<c::Collision>(e) && collisions_) || (r.has<c::Sensor>(e) && sensors_);
      if (r.has<c::Model>(e)) {
        if (parent != ecs::kNullEntity && r.has<c::Model>(parent)) wanted = nested_;
        if (!wanted) wanted = nested_ && model_pose_;
      }
      if (wanted && r.has<c::Name>(e)) {
        Entry entry{e, "", without_world(r.scoped_name(e)), moving.count(e) != 0};
        if (parent != ecs::kNullEntity && r.has<c::Name>(parent)) {
          entry.frame = without_world(r.scoped_name(parent));
        }
        entries_.push_back(std::move(entry));
      }
      const auto kids = r.children(e);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
  }

  void fill(const ecs::Registry& r, c::PosesOutput& out, Duration now, bool statics,
            bool dynamics) const {
    out.items.clear();
    for (const Entry& e : entries_) {
      if (e.dynamic ? !dynamics : !statics) continue;
      const auto* pose = r.try_get<c::Pose>(e.entity);
      if (!pose) continue;
      out.items.push_back({e.child, e.frame, e.child, pose->value});
    }
    out.stamp = now;
    ++out.sequence;
  }

  ecs::Entity model_ = ecs::kNullEntity;
  bool links_ = true, nested_ = false, model_pose_ = false, visuals_ = false, collisions_ = false,
       sensors_ = false, static_publisher_ = false;
  PublishSchedule dynamic_, static_;
  std::size_t dynamic_out_ = 0, static_out_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace

std::unique_ptr<System> make_pose_publisher() { return std::make_unique<PosePublisher>(); }

}  // namespace kestrel::systems
