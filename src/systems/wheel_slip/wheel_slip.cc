// WheelSlip: each wheel's contacts slip in proportion to their friction force, by a compliance
// that grows with the wheel's rim speed, as gz-sim's (Fortress) WheelSlip computes it. See
// README.md.
#include "wheel_slip/wheel_slip.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/wheel_slip.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

struct Wheel {
  ecs::Entity link = ecs::kNullEntity, collision = ecs::kNullEntity, joint = ecs::kNullEntity;
  c::WheelSlipCompliance configured;  // <slip_compliance_lateral>, <..._longitudinal>
  double normal_force = 0;            // <wheel_normal_force> [N]
  double radius = 0;                  // <wheel_radius> [m]
};

// A finite, non-negative unitless compliance (Gazebo: "should be non-negative").
double compliance(const Element& wheel, std::string_view name) {
  const double v = wheel.get_or(name, 0.0);
  if (!(v >= 0) || !std::isfinite(v)) {
    throw Error(wheel.child(name)->where(),
                fmt::format("WheelSlip: <{}> {} must be a finite number >= 0", name, v));
  }
  return v;
}

class WheelSlip final : public System,
                        public ISystemConfigure,
                        public ISystemPreUpdate,
                        public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    const ecs::Entity model = require_model(r, entity, config, "WheelSlip");
    const auto wheels = config.children("wheel");
    if (wheels.empty()) {
      throw Error(config.where(), "WheelSlip: no <wheel link_name='...'> given");
    }
    for (const Element* w : wheels) {
      w->reject_unknown_attributes({"link_name"});
      const auto name = w->attribute("link_name");
      if (!name) throw Error(w->where(), "WheelSlip: <wheel> has no link_name attribute");
      Wheel wheel;
      wheel.link = r.child_by_name(model, *name);
      if (wheel.link == ecs::kNullEntity || !r.has<c::Link>(wheel.link)) {
        throw Error(w->where(), fmt::format("WheelSlip: <wheel link_name='{}'>: no such link in "
                                            "model '{}'",
                                            *name, r.scoped_name(model)));
      }
      for (const Wheel& other : wheels_) {
        if (other.link == wheel.link) {
          throw Error(w->where(), fmt::format("WheelSlip: link '{}' is given twice", *name));
        }
      }
      std::vector<ecs::Entity> collisions;
      for (ecs::Entity ch : r.children(wheel.link)) {
        if (r.has<c::Collision>(ch)) collisions.push_back(ch);
      }
      if (collisions.size() != 1) {
        throw Error(w->where(), fmt::format("WheelSlip: link '{}' has {} collisions; a wheel has "
                                            "exactly one",
                                            *name, collisions.size()));
      }
      wheel.collision = collisions.front();
      std::vector<ecs::Entity> joints;
      for (ecs::Entity ch : r.children(model)) {
        const auto* jd = r.try_get<c::JointData>(ch);
        if (jd && jd->child == wheel.link) joints.push_back(ch);
      }
      if (joints.size() != 1) {
        throw Error(w->where(), fmt::format("WheelSlip: link '{}' is the child of {} joints of "
                                            "the model; a wheel spins on exactly one",
                                            *name, joints.size()));
      }
      wheel.joint = joints.front();
      wheel.configured.lateral = compliance(*w, "slip_compliance_lateral");
      wheel.configured.longitudinal = compliance(*w, "slip_compliance_longitudinal");
      wheel.normal_force = get_positive(*w, "wheel_normal_force");
      wheel.radius = get_positive(*w, "wheel_radius");
      reject_unknown_parameters(*w, "WheelSlip <wheel>",
                                "slip_compliance_lateral, slip_compliance_longitudinal, "
                                "wheel_normal_force, wheel_radius");
      r.add<c::WheelSlipCompliance>(wheel.link, wheel.configured);
      wheels_.push_back(wheel);
    }
    reject_unknown_parameters(config, "WheelSlip", "wheel", {"wheel"});
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    // Gazebo's first PreUpdate only makes the components the others read.
    if (!initialized_) {
      initialized_ = true;
      return;
    }
    if (info.paused) return;
    for (const Wheel& w : wheels_) {
      auto& now = r.get<c::WheelSlipCompliance>(w.link);
      if (const auto* cmd = r.try_get<c::WheelSlipCmd>(w.link)) {
        // Gazebo takes a command that differs by more than 1e-6 in either direction.
        if (std::abs(now.lateral - cmd->slip_compliance_lateral) > 1e-6 ||
            std::abs(now.longitudinal - cmd->slip_compliance_longitudinal) > 1e-6) {
          now = {cmd->slip_compliance_lateral, cmd->slip_compliance_longitudinal};
        }
        r.remove<c::WheelSlipCmd>(w.link);
      }
      const auto* spin = r.try_get<c::JointVelocity>(w.joint);
      if (!spin || spin->data.empty()) continue;
      // Slip [m/s/N] = unitless compliance × rim speed / the wheel's nominal normal force: the
      // rim speed is the denominator of the slip ratio in acceleration.
      const double speed = w.radius * std::abs(spin->data[0]);
      const c::SlipComplianceCmd slip{speed / w.normal_force * now.lateral,
                                      speed / w.normal_force * now.longitudinal};
      if (auto* cmd = r.try_get<c::SlipComplianceCmd>(w.collision)) {
        *cmd = slip;
      } else {
        r.add<c::SlipComplianceCmd>(w.collision, slip);
      }
    }
  }

  // Exact reset (Gazebo's WheelSlip keeps its state): the configured compliances and Gazebo's
  // first step without a command again.
  void reset(const UpdateInfo&, ecs::Registry& r) override {
    initialized_ = false;
    for (const Wheel& w : wheels_) r.get<c::WheelSlipCompliance>(w.link) = w.configured;
  }

 private:
  std::vector<Wheel> wheels_;
  bool initialized_ = false;
};

}  // namespace

std::unique_ptr<System> make_wheel_slip() { return std::make_unique<WheelSlip>(); }

}  // namespace kestrel::systems
