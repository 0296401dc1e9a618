// LinearBattery: gz-sim's LinearBatteryPlugin (open-circuit voltage linear in the state of
// charge, an internal resistance), with a load = constant power + rotor shaft power / motor
// efficiency. Per step (after the motors):
//   drain commands / joint commands → (while draining or charging) current P / V − charging
//   current → smoothed current → charge → voltage → Battery → recharge full / soc_threshold.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "multicopter_control/multicopter_control.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kParams =
    "battery_name, voltage, open_circuit_voltage_constant_coef, "
    "open_circuit_voltage_linear_coef, initial_charge, capacity, resistance, "
    "smooth_current_tau, power_load, motor_efficiency, topic, fix_issue_225, "
    "invert_current_sign, start_draining, start_on_motion, enable_recharge, charging_time, "
    "recharge_by_topic, soc_threshold, power_draining_topic, stop_power_draining_topic";

// Parameters that may be given more than once.
constexpr std::string_view kRepeatable[] = {"power_draining_topic", "stop_power_draining_topic"};

// A topic given by the user, made absolute, with where it was given (for duplicate errors).
struct TopicAt {
  std::string topic;
  std::string where;
};

class LinearBattery final : public System,
                            public ISystemConfigure,
                            public ISystemPreUpdate,
                            public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics + 1; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "LinearBattery must be declared inside a <model>");
    }
    model_ = entity;
    const auto name = config.get<std::string>("battery_name");
    // Two batteries of one name on one model would drain twice (and publish on one topic);
    // batteries of different names may share a model.
    claim_unique_plugin(r, model_, fmt::format("LinearBattery with <battery_name> '{}'", name),
                        config);
    const double nominal = get_positive(config, "voltage");
    e0_ = get_positive_or(config, "open_circuit_voltage_constant_coef", nominal);
    e1_ = config.get_or<double>("open_circuit_voltage_linear_coef", 0.0);
    capacity_ = get_positive(config, "capacity");
    const double initial = get_positive_or(config, "initial_charge", capacity_, true);
    if (initial > capacity_) {
      throw Error(
          config.child("initial_charge")->where(),
          fmt::format("<initial_charge> {} A·h exceeds <capacity> {} A·h", initial, capacity_));
    }
    resistance_ = get_positive_or(config, "resistance", 0.0, true);
    tau_ = get_positive_or(config, "smooth_current_tau", 1.0);
    power_load_ = get_positive_or(config, "power_load", 0.0, true);
    efficiency_ = get_positive_or(config, "motor_efficiency", 0.7);
    if (efficiency_ > 1) {
      throw Error(config.child("motor_efficiency")->where(),
                  fmt::format("<motor_efficiency> must be in (0, 1], found {}", efficiency_));
    }
    const std::string prefix = "/model/" + r.get<c::Name>(model_).value + "/battery/" + name;
    const auto topic = config.get_or<std::string>("topic", prefix + "/state");
    // Gazebo's options. fix_issue_225 = true is how Kestrel always drains (q −= i·dt/3600 A·h);
    // Gazebo's default (false) keeps its old, wrong drain rate, which Kestrel does not reproduce.
    // With fix_issue_225 true Gazebo also publishes the percentage as 0..100 (else 0..1).
    const bool fix_issue_225 = config.get_or<bool>("fix_issue_225", false);
    if (config.has("fix_issue_225") && !fix_issue_225) {
      throw Error(config.child("fix_issue_225")->where(),
                  "<fix_issue_225> false asks for Gazebo's wrong drain rate (its issue 225), which "
                  "Kestrel does not reproduce: remove it or set it to true");
    }
    const bool invert_current = config.get_or<bool>("invert_current_sign", false);
    start_draining_ = config.get_or<bool>("start_draining", false);
    if (const Element* e = config.child("start_on_motion")) {
      (void)e->value<bool>();
      spdlog::warn(
          "{}: LinearBattery: <start_on_motion> is not read by Gazebo's "
          "LinearBatteryPlugin (its demo world sets it), nor by Kestrel: the battery "
          "starts draining as Gazebo's, with <start_draining>, at the first joint "
          "command of the model or at a draining message",
          e->where());
    }
    std::vector<TopicAt> topics;  // every topic of this battery, to reject duplicates
    charge_current_ = 0;
    soc_threshold_.reset();
    if (config.get_or<bool>("enable_recharge", false)) {
      charge_current_ = capacity_ / get_positive(config, "charging_time");  // [A] = A·h / h
      // Topics, as Gazebo's recharge_by_topic; Kestrel offers no recharge services.
      (void)config.get_or<bool>("recharge_by_topic", true);
      if (const Element* e = config.child("soc_threshold")) {
        const double v = e->value<double>();
        if (!(v >= 0 && v <= 1)) {
          throw Error(e->where(), fmt::format("<soc_threshold> is a state of charge (charge / "
                                              "capacity) and must be in [0, 1], found {}",
                                              e->text()));
        }
        soc_threshold_ = v;
      }
      r.set(model_, c::BatteryRecharge{});
      const c::BatteryRechargeTopic t{prefix + "/recharge/start", prefix + "/recharge/stop"};
      topics.push_back({t.start, "the recharge start topic"});
      topics.push_back({t.stop, "the recharge stop topic"});
      r.set(model_, t);
    } else {
      for (const char* p : {"charging_time", "recharge_by_topic", "soc_threshold"}) {
        if (const Element* e = config.child(p)) {
          throw Error(e->where(),
                      fmt::format("<{}> needs <enable_recharge>true</enable_recharge>", p));
        }
      }
    }
    c::BatteryDrainTopics drain;
    drain.start = read_topics(config, "power_draining_topic", topics);
    drain.stop = read_topics(config, "stop_power_draining_topic", topics);
    if (!drain.start.empty() || !drain.stop.empty()) r.set(model_, std::move(drain));
    r.set(model_, c::BatteryDrainCommand{});
    warn_duplicates(config);
    reject_unknown_parameters(config, "LinearBattery", kParams);
    name_ = r.scoped_name(model_) + "::" + name;
    c::Battery b;
    b.capacity = capacity_;
    b.charge = initial;
    b.percentage = initial / capacity_;
    b.open_circuit_voltage = voltage_at(b.charge);
    b.voltage = nominal;  // Gazebo's battery starts at <voltage>
    b.empty = initial <= 0;
    b.draining = start_draining_;
    r.set(model_, b);
    // Gazebo looks at the joints directly under the model.
    joints_.clear();
    for (ecs::Entity e : r.children(model_)) {
      if (r.has<c::Joint>(e)) joints_.push_back(e);
    }
    r.set(model_, c::BatteryTopic{topic, invert_current, fix_issue_225 ? 100.0 : 1.0});
    reset_state();
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    const double dt = to_seconds(info.dt);
    const double now = to_seconds(info.sim_time);
    auto& b = r.get<c::Battery>(model_);
    update_drain(r, now);
    b.draining = draining_;
    auto* recharge = charge_current_ > 0 ? r.try_get<c::BatteryRecharge>(model_) : nullptr;
    if (recharge && recharge->charging != charging_) {
      charging_ = recharge->charging;
      spdlog::info("[battery] {}: recharge {} command at t={:.3f} s", name_,
                   charging_ ? "start" : "stop", now);
    }
    b.charging = charging_ && b.charge < capacity_;
    // As Gazebo: the battery is updated only while it drains or charges.
    if (draining_ || b.charging) update_charge(r, b, dt, now);
    if (recharge) update_recharge(b, *recharge, now);
  }

 private:
  // Gazebo's update: i_raw = P / V (V: the terminal voltage of the last update), minus the
  // charging current; i ← i + dt/τ·(i_raw − i); q ← q − i·dt/3600; V = Voc(q) − R·i.
  void update_charge(ecs::Registry& r, c::Battery& b, double dt, double now) {
    if (tau_ < dt && !tau_reported_) {
      tau_reported_ = true;
      spdlog::warn(
          "[battery] {}: <smooth_current_tau> {} s is shorter than the step {} s: the "
          "step is used, as Gazebo does",
          name_, tau_, dt);
    }
    if (std::abs(b.voltage) < 1e-3 && !b.charging) {  // Gazebo's dead battery: 0 V, frozen
      b.voltage = 0;
      return;
    }
    double power = 0;
    if (draining_) {
      power = power_load_;
      if (const auto* p = r.try_get<c::RotorShaftPower>(model_)) {
        for (double w : p->watts) power += w / efficiency_;
      }
    }
    double current = b.empty ? 0 : power / b.voltage;
    if (b.charging) current -= charge_current_;
    b.current += std::min(1.0, dt / tau_) * (current - b.current);
    const bool was_empty = b.empty;
    b.charge = std::clamp(b.charge - b.current * dt / 3600.0, 0.0, capacity_);
    b.percentage = b.charge / capacity_;
    b.open_circuit_voltage = voltage_at(b.charge);
    b.voltage = b.open_circuit_voltage - resistance_ * b.current;
    b.power = b.voltage * b.current;
    b.energy_used += std::max(0.0, b.power) * dt;  // drawn, not returned by recharging
    b.empty = b.charge <= 0;
    if (b.empty && !was_empty) {
      spdlog::warn("[battery] {}: empty at t={:.3f} s: motors stop", name_, now);
    }
  }

  void reset_state() {
    draining_ = start_draining_;
    charging_ = false;
    threshold_armed_ = true;
  }

  // Drain commands (applied and cleared), then Gazebo's rule: a battery that is not draining
  // starts at the first step a joint of the model has a non-zero velocity or force command.
  void update_drain(ecs::Registry& r, double now) {
    auto& cmd = r.get<c::BatteryDrainCommand>(model_);
    using A = c::BatteryDrainCommand::Action;
    if (cmd.action == A::kStart && !draining_) {
      draining_ = true;
      spdlog::info("[battery] {}: drain start message: draining from t={:.3f} s", name_, now);
    } else if (cmd.action == A::kStop && draining_) {
      draining_ = false;
      spdlog::info("[battery] {}: drain stop message: no draining from t={:.3f} s", name_, now);
    }
    cmd.action = A::kNone;
    if (!draining_ && joint_commanded(r)) {
      draining_ = true;
      spdlog::info("[battery] {}: a joint of the model is commanded: draining from t={:.3f} s",
                   name_, now);
    }
  }

  // After the charge update: charging ends when full; with soc_threshold it starts by itself
  // when the state of charge falls below the threshold (once per fall: a stop command is not
  // overridden until the state of charge has been at or above the threshold again).
  void update_recharge(const c::Battery& b, c::BatteryRecharge& recharge, double now) {
    if (charging_ && b.charge >= capacity_) {
      charging_ = recharge.charging = false;
      spdlog::info("[battery] {}: full at t={:.3f} s: charging stops", name_, now);
    }
    if (!soc_threshold_) return;
    if (b.percentage >= *soc_threshold_) {
      threshold_armed_ = true;
    } else if (threshold_armed_) {
      threshold_armed_ = false;
      if (!charging_) {
        charging_ = recharge.charging = true;
        spdlog::info(
            "[battery] {}: state of charge {:.4f} below soc_threshold {} at t={:.3f} s: "
            "charging",
            name_, b.percentage, *soc_threshold_, now);
      }
    }
  }

  // The <NAME> topics (may repeat): non-empty, valid, made absolute, unique among `seen`.
  static std::vector<std::string> read_topics(const Element& config, std::string_view name,
                                              std::vector<TopicAt>& seen) {
    std::vector<std::string> out;
    for (const Element* e : config.children(name)) {
      std::string t = e->text();  // trimmed
      if (t.empty() || t == "/") {
        throw Error(e->where(), fmt::format("<{}> is empty: give a topic name", name));
      }
      for (std::string_view bad : {" ", "\t", "\r", "\n", "~", "@", "//", ":="}) {
        if (t.find(bad) != std::string::npos) {
          throw Error(e->where(), fmt::format("<{}> '{}' is not a valid topic name (no "
                                              "whitespace, '~', '@', '//' or ':=')",
                                              name, t));
        }
      }
      if (t.front() != '/') t.insert(0, "/");
      for (const TopicAt& s : seen) {
        if (s.topic == t) {
          throw Error(e->where(), fmt::format("<{}> '{}' is already used by {}: give each "
                                              "draining topic once",
                                              name, t, s.where));
        }
      }
      seen.push_back({t, fmt::format("<{}> at {}", name, e->where())});
      out.push_back(t);
    }
    return out;
  }

  // A joint directly under the model with a non-zero JointVelocityCmd or JointForceCmd (Gazebo
  // compares them as floats).
  bool joint_commanded(const ecs::Registry& r) const {
    auto nonzero = [](const std::vector<double>& v) {
      return std::ranges::any_of(v, [](double x) { return std::abs(static_cast<float>(x)) > 0; });
    };
    for (ecs::Entity j : joints_) {
      if (const auto* v = r.try_get<c::JointVelocityCmd>(j); v && nonzero(v->data)) return true;
      if (const auto* f = r.try_get<c::JointForceCmd>(j); f && nonzero(f->data)) return true;
    }
    return false;
  }

  // A parameter given twice: Gazebo silently uses the first (its own linear_battery_demo.sdf
  // gives vehicle_blue's <power_load> twice), so Kestrel uses the first too, and says so.
  static void warn_duplicates(const Element& config) {
    std::vector<const Element*> seen;
    for (const auto& ch : config.children()) {
      if (std::ranges::find(kRepeatable, ch->name()) != std::end(kRepeatable)) continue;
      for (const Element* s : seen) {
        if (s->name() == ch->name()) {
          spdlog::warn(
              "{}: LinearBattery: <{}> is given twice; the first ({} at {}) is used, as "
              "Gazebo does: remove the other",
              ch->where(), ch->name(), s->text(), s->where());
          (void)config.children(ch->name());  // reported here, not as an unknown parameter
        }
      }
      seen.push_back(ch.get());
    }
  }

  double voltage_at(double charge) const { return e0_ + e1_ * (1 - charge / capacity_); }

  ecs::Entity model_ = ecs::kNullEntity;
  std::string name_;
  double e0_ = 0, e1_ = 0, capacity_ = 0, resistance_ = 0, tau_ = 1, power_load_ = 0,
         efficiency_ = 0.7;
  double charge_current_ = 0;            // [A] while recharging
  std::optional<double> soc_threshold_;  // [0, 1]; none: no automatic charging
  bool start_draining_ = false;
  bool tau_reported_ = false;
  // Per-run state (reset_state()).
  bool draining_ = false;
  bool charging_ = false;        // recharging commanded (by message or soc_threshold)
  bool threshold_armed_ = true;  // soc_threshold may start charging
  std::vector<ecs::Entity> joints_;
};

}  // namespace

std::unique_ptr<System> make_linear_battery() { return std::make_unique<LinearBattery>(); }

}  // namespace kestrel::systems
