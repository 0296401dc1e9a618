// LiftDrag: the lift, drag and pitching moment of one lifting surface from its angle of attack,
// a linear coefficient model with a post-stall slope, and a control surface joint, as gz-sim's
// LiftDrag computes them (gz-sim main / Harmonic, which PX4's models are written for; the
// Fortress differences are listed in README.md).

#include "lift_drag/lift_drag.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <ignition/math/Helpers.hh>
#include <string>

#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "link_name, control_joint_name, cla, cda, cma, alpha_stall, cla_stall, cda_stall, cma_stall, "
    "cm_delta, air_density, radial_symmetry, reversible, area, a0, cp, forward, upward, "
    "control_joint_rad_to_cl";

// A unit vector from a parameter (Gazebo normalises it; a zero vector has no direction).
Vector3d unit_vector(const Element& config, std::string_view name, const Vector3d& fallback) {
  Vector3d v = get_finite_vector_or(config, name, fallback);
  if (v.Length() < 1e-12) {
    throw Error(config.child(name)->where(),
                fmt::format("LiftDrag: <{}> must not be the zero vector", name));
  }
  return v.Normalize();
}

class LiftDrag final : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "LiftDrag must be declared inside a <model>");
    }
    // Gazebo's defaults (gz-sim main).
    cla_ = get_finite_or(config, "cla", 1.0);
    cda_ = get_finite_or(config, "cda", 0.01);
    cma_ = get_finite_or(config, "cma", 0.0);
    alpha_stall_ = get_finite_or(config, "alpha_stall", M_PI / 2);
    cla_stall_ = get_finite_or(config, "cla_stall", 0.0);
    cda_stall_ = get_finite_or(config, "cda_stall", 1.0);
    cma_stall_ = get_finite_or(config, "cma_stall", 0.0);
    cm_delta_ = get_finite_or(config, "cm_delta", 0.0);
    rho_ = get_positive_or(config, "air_density", 1.2041, true);
    radial_symmetry_ = config.get_or<bool>("radial_symmetry", false);
    reversible_ = config.get_or<bool>("reversible", false);
    area_ = get_positive_or(config, "area", 1.0, true);
    alpha0_ = get_finite_or(config, "a0", 0.0);
    cp_ = get_finite_vector_or(config, "cp", Vector3d::Zero);
    forward_ = unit_vector(config, "forward", Vector3d::UnitX);
    upward_ = unit_vector(config, "upward", Vector3d::UnitZ);
    if (!radial_symmetry_ && forward_.Cross(upward_).Length() < 1e-9) {
      throw Error(config.child("upward") ? config.child("upward")->where() : config.where(),
                  "LiftDrag: <forward> and <upward> are parallel: no lift-drag plane");
    }
    rad_to_cl_ = get_finite_or(config, "control_joint_rad_to_cl", 4.0);
    if (!config.child("link_name")) {
      throw Error(config.where(), "LiftDrag requires the <link_name> parameter");
    }
    link_ = find_link(r, entity, config.get<std::string>("link_name"), config, "link_name");
    // PX4's standard_vtol repeats its <control_joint_name>: Gazebo takes the first; a repeat
    // naming another joint is an error, the same one a warning.
    const auto joints = config.children("control_joint_name");
    if (!joints.empty()) {
      const auto name = joints.front()->value<std::string>();
      for (std::size_t i = 1; i < joints.size(); ++i) {
        const auto other = joints[i]->value<std::string>();
        if (other != name) {
          throw Error(joints[i]->where(),
                      fmt::format("LiftDrag: a second <control_joint_name> '{}' (the first, "
                                  "'{}', is the one Gazebo uses)",
                                  other, name));
        }
        spdlog::warn("{}: LiftDrag: <control_joint_name> '{}' repeated", joints[i]->where(), other);
      }
      joint_ = find_joint(r, entity, name, config, "control_joint_name");
    }
    reject_unknown_parameters(config, "LiftDrag", kParams);
    world_ = world_of(r, entity);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    const auto* v_W = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w_W = r.try_get<c::WorldAngularVelocity>(link_);
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (!v_W || !w_W || !X_WL) return;
    const auto& rot = X_WL->value.Rot();
    // Velocity of the centre of pressure relative to the air.
    const Vector3d cp_W = rot.RotateVector(cp_);
    const Vector3d vel = v_W->value + w_W->value.Cross(cp_W) - air_velocity(r, world_);
    if (vel.Length() <= 0.01) return;
    const Vector3d vel_dir = vel.Normalized();
    const Vector3d forward_W = rot.RotateVector(forward_);
    // A surface that is not reversible makes no force in reversed flow.
    if (!reversible_ && forward_W.Dot(vel) <= 0.0) return;
    Vector3d upward_W;
    if (radial_symmetry_) {
      // The upward direction is the inflow's part normal to forward.
      upward_W = forward_W.Cross(forward_W.Cross(vel_dir)).Normalize();
    } else {
      upward_W = rot.RotateVector(upward_);
    }
    const Vector3d span_W = forward_W.Cross(upward_W).Normalize();
    // Flow along the span reduces the coefficients by cos² of the sweep angle.
    const double sin_sweep = std::clamp(span_W.Dot(vel_dir), -1.0, 1.0);
    const double cos2_sweep = 1.0 - sin_sweep * sin_sweep;
    // The inflow in the lift-drag plane sets the drag (against it) and lift (normal to it).
    const Vector3d vel_ld = vel - span_W * vel.Dot(span_W);
    const Vector3d drag_dir = -vel_ld.Normalized();
    const Vector3d lift_dir = span_W.Cross(vel_ld).Normalized();
    const double cos_alpha = std::clamp(lift_dir.Dot(upward_W), -1.0, 1.0);
    double alpha = lift_dir.Dot(forward_W) >= 0.0 ? alpha0_ + std::acos(cos_alpha)
                                                  : alpha0_ - std::acos(cos_alpha);
    while (std::abs(alpha) > 0.5 * M_PI) alpha = alpha > 0 ? alpha - M_PI : alpha + M_PI;
    const double speed_ld = vel_ld.Length();
    const double q = 0.5 * rho_ * speed_ld * speed_ld;

    // Piecewise-linear coefficient: slope `a` up to the stall angle, `a_stall` past it.
    auto coefficient = [&](double a, double a_stall) {
      if (alpha > alpha_stall_) return (a * alpha_stall_ + a_stall * (alpha - alpha_stall_));
      if (alpha < -alpha_stall_) return (-a * alpha_stall_ + a_stall * (alpha + alpha_stall_));
      return a * alpha;
    };
    double cl = coefficient(cla_, cla_stall_) * cos2_sweep;
    if (alpha > alpha_stall_) cl = std::max(0.0, cl);
    if (alpha < -alpha_stall_) cl = std::min(0.0, cl);
    const double cd = std::abs(coefficient(cda_, cda_stall_) * cos2_sweep);
    double cm = coefficient(cma_, cma_stall_) * cos2_sweep;
    if (alpha > alpha_stall_) cm = std::max(0.0, cm);
    if (alpha < -alpha_stall_) cm = std::min(0.0, cm);
    // The control surface changes the lift and the moment (not the drag, as Gazebo).
    if (joint_ != ecs::kNullEntity) {
      if (const auto* q_j = r.try_get<c::JointPosition>(joint_); q_j && !q_j->data.empty()) {
        cl += rad_to_cl_ * q_j->data[0];
        cm += cm_delta_ * q_j->data[0];
      }
    }
    add_wrench_at(r, link_, lift_dir * (cl * q * area_) + drag_dir * (cd * q * area_),
                  span_W * (cm * q * area_), cp_W);
  }

 private:
  ecs::Entity link_ = ecs::kNullEntity, joint_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  double cla_ = 0, cda_ = 0, cma_ = 0, alpha_stall_ = 0, cla_stall_ = 0, cda_stall_ = 0,
         cma_stall_ = 0, cm_delta_ = 0, rho_ = 0, area_ = 0, alpha0_ = 0, rad_to_cl_ = 0;
  bool radial_symmetry_ = false, reversible_ = false;
  Vector3d cp_, forward_, upward_;
};

}  // namespace

std::unique_ptr<System> make_lift_drag() { return std::make_unique<LiftDrag>(); }

}  // namespace kestrel::systems
