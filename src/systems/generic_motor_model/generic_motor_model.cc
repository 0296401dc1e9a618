// GenericMotorModel: PX4-Autopilot's generic motor plugin for Gazebo, as it computes: `velocity` — MulticopterMotorModel's rotor
// (thrust k·ω|ω| from the joint's speed, rotor drag, drag torque and rolling moment on the
// parent link, first-order speed filter); `force_polynomial` — thrust (and PX4's "torque"
// polynomial, which it applies as a force too) as polynomials of the command, in rpm or as a
// normalised duty cycle. See README.md.

#include "generic_motor_model/generic_motor_model.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "robotNamespace, jointName, linkName, actuator_number, motorNumber, turningDirection, "
    "controlMethod, minCommand, maxDutyCycle, minDutyCycle, motorType, positiveThrustPolynomial, "
    "negativeThrustPolynomial, positiveTorquePolynomial, negativeTorquePolynomial, "
    "commandSubTopic, rotorDragCoefficient, rollingMomentCoefficient, maxRotVelocity, "
    "motorConstant, momentConstant, bidirectionalMotor, timeConstantUp, timeConstantDown, "
    "rotorVelocitySlowdownSim";

template <class T>
T& ensure(ecs::Registry& r, ecs::Entity e) {
  if (T* t = r.try_get<T>(e)) return *t;
  return r.add<T>(e);
}

// "[a, b, c]" (PX4's format; brackets optional, commas or spaces) → numbers.
std::vector<double> parse_polynomial(const Element& e) {
  std::string s = e.value<std::string>();
  for (char& ch : s) {
    if (ch == '[' || ch == ']' || ch == ',') ch = ' ';
  }
  std::istringstream in(s);
  std::vector<double> out;
  std::string tok;
  while (in >> tok) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(tok, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != tok.size() || !std::isfinite(v)) {
      throw Error(e.where(), fmt::format("<{}>: '{}' is not a finite number", e.name(), tok));
    }
    out.push_back(v);
  }
  return out;
}

double polynomial(const std::vector<double>& p, double x) {
  double y = 0;
  for (std::size_t i = 0; i < p.size(); ++i) y += p[i] * std::pow(x, static_cast<double>(i));
  return y;
}

class GenericMotorModel final : public System,
                                public ISystemConfigure,
                                public ISystemPreUpdate,
                                public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "GenericMotorModel must be declared inside a <model>");
    }
    model_ = entity;
    where_ = config.where();
    model_name_ = r.scoped_name(model_);
    const auto ns = config.get_or<std::string>("robotNamespace", r.get<c::Name>(model_).value);
    joint_ = find_joint(r, model_, config.get<std::string>("jointName"), config, "jointName");
    link_ = find_link(r, model_, config.get<std::string>("linkName"), config, "linkName");
    const auto& jd = r.get<c::JointData>(joint_);
    parent_ = jd.parent != ecs::kNullEntity ? jd.parent : link_;
    axis_J_ = jd.axis.xyz;
    // The joint frame in the rotor link, from the world poses of the load (the joint's Pose
    // component is relative to its parent entity, not to the rotor link).
    const auto* X_WJ = r.try_get<c::WorldPose>(joint_);
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (X_WJ && X_WL) X_LJ_ = X_WL->value.Inverse() * X_WJ->value;
    if (const auto* in = r.try_get<c::Inertial>(link_)) com_L_ = in->value.Pose().Pos();
    const Element* a = config.child("actuator_number");
    const Element* m = config.child("motorNumber");
    if (!a && !m) throw Error(where_, "GenericMotorModel needs <actuator_number>");
    if (!a)
      spdlog::warn("{}: <motorNumber> is deprecated, please use <actuator_number>", m->where());
    const int n = (a ? a : m)->value<int>();
    if (n < 0 || n > 63) {
      throw Error((a ? a : m)->where(), fmt::format("actuator number must be 0..63, found {}", n));
    }
    index_ = static_cast<std::size_t>(n);
    claim_unique_plugin(r, model_, fmt::format("a motor with actuator number {}", n), config);
    const auto dir = config.get<std::string>("turningDirection");
    if (dir != "cw" && dir != "ccw") {
      throw Error(config.child("turningDirection")->where(),
                  fmt::format("<turningDirection> must be 'cw' or 'ccw', found '{}'", dir));
    }
    direction_ = dir == "ccw" ? 1 : -1;
    const auto method = config.get_or<std::string>("controlMethod", "rpm");
    if (method != "rpm" && method != "duty_cycle") {
      throw Error(config.child("controlMethod")->where(),
                  fmt::format("<controlMethod> must be 'rpm' or 'duty_cycle', found '{}'", method));
    }
    duty_cycle_ = method == "duty_cycle";
    if (duty_cycle_) {
      min_command_ = get_finite(config, "minCommand");
      max_duty_ = get_finite(config, "maxDutyCycle");
      min_duty_ = get_finite(config, "minDutyCycle");
      if (max_duty_ <= min_duty_) {
        throw Error(where_, fmt::format("<maxDutyCycle> {} must exceed <minDutyCycle> {}",
                                        max_duty_, min_duty_));
      }
    } else {
      min_command_ = get_finite_or(config, "minCommand", 0.0);
    }
    const auto type = config.get_or<std::string>("motorType", "velocity");
    if (type == "force_polynomial") {
      polynomial_ = true;
      const Element* pt = config.child("positiveThrustPolynomial");
      if (!pt) throw Error(where_, "motorType force_polynomial needs <positiveThrustPolynomial>");
      pos_thrust_ = parse_polynomial(*pt);
      if (pos_thrust_.size() < 4) {
        throw Error(pt->where(), "<positiveThrustPolynomial> needs at least 4 coefficients");
      }
      const Element* nt = config.child("negativeThrustPolynomial");
      neg_thrust_ = nt ? parse_polynomial(*nt) : pos_thrust_;
      const Element* pq = config.child("positiveTorquePolynomial");
      pos_torque_ = pq ? parse_polynomial(*pq) : std::vector<double>(6, 0.0);
      const Element* nq = config.child("negativeTorquePolynomial");
      neg_torque_ = nq ? parse_polynomial(*nq) : pos_torque_;
    } else if (type != "velocity") {
      throw Error(config.child("motorType")->where(),
                  fmt::format("<motorType> '{}': PX4's plugin implements only 'velocity' and "
                              "'force_polynomial' (it applies nothing for the others)",
                              type));
    }
    k_drag_ = get_finite_or(config, "rotorDragCoefficient", 1.0e-4);
    k_roll_ = get_finite_or(config, "rollingMomentCoefficient", 1.0e-6);
    max_speed_ = get_finite_or(config, "maxRotVelocity", 838.0);
    k_force_ = get_finite_or(config, "motorConstant", 8.54858e-06);
    k_moment_ = get_finite_or(config, "momentConstant", 0.016);
    bidirectional_ = config.get_or<int>("bidirectionalMotor", 0);
    tau_up_ = get_positive_or(config, "timeConstantUp", 1.0 / 80);
    tau_down_ = get_positive_or(config, "timeConstantDown", 1.0 / 40);
    slowdown_ = get_positive_or(config, "rotorVelocitySlowdownSim", 10.0);
    const std::string sub = config.get_or<std::string>("commandSubTopic", "");
    reject_unknown_parameters(config, "GenericMotorModel", kParams);

    const std::string topic = resolve_topic(ns, sub);
    if (auto* t = r.try_get<c::ActuatorCommandTopic>(model_); t && t->topic != topic) {
      throw Error(where_, fmt::format("motors of model '{}' listen on different topics ('{}' and "
                                      "'{}'); Kestrel keeps one ActuatorCommands per model",
                                      model_name_, t->topic, topic));
    }
    r.set(model_, c::ActuatorCommandTopic{topic});
    ensure<c::ActuatorCommands>(r, model_);
    ensure<c::ExternalWorldWrenchCmd>(r, link_);
    ensure<c::ExternalWorldWrenchCmd>(r, parent_);
    r.set(joint_, c::JointVelocityCmd{{0.0}});
    world_ = world_of(r, model_);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    const double dt = to_seconds(info.dt);
    // The latest command (PX4 keeps its reference until another arrives; re-reading the same
    // command gives the same reference).
    if (const auto* cmd = r.try_get<c::ActuatorCommands>(model_); cmd && !cmd->velocity.empty()) {
      if (index_ >= cmd->velocity.size()) {
        throw actuator_out_of_range(where_, model_name_, static_cast<int>(index_),
                                    cmd->velocity.size(), "the model receives (ActuatorCommands)");
      }
      const double v = cmd->velocity[index_];
      if (!std::isfinite(v)) {
        throw Error(r.describe(model_),
                    fmt::format("ActuatorCommands velocity[{}] is {} (not finite)", index_, v));
      }
      if (!polynomial_ || !duty_cycle_) {
        reference_ = std::min(v, max_speed_);
      } else if (v >= min_duty_) {
        const double span = max_duty_ - min_duty_;
        reference_ =
            (v - (min_duty_ + span * bidirectional_ / 2.0)) / (span - span * bidirectional_ / 2.0);
      }
    }
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (!X_WL) return;
    if (polynomial_) {
      double thrust = 0, torque = 0;
      if (reference_ >= min_command_) {
        thrust = polynomial(pos_thrust_, reference_);
        torque = polynomial(pos_torque_, reference_);
      } else if (reference_ <= -min_command_) {
        thrust = -polynomial(neg_thrust_, std::abs(reference_));
        torque = -polynomial(neg_torque_, std::abs(reference_));
      }
      // PX4 applies both along the link's z at its centre of mass (the "torque" too).
      add_force_at_com(r, X_WL->value, X_WL->value.Rot().RotateVector({0, 0, thrust + torque}));
      r.get<c::JointVelocityCmd>(joint_).data.assign(1, reference_ / slowdown_);
      return;
    }
    velocity_mode(r, X_WL->value, dt);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    reference_ = 0;
    filtered_ = 0;
  }

 private:
  void add_force_at_com(ecs::Registry& r, const Pose3d& X_WL, const Vector3d& f) {
    auto& w = r.get<c::ExternalWorldWrenchCmd>(link_);
    w.force += f;
    w.torque += X_WL.Rot().RotateVector(com_L_).Cross(f);
  }

  void velocity_mode(ecs::Registry& r, const Pose3d& X_WL, double dt) {
    double joint_speed = 0;
    if (const auto* jv = r.try_get<c::JointVelocity>(joint_); jv && !jv->data.empty()) {
      joint_speed = jv->data[0];
    }
    const double w = joint_speed * slowdown_;
    const double sign = (w > 0) - (w < 0);
    const double thrust = direction_ * sign * w * w * k_force_;
    add_force_at_com(r, X_WL, X_WL.Rot().RotateVector({0, 0, thrust}));
    const Vector3d axis_W = (X_WL * X_LJ_).Rot().RotateVector(axis_J_);
    Vector3d v_rel = -air_velocity(r, world_);
    if (const auto* v = r.try_get<c::WorldLinearVelocity>(link_)) v_rel += v->value;
    const Vector3d v_perp = v_rel - axis_W * v_rel.Dot(axis_W);
    add_force_at_com(r, X_WL, v_perp * (-std::abs(w) * k_drag_));
    // Drag torque about the rotor's z (expressed through the parent, as PX4), rolling moment.
    const Vector3d torque_W = X_WL.Rot().RotateVector({0, 0, -direction_ * thrust * k_moment_}) -
                              v_perp * (std::abs(w) * k_roll_);
    r.get<c::ExternalWorldWrenchCmd>(parent_).torque += torque_W;
    const double alpha = std::exp(-dt / (reference_ > filtered_ ? tau_up_ : tau_down_));
    filtered_ = alpha * filtered_ + (1 - alpha) * reference_;
    r.get<c::JointVelocityCmd>(joint_).data.assign(1, direction_ * filtered_ / slowdown_);
  }

  ecs::Entity model_ = ecs::kNullEntity, joint_ = ecs::kNullEntity, link_ = ecs::kNullEntity,
              parent_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  std::string where_, model_name_;
  std::size_t index_ = 0;
  double direction_ = -1;
  bool duty_cycle_ = false, polynomial_ = false;
  double min_command_ = 0, max_duty_ = 0, min_duty_ = 0;
  int bidirectional_ = 0;
  std::vector<double> pos_thrust_, neg_thrust_, pos_torque_, neg_torque_;
  double k_drag_ = 0, k_roll_ = 0, max_speed_ = 0, k_force_ = 0, k_moment_ = 0;
  double tau_up_ = 0, tau_down_ = 0, slowdown_ = 10;
  Pose3d X_LJ_;
  Vector3d axis_J_ = Vector3d::UnitZ, com_L_;
  double reference_ = 0, filtered_ = 0;
};

}  // namespace

std::unique_ptr<System> make_generic_motor_model() { return std::make_unique<GenericMotorModel>(); }

}  // namespace kestrel::systems
