// VelocityControl: gz-sim's velocity control of a model (and of free links): the twist last
// received on the model's cmd_vel topic (or its initial_linear / initial_angular) is imposed
// every step as the model's body-frame linear and angular velocity; a twist on a link's topic
// imposes that link's velocity from then on. As Gazebo, a message is taken in Update (Gazebo's
// PostUpdate) and imposed from the next step's PreUpdate on.

#include "velocity_control/velocity_control.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kParams = "initial_linear, initial_angular, topic, link_name";

class VelocityControl final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "VelocityControl");
    initial_.linear = config.get_or<Vector3d>("initial_linear", Vector3d::Zero);
    initial_.angular = config.get_or<Vector3d>("initial_angular", Vector3d::Zero);
    cmd_ = add_twist_input(r, model_,
                           config.get_or<std::string>("topic", model_topic(r, model_, "cmd_vel")));
    std::vector<const Element*> seen;
    for (const Element* e : config.children("link_name")) {
      const auto name = e->value<std::string>();
      for (const Element* s : seen) {
        if (s->text() == e->text()) {
          throw Error(e->where(), fmt::format("VelocityControl: <link_name> '{}' is already "
                                              "given at {}",
                                              name, s->where()));
        }
      }
      seen.push_back(e);
      Link link;
      link.entity = find_link(r, model_, name, config, "link_name");
      // Physics imposes a velocity on a whole model or on a link that no joint holds. (Gazebo's
      // test of this option runs its kinematic TPE engine, which ignores joints; Gazebo's own
      // pendulum_links.sdf names jointed links.) Such a link is reported and not commanded.
      std::string holder;
      r.each<c::JointData>([&](ecs::Entity j, const c::JointData& jd) {
        if (jd.child == link.entity) holder = r.scoped_name(j);
      });
      if (!holder.empty()) {
        spdlog::warn(
            "{}: VelocityControl: <link_name> '{}' has no effect: it is the child of "
            "joint '{}', and Kestrel's physics imposes a velocity only on a whole model "
            "or on a link that no joint holds",
            e->where(), name, holder);
        continue;
      }
      link.input = add_twist_input(r, model_, model_topic(r, model_, "link/" + name + "/cmd_vel"));
      links_.push_back(link);
    }
    reject_unknown_parameters(config, "VelocityControl", kParams);
    reset_state();
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    r.set(model_, c::LinearVelocityCmd{s_.model.linear}, ecs::ComponentState::kPeriodic);
    r.set(model_, c::AngularVelocityCmd{s_.model.angular}, ecs::ComponentState::kPeriodic);
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (!s_.links[i].commanded) continue;
      r.set(links_[i].entity, c::LinearVelocityCmd{s_.links[i].linear},
            ecs::ComponentState::kPeriodic);
      r.set(links_[i].entity, c::AngularVelocityCmd{s_.links[i].angular},
            ecs::ComponentState::kPeriodic);
    }
  }

  void update(const UpdateInfo&, ecs::Registry& r) override {
    const auto& in = r.get<c::TopicInputs>(model_).twist;
    if (in[cmd_].count != s_.cmd_seen) {
      s_.cmd_seen = in[cmd_].count;
      s_.model = {in[cmd_].linear, in[cmd_].angular, true};
    }
    for (std::size_t i = 0; i < links_.size(); ++i) {
      const auto& t = in[links_[i].input];
      if (t.count == s_.links[i].seen) continue;
      s_.links[i] = {t.linear, t.angular, true, t.count};
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  struct Twist {
    Vector3d linear, angular;  // body frame [m/s, rad/s]
    bool commanded = false;
    std::uint64_t seen = 0;
  };
  struct Link {
    ecs::Entity entity = ecs::kNullEntity;
    std::size_t input = 0;
  };
  struct State {
    Twist model;
    std::uint64_t cmd_seen = 0;
    std::vector<Twist> links;
  };

  void reset_state() {
    s_ = State{};
    s_.model = initial_;
    s_.links.resize(links_.size());
  }

  ecs::Entity model_ = ecs::kNullEntity;
  Twist initial_;
  std::size_t cmd_ = 0;
  std::vector<Link> links_;
  State s_;
};

}  // namespace

std::unique_ptr<System> make_velocity_control() { return std::make_unique<VelocityControl>(); }

}  // namespace kestrel::systems
