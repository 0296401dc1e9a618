// MulticopterMotorModel: one rotor, computing what gz-sim's MulticopterMotorModel computes (see
// README.md for the equations and the deliberate differences). Per step (PreUpdate, before
// physics): command → reference speed; wrench from the rotor joint's measured speed; first-order
// filter of the reference → rotor joint velocity command and RotorVelocities.

#include "multicopter_motor_model/multicopter_motor_model.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

// Gazebo's defaults for the optional parameters.
constexpr double kDefaultTimeConstantUp = 1.0 / 80.0;        // [s]
constexpr double kDefaultTimeConstantDown = 1.0 / 40.0;      // [s]
constexpr double kDefaultMaxRotVelocity = 838.0;             // [rad/s]
constexpr double kDefaultMotorConstant = 8.54858e-06;        // [N/(rad/s)²]
constexpr double kDefaultMomentConstant = 0.016;             // [m]
constexpr double kDefaultRotorDragCoefficient = 1.0e-4;      // [N/(m/s)/(rad/s)]
constexpr double kDefaultRollingMomentCoefficient = 1.0e-6;  // [N·m/(m/s)/(rad/s)]
constexpr double kDefaultRotorVelocitySlowdownSim = 10.0;
constexpr int kMaxActuators = 64;
// Kestrel's opt-in axial-inflow thrust loss (PX4's gazebo-classic motor model), [m/s].
constexpr const char* kThrustLossParam = "kestrel:thrustLossAirspeed";

constexpr const char* kParams =
    "robotNamespace, jointName, linkName, actuator_number, motorNumber, turningDirection, "
    "timeConstantUp, timeConstantDown, maxRotVelocity, motorConstant, momentConstant, "
    "rotorDragCoefficient, rollingMomentCoefficient, rotorVelocitySlowdownSim, motorType, "
    "commandSubTopic, motorSpeedPubTopic";

template <class T>
T& ensure(ecs::Registry& r, ecs::Entity e) {
  if (T* t = r.try_get<T>(e)) return *t;
  return r.add<T>(e);
}

// <actuator_number>, or Gazebo's deprecated spelling <motorNumber> (Fortress reads only that
// one; gz-sim main prefers actuator_number and warns on motorNumber).
int read_actuator_number(const Element& config) {
  const Element* a = config.child("actuator_number");
  const Element* m = config.child("motorNumber");
  if (a && m) {
    throw Error(m->where(), fmt::format("<motorNumber> (deprecated) and <actuator_number> ({}) "
                                        "both given: keep only <actuator_number>",
                                        a->where()));
  }
  if (!a && !m) {
    throw Error(config.where(),
                "<plugin> is missing required parameter <actuator_number> (or "
                "its deprecated Gazebo spelling <motorNumber>)");
  }
  if (m) {
    spdlog::warn("{}: <motorNumber> is deprecated, please use <actuator_number>", m->where());
  }
  const Element& e = a ? *a : *m;
  const int n = e.value<int>();
  if (n < 0 || n >= kMaxActuators) {
    throw Error(e.where(),
                fmt::format("<{}> must be in 0..{}, found {}", e.name(), kMaxActuators - 1, n));
  }
  return n;
}

// Model-local: its PreUpdate touches its model's rotor, link and commands, and reads the world's
// wind (README.md, "Threads").
class MulticopterMotorModel final : public System,
                                    public ISystemConfigure,
                                    public ISystemPreUpdate,
                                    public ISystemModelLocal {
 public:
  int priority() const override { return priority::kPrePhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "MulticopterMotorModel must be declared inside a <model>");
    }
    model_ = entity;
    // Gazebo's default when absent: the model's name (so one model file serves many vehicles).
    const auto ns = config.get_or<std::string>("robotNamespace", r.get<c::Name>(model_).value);
    const auto joint_name = config.get<std::string>("jointName");
    const auto link_name = config.get<std::string>("linkName");
    const int actuator = read_actuator_number(config);
    index_ = static_cast<std::size_t>(actuator);
    const auto dir = config.get<std::string>("turningDirection");
    if (dir == "ccw") {
      direction_ = 1;
    } else if (dir == "cw") {
      direction_ = -1;
    } else {
      throw Error(config.child("turningDirection")->where(),
                  fmt::format("<turningDirection> must be 'cw' or 'ccw', found '{}'", dir));
    }
    const auto type = config.get_or<std::string>("motorType", "velocity");
    if (type != "velocity") {
      throw Error(config.child("motorType")->where(),
                  fmt::format("<motorType> '{}' is not supported: Kestrel (like Gazebo, which "
                              "reports it and applies no force) implements only 'velocity'",
                              type));
    }
    tau_up_ = get_positive_or(config, "timeConstantUp", kDefaultTimeConstantUp);
    tau_down_ = get_positive_or(config, "timeConstantDown", kDefaultTimeConstantDown);
    max_speed_ = get_positive_or(config, "maxRotVelocity", kDefaultMaxRotVelocity);
    k_force_ = get_positive_or(config, "motorConstant", kDefaultMotorConstant);
    k_moment_ = get_positive_or(config, "momentConstant", kDefaultMomentConstant, true);
    k_drag_ = get_positive_or(config, "rotorDragCoefficient", kDefaultRotorDragCoefficient, true);
    k_roll_ =
        get_positive_or(config, "rollingMomentCoefficient", kDefaultRollingMomentCoefficient, true);
    slowdown_ =
        get_positive_or(config, "rotorVelocitySlowdownSim", kDefaultRotorVelocitySlowdownSim);
    // Gazebo's default sub-topic is empty: the motors listen on "/NS".
    const auto cmd_topic = config.get_or<std::string>("commandSubTopic", "");
    const auto speed_topic = config.get_or<std::string>("motorSpeedPubTopic", "");
    thrust_loss_speed_ = get_positive_or(config, kThrustLossParam, 0.0, true);
    reject_unknown_parameters(config, "MulticopterMotorModel", kParams);

    link_ = find_link(r, model_, link_name, config, "linkName");
    joint_ = find_joint(r, model_, joint_name, config, "jointName");
    // Torques act on the link the rotor is mounted on (the joint's parent).
    body_ = link_;
    if (const auto* jd = r.try_get<c::JointData>(joint_)) {
      if (jd->child != link_) {
        throw Error(config.child("jointName")->where(),
                    fmt::format("<jointName> '{}' does not carry <linkName> '{}' (its child is "
                                "'{}')",
                                joint_name, link_name, jd->child_name));
      }
      if (jd->type != c::JointType::kRevolute && jd->type != c::JointType::kContinuous) {
        throw Error(
            config.child("jointName")->where(),
            fmt::format("<jointName> '{}' must be a revolute or continuous joint", joint_name));
      }
      if (jd->parent != ecs::kNullEntity) body_ = jd->parent;
      axis_J_ = jd->axis.xyz;
    }
    // The joint frame in the rotor link (both world poses are those of the load).
    const auto* X_WJ = r.try_get<c::WorldPose>(joint_);
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (X_WJ && X_WL) X_LJ_ = X_WL->value.Inverse() * X_WJ->value;
    if (const auto* in = r.try_get<c::Inertial>(link_)) com_L_ = in->value.Pose().Pos();
    world_ = model_;
    while (world_ != ecs::kNullEntity && !r.has<c::World>(world_)) world_ = r.parent(world_);

    // Model-level components shared by all rotors of the model.
    where_ = config.where();
    model_name_ = r.scoped_name(model_);
    auto& plugins = model_plugins(r, model_);
    if (plugins.motor_joint.size() <= index_) {
      plugins.motor_joint.resize(index_ + 1);
      plugins.motor_where.resize(index_ + 1);
    }
    if (!plugins.motor_joint[index_].empty()) {
      const Element* n = config.child("actuator_number");
      if (!n) n = config.child("motorNumber");
      throw Error(n->where(),
                  fmt::format("<{}> {} of model '{}' is already used by the motor "
                              "of joint '{}' ({})",
                              n->name(), actuator, model_name_, plugins.motor_joint[index_],
                              plugins.motor_where[index_]));
    }
    // A velocity controller configured before (it normally is: priority −129) says which rotor
    // it commands at each index; it checks the motors configured before it itself.
    const std::string joint_local = r.get<c::Name>(joint_).value;
    check_motor_against_controller(plugins, model_name_, index_, joint_local, where_);
    plugins.motor_joint[index_] = joint_local;
    plugins.motor_where[index_] = where_;
    const std::string resolved = resolve_topic(ns, cmd_topic);
    if (auto* t = r.try_get<c::ActuatorCommandTopic>(model_); t && t->topic != resolved) {
      throw Error(config.child("commandSubTopic") ? config.child("commandSubTopic")->where()
                                                  : config.where(),
                  fmt::format("motors of model '{}' listen on different topics ('{}' and '{}'); "
                              "Kestrel keeps one ActuatorCommands per model",
                              r.scoped_name(model_), t->topic, resolved));
    }
    r.set(model_, c::ActuatorCommandTopic{resolved});
    ensure<c::ActuatorCommands>(r, model_);
    auto grow = [&](std::vector<double>& v) { v.resize(std::max(v.size(), index_ + 1), 0.0); };
    grow(ensure<c::RotorVelocities>(r, model_).velocity);
    grow(ensure<c::RotorShaftPower>(r, model_).watts);
    auto& vt = ensure<c::RotorVelocityTopic>(r, model_);
    vt.topic = resolve_topic(ns, "motor_speed");
    vt.per_actuator.resize(std::max(vt.per_actuator.size(), index_ + 1));
    vt.per_actuator[index_] = speed_topic.empty() ? "" : resolve_topic(ns, speed_topic);
    ensure<c::ExternalWorldWrenchCmd>(r, body_);
    r.set(joint_, c::JointVelocityCmd{{0.0}});
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    const double dt = to_seconds(info.dt);
    if (info.dt != dt_) {
      dt_ = info.dt;
      alpha_up_ = std::exp(-dt / tau_up_);
      alpha_down_ = std::exp(-dt / tau_down_);
    }
    // Reference speed: the last command, limited above by maxRotVelocity (Gazebo sets no lower
    // limit: a negative command spins the rotor backwards and reverses its thrust). Gazebo keeps
    // the last command's reference until another arrives, as ActuatorCommands does.
    refresh(r);
    double reference = 0;
    if (const auto* cmd = refs_.commands; cmd && !cmd->velocity.empty()) {
      // No commands yet (nothing connected) leaves the rotor at rest; commands that stop short
      // of this rotor are a mismatch between the motors and whatever commands them.
      if (index_ >= cmd->velocity.size()) {
        throw actuator_out_of_range(where_, model_name_, static_cast<int>(index_),
                                    cmd->velocity.size(), "the model receives (ActuatorCommands)");
      }
      reference = cmd->velocity[index_];
      if (!std::isfinite(reference)) {
        throw Error(
            r.describe(model_),
            fmt::format("ActuatorCommands velocity[{}] is {} (not finite)", index_, reference));
      }
      reference = std::min(reference, max_speed_);
    }
    // Kestrel's faults: a failed rotor or an empty battery is unpowered (reference 0); a partly
    // failed one keeps its speed and loses thrust.
    double efficiency = 1.0;
    if (const auto* f = refs_.faults; f && index_ < f->efficiency.size()) {
      efficiency = std::clamp(f->efficiency[index_], 0.0, 1.0);
    }
    if (const auto* b = refs_.battery; b && b->empty) efficiency = 0;
    if (efficiency <= 0) reference = 0;

    // As Gazebo: the wrench comes from the speed the physics gave the rotor joint in the last
    // step (times the slowdown), then the filter moves the commanded speed on.
    double joint_speed = 0;
    if (const auto* jv = refs_.joint_velocity; jv && !jv->data.empty()) {
      joint_speed = jv->data[0];
    }
    if (!aliasing_reported_ && std::abs(joint_speed) / (2 * M_PI) > 1 / (2 * dt)) {
      aliasing_reported_ = true;
      spdlog::warn(
          "{}: MulticopterMotorModel of model '{}': rotor joint at {:.0f} rad/s aliases "
          "at a {} s step; raise <rotorVelocitySlowdownSim> or shorten the step",
          where_, model_name_, std::abs(joint_speed), dt);
    }
    apply_wrench(joint_speed * slowdown_, efficiency);

    auto& speeds = refs_.speeds->velocity;
    const double w = speeds[index_];
    const double alpha = reference > w ? alpha_up_ : alpha_down_;
    const double w_next = alpha * w + (1 - alpha) * reference;
    speeds[index_] = w_next;
    refs_.joint_cmd->data.assign(1, direction_ * w_next / slowdown_);
  }

 private:
  // Thrust, rotor drag, drag torque and rolling moment of the rotor spinning at `w` [rad/s]
  // (signed, about the joint axis), added to the wrench of the body the rotor is mounted on
  // (world frame, about the body's origin).
  void apply_wrench(double w, double efficiency) {
    const auto* X_WL = refs_.X_WL;
    const auto* X_WB = refs_.X_WB;
    if (!X_WL || !X_WB) return;
    const auto& rot_WL = X_WL->value.Rot();
    // Thrust along the rotor link's +z, positive when the rotor turns its own way.
    const double sign = (w > 0) - (w < 0);
    double thrust = efficiency * direction_ * sign * w * w * k_force_;
    const Vector3d z_W = rot_WL.RotateVector(Vector3d::UnitZ);
    // Air-relative velocity of the rotor link origin; v⊥: its part perpendicular to the joint axis.
    Vector3d air_W;
    if (const auto* wind = refs_.wind) air_W = wind->linear_velocity;
    if (const auto* gust = refs_.gust) air_W += gust->linear_velocity;
    Vector3d v_rel_W = -air_W;
    if (const auto* v = refs_.v_WL) v_rel_W += v->value;
    const Vector3d axis_W = (X_WL->value * X_LJ_).Rot().RotateVector(axis_J_);
    const Vector3d v_perp_W = v_rel_W - axis_W * v_rel_W.Dot(axis_W);
    if (thrust_loss_speed_ > 0) {
      thrust *= std::clamp(1.0 - axis_W.Dot(v_rel_W) / thrust_loss_speed_, 0.0, 1.0);
    }
    const double speed = std::abs(w);
    const Vector3d force_W = z_W * thrust - v_perp_W * (speed * k_drag_);
    const Vector3d torque_W =
        z_W * (-direction_ * thrust * k_moment_) - v_perp_W * (speed * k_roll_);
    // Gazebo applies the forces at the rotor link's centre of mass; the rotor joint's velocity
    // is imposed, so applying them to the body at that point is the same.
    const Vector3d p_W = X_WL->value.Pos() + rot_WL.RotateVector(com_L_);
    auto& wrench = *refs_.wrench;
    wrench.force += force_W;
    wrench.torque += torque_W + (p_W - X_WB->value.Pos()).Cross(force_W);
    refs_.power->watts[index_] = std::abs(k_moment_ * thrust * w);
  }

  // The components a step reads and writes, looked up again only when the registry's layout
  // changed (Registry::layout_epoch: until then the pointers stay valid). A swarm's thousands of
  // rotors would otherwise pay a dozen lookups each per step. The components configure() made
  // sure of are demanded (get throws naming the entity when one was removed since).
  struct Refs {
    const c::ActuatorCommands* commands = nullptr;
    const c::RotorFaults* faults = nullptr;
    const c::Battery* battery = nullptr;
    const c::JointVelocity* joint_velocity = nullptr;
    const c::WorldPose* X_WL = nullptr;
    const c::WorldPose* X_WB = nullptr;
    const c::Wind* wind = nullptr;
    const c::WindGust* gust = nullptr;
    const c::WorldLinearVelocity* v_WL = nullptr;
    c::ExternalWorldWrenchCmd* wrench = nullptr;
    c::RotorShaftPower* power = nullptr;
    c::RotorVelocities* speeds = nullptr;
    c::JointVelocityCmd* joint_cmd = nullptr;
  };
  void refresh(ecs::Registry& r) {
    if (refs_valid_ && refs_epoch_ == r.layout_epoch()) return;
    refs_.commands = r.try_get<c::ActuatorCommands>(model_);
    refs_.faults = r.try_get<c::RotorFaults>(model_);
    refs_.battery = r.try_get<c::Battery>(model_);
    refs_.joint_velocity = r.try_get<c::JointVelocity>(joint_);
    refs_.X_WL = r.try_get<c::WorldPose>(link_);
    refs_.X_WB = r.try_get<c::WorldPose>(body_);
    refs_.wind = r.try_get<c::Wind>(world_);
    refs_.gust = r.try_get<c::WindGust>(world_);
    refs_.v_WL = r.try_get<c::WorldLinearVelocity>(link_);
    refs_.wrench = &r.get<c::ExternalWorldWrenchCmd>(body_);
    refs_.power = &r.get<c::RotorShaftPower>(model_);
    refs_.speeds = &r.get<c::RotorVelocities>(model_);
    refs_.joint_cmd = &r.get<c::JointVelocityCmd>(joint_);
    refs_valid_ = true;
    refs_epoch_ = r.layout_epoch();
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity, joint_ = ecs::kNullEntity,
              body_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  std::size_t index_ = 0;
  std::string where_, model_name_;  // the <plugin>'s FILE:LINE; the model's scoped name
  double direction_ = 1;            // +1 ccw, −1 cw (about the rotor axis, link z)
  double tau_up_ = 0, tau_down_ = 0, max_speed_ = 0, k_force_ = 0, k_moment_ = 0, k_drag_ = 0,
         k_roll_ = 0, slowdown_ = 1, thrust_loss_speed_ = 0;
  ignition::math::Pose3d X_LJ_;        // joint frame in the rotor link frame
  Vector3d axis_J_ = Vector3d::UnitZ;  // rotor joint axis in the joint frame
  Vector3d com_L_;                     // rotor link's centre of mass in its frame [m]
  Duration dt_{0};
  double alpha_up_ = 0, alpha_down_ = 0;  // e^(−dt/τ)
  bool aliasing_reported_ = false;
  Refs refs_;
  bool refs_valid_ = false;
  std::uint64_t refs_epoch_ = 0;
};

}  // namespace

std::unique_ptr<System> make_multicopter_motor_model() {
  return std::make_unique<MulticopterMotorModel>();
}

}  // namespace kestrel::systems
