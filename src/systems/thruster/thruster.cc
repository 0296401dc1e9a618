// Thruster: a propeller commanded in thrust [N], as gz-sim's Thruster (Fortress) computes it.
// The commanded thrust acts along the joint axis on the propeller link; the propeller is spun
// at the speed Fossen's model gives that thrust, T = ρ·KT·D⁴·ω|ω| (ω in rad/s, as Gazebo), either
// imposed on the joint (velocity_control) or through a PID on the joint torque. See README.md.

#include "thruster/thruster.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <ignition/math/PID.hh>
#include <limits>
#include <string>

#include "common/fluid.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "namespace, joint_name, thrust_coefficient, propeller_diameter, fluid_density, "
    "wake_fraction, alpha_1, alpha_2, topic, max_thrust_cmd, min_thrust_cmd, velocity_control, "
    "p_gain, i_gain, d_gain";

class Thruster final : public System,
                       public ISystemConfigure,
                       public ISystemPreUpdate,
                       public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "Thruster must be declared inside a <model>");
    }
    model_ = entity;
    const std::string model = model_name(r, model_);
    const std::string ns = config.get_or<std::string>("namespace", model);
    if (!config.child("joint_name")) {
      throw Error(config.where(), "Thruster requires the <joint_name> parameter");
    }
    const auto joint_name = config.get<std::string>("joint_name");
    if (config.child("thrust_coefficient")) {
      kt_ = get_finite(config, "thrust_coefficient");
      kt_set_ = true;
    }
    diameter_ = get_positive_or(config, "propeller_diameter", 0.02);
    rho_ = get_positive_or(config, "fluid_density", 1000);
    wake_ = get_finite_or(config, "wake_fraction", 0.2);
    alpha1_ = get_finite_or(config, "alpha_1", 1);
    alpha2_ = get_finite_or(config, "alpha_2", 0);
    for (const char* a : {"alpha_1", "alpha_2"}) {
      if (kt_set_ && config.child(a)) {
        spdlog::warn("{}: Thruster: <{}> is ignored because <thrust_coefficient> is given",
                     config.child(a)->where(), a);
      }
    }
    const std::string topic = config.get_or<std::string>("topic", "");
    joint_ = find_joint(r, model_, joint_name, config, "joint_name");
    const auto& jd = r.get<c::JointData>(joint_);
    if (jd.type != c::JointType::kRevolute && jd.type != c::JointType::kContinuous) {
      throw Error(config.child("joint_name")->where(),
                  fmt::format("Thruster: joint '{}' must be revolute or continuous", joint_name));
    }
    axis_ = jd.axis.xyz;
    link_ = jd.child;
    // The joint frame in the propeller link, from the world poses of the load (the joint's Pose
    // component is not relative to the child link when the link is turned in the model).
    const auto* X_WJ = r.try_get<c::WorldPose>(joint_);
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (X_WJ && X_WL) X_LJ_ = X_WL->value.Inverse() * X_WJ->value;
    // Gazebo subscribes the deprecated cmd_pos topic too.
    deprecated_.topic = as_valid_topic("/model/" + ns + "/joint/" + joint_name + "/cmd_pos");
    spdlog::warn("{}: Thruster: topic {} is deprecated (Gazebo listens on it too)", config.where(),
                 deprecated_.topic);
    command_.topic =
        topic.empty() ? "/model/" + ns + "/joint/" + joint_name + "/cmd_thrust" : ns + "/" + topic;
    command_.topic = as_valid_topic(command_.topic);
    add_command_input(r, model_, deprecated_);
    add_command_input(r, model_, command_);
    double max_cmd = get_finite_or(config, "max_thrust_cmd", cmd_max_);
    double min_cmd = get_finite_or(config, "min_thrust_cmd", cmd_min_);
    if (max_cmd < min_cmd) {
      throw Error(config.where(), fmt::format("Thruster: <max_thrust_cmd> {} is below "
                                              "<min_thrust_cmd> {}",
                                              max_cmd, min_cmd));
    }
    cmd_max_ = max_cmd, cmd_min_ = min_cmd;
    velocity_control_ = config.get_or<bool>("velocity_control", false);
    p_ = get_finite_or(config, "p_gain", 0.1);
    // Fortress reads <i_gain> and <d_gain> only when they are absent (a bug): both are 0.
    for (const char* gain : {"i_gain", "d_gain"}) {
      if (const Element* e = config.child(gain)) {
        e->value<double>();
        spdlog::warn("{}: Thruster: <{}> has no effect (Gazebo Fortress's Thruster ignores it)",
                     e->where(), gain);
      }
    }
    if (config.child("power_load") || config.child("battery_name")) {
      throw Error(config.where(),
                  "Thruster: <power_load>/<battery_name> (a battery consumer) is "
                  "not supported by Kestrel");
    }
    reject_unknown_parameters(config, "Thruster", kParams);
    init_pid();
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
    if (velocity_control_) r.set(joint_, c::JointVelocityCmd{{0.0}});
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    // The latest command, through either topic, clamped and NaN → 0 (Gazebo's fixnan).
    for (CommandInput* in : {&deprecated_, &command_}) {
      const auto before = in->seen;
      double value = 0;
      read_command(r, model_, *in, value);
      if (in->seen != before) {
        thrust_ = std::clamp(std::isfinite(value) ? value : 0.0, cmd_min_, cmd_max_);
      }
    }
    // An empty battery on the model stops the thruster (Gazebo's HasSufficientBattery).
    if (const auto* b = r.try_get<c::Battery>(model_); b && b->empty) return;
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (!X_WL) return;
    const Vector3d unit = (X_WL->value * X_LJ_).Rot().RotateVector(axis_).Normalize();
    omega_ = thrust_to_omega(thrust_);
    double torque = 0;
    if (!velocity_control_) {
      double current = 0;
      if (const auto* w = r.try_get<c::WorldAngularVelocity>(link_)) current = w->value.Dot(unit);
      const double error = current - omega_;
      if (std::abs(error) > 0.1) {
        torque = pid_.Update(error, std::chrono::duration<double>(to_seconds(info.dt)));
      }
    } else {
      r.get<c::JointVelocityCmd>(joint_).data.assign(1, omega_);
    }
    auto& wrench = r.get<c::ExternalWorldWrenchCmd>(link_);
    wrench.force += unit * thrust_;
    wrench.torque += unit * torque;
    if (const auto* v = r.try_get<c::WorldLinearVelocity>(link_)) speed_ = v->value.Length();
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    thrust_ = omega_ = speed_ = 0;
    deprecated_.seen = command_.seen = 0;
    init_pid();
  }

 private:
  void init_pid() {
    pid_.Init(p_, 0, 0, 1, -1, thrust_to_omega(cmd_max_), thrust_to_omega(cmd_min_), 0);
  }

  // ω = sign(T)·√|T / (ρ·KT·D⁴)|; without a given KT, KT = α1 + α2·(1 − w)·|v| / (ω·D) from the
  // last step's speed and propeller speed (Gazebo's UpdateThrustCoefficient).
  double thrust_to_omega(double thrust) {
    if (!kt_set_ && std::abs(omega_) > std::numeric_limits<double>::epsilon()) {
      kt_ = alpha1_ + alpha2_ * ((1 - wake_) * speed_) / (omega_ * diameter_);
    }
    const double w = std::sqrt(std::abs(thrust / (rho_ * kt_ * std::pow(diameter_, 4))));
    return thrust > 0 ? w : -w;
  }

  ecs::Entity model_ = ecs::kNullEntity, joint_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  ignition::math::Pose3d X_LJ_;
  Vector3d axis_ = Vector3d::UnitX;
  CommandInput deprecated_, command_;
  double kt_ = 1, diameter_ = 0.02, rho_ = 1000, wake_ = 0.2, alpha1_ = 1, alpha2_ = 0;
  bool kt_set_ = false, velocity_control_ = false;
  double cmd_max_ = 1000, cmd_min_ = -1000, p_ = 0.1;
  double thrust_ = 0, omega_ = 0, speed_ = 0;
  ignition::math::PID pid_;
};

}  // namespace

std::unique_ptr<System> make_thruster() { return std::make_unique<Thruster>(); }

}  // namespace kestrel::systems
