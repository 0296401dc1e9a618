// FixedWingControl: the setpoint (components::FixedWingSetpoint) → total energy control (throttle
// from the total-energy rate error, pitch attitude from the energy-balance rate error), bank angle
// from the course error → attitude and rate loops → control surface positions (an Actuators
// entry read by JointPositionControllers), propeller speed (ActuatorCommands) and brakes.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/fluid.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "fixed_wing_control/fixed_wing_control.h"
#include "kestrel/components/fixed_wing.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;
using Mode = c::FixedWingSetpoint::Mode;

constexpr const char* kParams =
    "comLinkName, servo_topic, left_aileron, right_aileron, elevator, rudder, max_deflection, "
    "motor_actuator, max_rotor_velocity, thrust_topic, max_thrust, lift_rotor, "
    "blend_airspeed_start, blend_airspeed_end, brake_joint, brake_gain, brake_torque, "
    "reference_airspeed, trim_throttle, throttle_ff, throttle_p, throttle_i, trim_pitch, "
    "pitch_p, pitch_i, min_pitch, max_pitch, height_gain, speed_gain, max_climb_rate, "
    "max_sink_rate, max_acceleration, course_gain, max_bank, roll_p, roll_d, pitch_att_p, "
    "pitch_rate_d, yaw_rate_d, heading_gain";

constexpr double kG = 9.80665;
constexpr double kMinAirspeed = 3.0;  // below it the energy loops use this speed [m/s]
constexpr double kSpeedFilter = 0.2;  // time constant of the airspeed-rate estimate [s]

double wrap_pi(double a) { return std::remainder(a, 2 * M_PI); }

class FixedWingControl final : public System,
                               public ISystemConfigure,
                               public ISystemPreUpdate,
                               public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 1; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "FixedWingControl must be declared inside a <model>");
    }
    model_ = entity;
    where_ = config.where();
    claim_unique_plugin(r, model_, "FixedWingControl", config);
    link_ = find_link(r, model_, config.get<std::string>("comLinkName"), config, "comLinkName");
    topic_ = config.get<std::string>("servo_topic");
    if (topic_.empty()) throw Error(config.where(), "FixedWingControl: <servo_topic> is empty");
    left_ = actuator(config, "left_aileron", true);
    right_ = actuator(config, "right_aileron", true);
    elevator_ = actuator(config, "elevator", true);
    rudder_ = actuator(config, "rudder", false);
    for (int a : {left_, right_, elevator_, rudder_}) channels_ = std::max(channels_, a + 1);
    if (left_ == right_ || left_ == elevator_ || right_ == elevator_ ||
        (rudder_ >= 0 && (rudder_ == left_ || rudder_ == right_ || rudder_ == elevator_))) {
      throw Error(config.where(), "FixedWingControl: two control surfaces share one actuator");
    }
    max_defl_ = get_positive_or(config, "max_deflection", 0.5);
    // Propulsion: a MulticopterMotorModel (motor_actuator) or a Thruster (thrust_topic).
    if (config.has("thrust_topic") == config.has("motor_actuator")) {
      throw Error(config.where(),
                  "FixedWingControl: give exactly one of <motor_actuator> (with "
                  "<max_rotor_velocity>) and <thrust_topic> (with <max_thrust>)");
    }
    if (config.has("motor_actuator")) {
      motor_ = actuator(config, "motor_actuator", true);
      max_rotor_ = get_positive(config, "max_rotor_velocity");
    } else {
      thrust_topic_ = config.get<std::string>("thrust_topic");
      max_thrust_ = get_positive(config, "max_thrust");
    }
    // VTOL: the lift rotors' commands (written by a multicopter controller that runs first)
    // scaled down as the airspeed grows.
    for (const Element* e : config.children("lift_rotor")) {
      const int a = e->value<int>();
      if (a < 0 || a == motor_) {
        throw Error(e->where(),
                    "FixedWingControl: a <lift_rotor> must be an actuator index >= 0 "
                    "other than <motor_actuator>");
      }
      lift_.push_back(static_cast<std::size_t>(a));
    }
    if (!lift_.empty()) {
      blend_start_ = get_positive(config, "blend_airspeed_start");
      blend_end_ = get_positive(config, "blend_airspeed_end");
      if (blend_end_ <= blend_start_) {
        throw Error(config.where(),
                    "FixedWingControl: <blend_airspeed_end> must be above "
                    "<blend_airspeed_start>");
      }
    }
    for (const Element* b : config.children("brake_joint")) {
      const ecs::Entity j = find_joint(r, model_, b->value<std::string>(), *b, "brake_joint");
      if (joint_axes(r, j) != 1) {
        throw Error(b->where(), "FixedWingControl: a <brake_joint> must have one axis");
      }
      brakes_.push_back(j);
    }
    brake_gain_ = get_positive_or(config, "brake_gain", 0.05);
    brake_torque_ = get_positive_or(config, "brake_torque", 0.1);
    g_.v_ref = get_positive_or(config, "reference_airspeed", 12.0);
    g_.trim_throttle = get_positive_or(config, "trim_throttle", 0.3, true);
    g_.throttle_ff = get_positive_or(config, "throttle_ff", 1.0, true);
    g_.throttle_p = get_positive_or(config, "throttle_p", 1.0, true);
    g_.throttle_i = get_positive_or(config, "throttle_i", 0.3, true);
    g_.trim_pitch = get_finite_or(config, "trim_pitch", 0.05);
    g_.pitch_p = get_positive_or(config, "pitch_p", 1.0, true);
    g_.pitch_i = get_positive_or(config, "pitch_i", 0.3, true);
    g_.min_pitch = get_finite_or(config, "min_pitch", -0.3);
    g_.max_pitch = get_finite_or(config, "max_pitch", 0.35);
    if (g_.min_pitch >= g_.max_pitch) {
      throw Error(config.where(), "FixedWingControl: <min_pitch> must be below <max_pitch>");
    }
    g_.height_gain = get_positive_or(config, "height_gain", 0.4);
    g_.speed_gain = get_positive_or(config, "speed_gain", 0.5);
    g_.max_climb = get_positive_or(config, "max_climb_rate", 3.0);
    g_.max_sink = get_positive_or(config, "max_sink_rate", 3.0);
    g_.max_acc = get_positive_or(config, "max_acceleration", 2.0);
    g_.course_gain = get_positive_or(config, "course_gain", 1.0);
    g_.max_bank = get_positive_or(config, "max_bank", 0.6);
    if (g_.max_bank >= 1.3) {
      throw Error(config.where(), "FixedWingControl: <max_bank> must be below 1.3 rad");
    }
    g_.roll_p = get_positive_or(config, "roll_p", 2.5, true);
    g_.roll_d = get_positive_or(config, "roll_d", 0.15, true);
    g_.pitch_att_p = get_positive_or(config, "pitch_att_p", 1.0, true);
    g_.pitch_rate_d = get_positive_or(config, "pitch_rate_d", 0.2, true);
    g_.yaw_rate_d = get_positive_or(config, "yaw_rate_d", 0.3, true);
    g_.heading_gain = get_positive_or(config, "heading_gain", 1.0, true);
    reject_unknown_parameters(config, "FixedWingControl", kParams);
    if (!r.has<c::FixedWingSetpoint>(model_)) r.add<c::FixedWingSetpoint>(model_);
    if (motor_ >= 0) {
      auto* cmd = r.try_get<c::ActuatorCommands>(model_);
      if (!cmd) cmd = &r.add<c::ActuatorCommands>(model_);
      if (cmd->velocity.size() <= static_cast<std::size_t>(motor_)) {
        cmd->velocity.resize(static_cast<std::size_t>(motor_) + 1, 0.0);
      }
    }
    servo_.assign(static_cast<std::size_t>(channels_), 0.0);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    run_ = {};
    entries_.clear();
    thrust_entries_.clear();
    std::fill(servo_.begin(), servo_.end(), 0.0);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    if (entries_.empty()) find_servo_entries(r);
    const auto* X = r.try_get<c::WorldPose>(link_);
    const auto* V = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* W = r.try_get<c::WorldAngularVelocity>(link_);
    if (!X || !V || !W) return;
    const double dt = to_seconds(info.dt);
    const auto& sp = r.get<c::FixedWingSetpoint>(model_);
    const auto& R = X->value.Rot();
    const double phi = R.Roll(), theta = -R.Pitch(), psi = R.Yaw();  // theta: nose up
    const Vector3d w = R.RotateVectorReverse(W->value);
    const double p = w.X(), q = -w.Y(), yaw_rate = w.Z();  // q: nose-up rate
    const Vector3d air = V->value - air_velocity(r, world_of(r, model_));
    const double va = air.Length();
    if (!run_.started) {
      run_.va = va;
      run_.started = true;
    }
    // Airspeed rate, low-pass filtered finite difference.
    const double raw = (va - run_.va) / dt;
    run_.va = va;
    run_.va_dot += (raw - run_.va_dot) * std::min(1.0, dt / kSpeedFilter);
    // Control effectiveness grows with dynamic pressure: the loops' gains are scheduled by
    // (V_ref / V)², limited to [0.25, 4].
    const double sched = std::clamp(std::pow(g_.v_ref / std::max(va, 1e-3), 2), 0.25, 4.0);
    const double vs = std::max(va, kMinAirspeed);

    double throttle = 0, aileron = 0, elevator = 0, rudder = 0;
    bool brake = false;
    double phi_cmd = 0;
    switch (sp.mode) {
      case Mode::kOff:
        run_.i_throttle = run_.i_pitch = 0;
        break;
      case Mode::kGroundRun:
      case Mode::kRollout: {
        run_.i_throttle = run_.i_pitch = 0;
        throttle = sp.mode == Mode::kGroundRun ? 1.0 : 0.0;
        brake = sp.mode == Mode::kRollout;
        const double theta_cmd = sp.mode == Mode::kGroundRun ? sp.pitch : 0.0;
        elevator = sched * (g_.pitch_att_p * (theta_cmd - theta) - g_.pitch_rate_d * q);
        // Heading along the runway through the rudder (a yaw-rate demand from the heading error).
        const double r_cmd = g_.heading_gain * wrap_pi(sp.course - psi);
        rudder = sched * g_.yaw_rate_d * (r_cmd - yaw_rate);
        break;
      }
      case Mode::kFly: {
        const double h = X->value.Pos().Z(), h_dot = V->value.Z();
        const double h_dot_dem = std::clamp(sp.climb_rate + g_.height_gain * (sp.altitude - h),
                                            -g_.max_sink, g_.max_climb);
        const double v_dot_dem =
            sp.flare ? 0.0
                     : std::clamp(g_.speed_gain * (sp.airspeed - va), -g_.max_acc, g_.max_acc);
        const double gamma_dem = h_dot_dem / vs;
        const double gamma_err = (h_dot_dem - h_dot) / vs;
        const double acc_err = sp.flare ? 0.0 : (v_dot_dem - run_.va_dot) / kG;
        // Total energy rate → throttle (PI plus the feed-forward of the demanded energy rate).
        const double e_total = gamma_err + acc_err;
        if (sp.flare) {
          throttle = 0;
          run_.i_throttle = 0;
        } else {
          const double unclamped = g_.trim_throttle +
                                   g_.throttle_ff * (gamma_dem + v_dot_dem / kG) +
                                   g_.throttle_p * e_total + run_.i_throttle;
          throttle = std::clamp(unclamped, 0.0, 1.0);
          // Integrate unless saturated in the error's direction (anti-windup).
          if ((unclamped < 1.0 || e_total < 0) && (unclamped > 0.0 || e_total > 0)) {
            run_.i_throttle = std::clamp(run_.i_throttle + g_.throttle_i * e_total * dt, -1.0, 1.0);
          }
        }
        // Energy balance rate → pitch attitude (PI plus the demanded flight path angle). The
        // speed weight is 1, and 0 in the flare: e_B = (2 − w)·e_γ − w·e_a.
        const double e_balance = sp.flare ? 2 * gamma_err : gamma_err - acc_err;
        const double theta_raw = g_.trim_pitch + gamma_dem + g_.pitch_p * e_balance + run_.i_pitch;
        const double theta_cmd = std::clamp(theta_raw, g_.min_pitch, g_.max_pitch);
        if ((theta_raw < g_.max_pitch || e_balance < 0) &&
            (theta_raw > g_.min_pitch || e_balance > 0)) {
          run_.i_pitch = std::clamp(run_.i_pitch + g_.pitch_i * e_balance * dt, -0.5, 0.5);
        }
        // Course → bank angle (a coordinated turn: ψ̇ = −g·tan φ / V; a right bank turns
        // clockwise).
        const double vg = std::hypot(V->value.X(), V->value.Y());
        const double track = vg > kMinAirspeed ? std::atan2(V->value.Y(), V->value.X()) : psi;
        const double course_err = wrap_pi(sp.course - track);
        phi_cmd = std::clamp(-std::atan(g_.course_gain * vs * course_err / kG), -g_.max_bank,
                             g_.max_bank);
        if (sp.flare) phi_cmd = 0;
        // Turn rates of a coordinated turn at the current bank (body frame).
        const double turn = kG * std::tan(std::clamp(phi, -1.2, 1.2)) / vs;
        const double q_turn = turn * std::sin(phi), r_turn = -turn * std::cos(phi);
        aileron = sched * (g_.roll_p * (phi_cmd - phi) - g_.roll_d * p);
        elevator = sched * (g_.pitch_att_p * (theta_cmd - theta) - g_.pitch_rate_d * (q - q_turn));
        rudder = sched * g_.yaw_rate_d * (r_turn - yaw_rate);
        break;
      }
    }
    if (sp.mode != Mode::kOff && sp.mode != Mode::kFly) {
      aileron = sched * (g_.roll_p * (0 - phi) - g_.roll_d * p);
    }
    const auto lim = [&](double x) { return std::clamp(x, -max_defl_, max_defl_); };
    servo_[static_cast<std::size_t>(left_)] = lim(aileron);
    servo_[static_cast<std::size_t>(right_)] = lim(-aileron);
    servo_[static_cast<std::size_t>(elevator_)] = lim(elevator);
    if (rudder_ >= 0) servo_[static_cast<std::size_t>(rudder_)] = lim(rudder);
    auto& inputs = r.get<c::TopicInputs>(model_);
    for (std::size_t e : entries_) {
      auto& a = inputs.actuators[e];
      a.position = servo_;
      ++a.count;
    }
    if (motor_ >= 0) {
      auto& motor = r.get<c::ActuatorCommands>(model_);
      // Thrust grows with the square of the rotor speed: throttle is the fraction of full thrust.
      motor.velocity[static_cast<std::size_t>(motor_)] = max_rotor_ * std::sqrt(throttle);
    } else {
      for (std::size_t e : thrust_entries_) {
        auto& d = inputs.real[e];
        d.value = max_thrust_ * throttle;
        ++d.count;
      }
    }
    if (!lift_.empty()) {
      // Lift rotors: the share b of their thrust falls linearly from 1 at blend_airspeed_start
      // to 0 at blend_airspeed_end (speeds × √b), applied to commands written this step.
      auto* cmd = r.try_get<c::ActuatorCommands>(model_);
      const double b = std::clamp((blend_end_ - va) / (blend_end_ - blend_start_), 0.0, 1.0);
      if (cmd && cmd->stamp == info.sim_time) {
        for (std::size_t i : lift_) {
          if (i < cmd->velocity.size()) cmd->velocity[i] *= std::sqrt(b);
        }
      }
    }
    for (ecs::Entity j : brakes_) {
      const auto* jv = r.try_get<c::JointVelocity>(j);
      const double omega = jv && !jv->data.empty() ? jv->data[0] : 0.0;
      joint_command<c::JointForceCmd>(r, j, 1)[0] =
          brake ? -std::clamp(brake_gain_ * omega, -brake_torque_, brake_torque_) : 0.0;
    }
  }

 private:
  static int actuator(const Element& config, std::string_view name, bool required) {
    if (!required && !config.has(name)) return -1;
    const int a = config.get<int>(name);
    if (a < 0) {
      throw Error(config.child(name)->where(),
                  fmt::format("FixedWingControl: <{}> must be an actuator index >= 0", name));
    }
    return a;
  }

  // The Actuators entries on servo_topic (one per JointPositionController listening there).
  void find_servo_entries(ecs::Registry& r) {
    const auto* inputs = r.try_get<c::TopicInputs>(model_);
    if (inputs) {
      for (std::size_t i = 0; i < inputs->actuators.size(); ++i) {
        if (inputs->actuators[i].topic == topic_) entries_.push_back(i);
      }
      for (std::size_t i = 0; i < inputs->real.size(); ++i) {
        if (!thrust_topic_.empty() && inputs->real[i].topic == thrust_topic_) {
          thrust_entries_.push_back(i);
        }
      }
    }
    if (!thrust_topic_.empty() && thrust_entries_.empty()) {
      throw Error(where_, fmt::format("FixedWingControl: no Thruster of {} listens on "
                                      "<thrust_topic> {}",
                                      r.describe(model_), thrust_topic_));
    }
    if (entries_.empty()) {
      throw Error(where_, fmt::format("FixedWingControl: no JointPositionController of {} listens "
                                      "on <servo_topic> {} (use_actuator_msg with that <topic>)",
                                      r.describe(model_), topic_));
    }
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::string where_, topic_;
  int left_ = -1, right_ = -1, elevator_ = -1, rudder_ = -1, motor_ = -1, channels_ = 0;
  double max_defl_ = 0, max_rotor_ = 0, max_thrust_ = 0, brake_gain_ = 0, brake_torque_ = 0;
  double blend_start_ = 0, blend_end_ = 0;
  std::string thrust_topic_;
  std::vector<ecs::Entity> brakes_;
  std::vector<std::size_t> entries_, thrust_entries_, lift_;
  std::vector<double> servo_;
  struct Gains {
    double v_ref, trim_throttle, throttle_ff, throttle_p, throttle_i, trim_pitch, pitch_p, pitch_i,
        min_pitch, max_pitch, height_gain, speed_gain, max_climb, max_sink, max_acc, course_gain,
        max_bank, roll_p, roll_d, pitch_att_p, pitch_rate_d, yaw_rate_d, heading_gain;
  } g_{};
  struct Run {
    bool started = false;
    double va = 0, va_dot = 0, i_throttle = 0, i_pitch = 0;
  } run_;
};

}  // namespace

std::unique_ptr<System> make_fixed_wing_control() { return std::make_unique<FixedWingControl>(); }

}  // namespace kestrel::systems
