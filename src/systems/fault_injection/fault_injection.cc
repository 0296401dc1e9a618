// FaultInjection: faults scheduled in the world SDF, applied at their sim time (and reverted
// after their duration, if any), each logged with its time (spdlog and the FaultLog component).

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "multicopter_control/multicopter_control.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kTypes =
    "rotor, sensor_stop, sensor_bias, sensor_noise, gnss_loss, wind_gust, battery_drop";

struct Fault {
  Duration time{0};
  Duration duration{0};  // 0 = permanent
  std::string where;
  std::string description;
  std::function<void(ecs::Registry&)> apply, revert;
  /// Checks the target once every system is configured (null: nothing to check).
  std::function<void(const ecs::Registry&)> check;
};

// A rotor fault must name an actuator number one of the model's MulticopterMotorModel has.
void check_rotor(const ecs::Registry& r, ecs::Entity model, std::size_t rotor,
                 const std::string& where) {
  const auto* plugins = r.try_get<ModelPlugins>(model);
  std::string motors;
  if (plugins) {
    for (std::size_t i = 0; i < plugins->motor_joint.size(); ++i) {
      if (plugins->motor_joint[i].empty()) continue;
      if (i == rotor) return;
      motors +=
          fmt::format("{}{} (joint '{}')", motors.empty() ? "" : ", ", i, plugins->motor_joint[i]);
    }
  }
  throw Error(where,
              fmt::format("<fault type=\"rotor\">: model '{}' has no rotor {}: no "
                          "MulticopterMotorModel of it has <actuator_number> {} (its motors: {})",
                          r.scoped_name(model), rotor, rotor, motors.empty() ? "none" : motors));
}

// Whether a <sensor> element declares noise a scale can act on: a <noise> of type gaussian or
// gaussian_quantized anywhere inside it (<noise type="..."> or, for cameras and lidars,
// <noise><type>...</type>).
bool declares_noise(const Element& e) {
  for (const auto& ch : e.children()) {
    if (ch->name() == "noise") {
      std::string type = ch->attribute("type").value_or("");
      for (const auto& t : ch->children()) {
        if (t->name() == "type") type = t->text();
      }
      if (type == "gaussian" || type == "gaussian_quantized") return true;
    } else if (declares_noise(*ch)) {
      return true;
    }
  }
  return false;
}

// The sensor types faults act on, for messages.
std::string fault_sensor_types() {
  std::string list;
  for (const auto& t : c::kSensorFaultTargets)
    list += (list.empty() ? "" : ", ") + std::string(t.type);
  return list;
}

class FaultInjection final : public System,
                             public ISystemConfigure,
                             public ISystemPreUpdate,
                             public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 3; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    world_ = entity;
    if (!r.has<c::World>(world_)) {
      throw Error(config.where(), "FaultInjection must be declared in the <world>");
    }
    for (const Element* f : config.children("fault")) faults_.push_back(parse(*f, r, nullptr));
    reject_unknown_parameters(config, "FaultInjection", "fault", {"fault"});
    std::stable_sort(faults_.begin(), faults_.end(),
                     [](const Fault& a, const Fault& b) { return a.time < b.time; });
    sdf_faults_ = faults_.size();
    if (!r.has<c::FaultLog>(world_)) r.add<c::FaultLog>(world_);
    r.set(world_, c::FaultCommandTopic{"/world/" + r.get<c::Name>(world_).value + "/fault"});
    reset({}, r);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    faults_.resize(sdf_faults_);  // faults commanded at run time belong to that run only
    events_.clear();
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      events_.push_back({faults_[i].time, i, false});
      if (faults_[i].duration > Duration{0}) {
        events_.push_back({faults_[i].time + faults_[i].duration, i, true});
      }
    }
    std::stable_sort(events_.begin(), events_.end(),
                     [](const Event& a, const Event& b) { return a.time < b.time; });
    next_ = 0;
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (!checked_) {  // every system is configured now
      for (std::size_t i = 0; i < sdf_faults_; ++i) {
        if (faults_[i].check) faults_[i].check(r);
      }
      checked_ = true;
    }
    if (info.paused) return;
    if (auto* cmd = r.try_get<c::FaultCommand>(world_); cmd && !cmd->text.empty()) {
      command(*cmd, r, info.sim_time);
      cmd->text.clear();
    }
    while (next_ < events_.size() && events_[next_].time <= info.sim_time) {
      const Event& ev = events_[next_++];
      Fault& f = faults_[ev.fault];
      (ev.end ? f.revert : f.apply)(r);
      const std::string text = ev.end ? "end of " + f.description : f.description;
      spdlog::warn("[fault] t={:.3f} s: {} ({})", to_seconds(info.sim_time), text, f.where);
      r.get<c::FaultLog>(world_).events.push_back({info.sim_time, text});
    }
  }

 private:
  struct Event {
    Duration time;
    std::size_t fault;
    bool end;
  };

  // Faults commanded at run time: every <fault> is parsed and checked before any is scheduled;
  // one without a time (or with a past one) is applied now, i.e. in this PreUpdate.
  void command(const c::FaultCommand& cmd, ecs::Registry& r, Duration now) {
    const std::string source = cmd.source.empty() ? "fault command" : cmd.source;
    std::vector<Fault> parsed;
    try {
      const auto e = Element::parse("<faults>" + cmd.text + "</faults>", source);
      for (const Element* f : e->children("fault")) parsed.push_back(parse(*f, r, &now));
      reject_unknown_parameters(*e, "fault command", "fault", {"fault"});
      if (parsed.empty()) throw Error(e->where(), "no <fault .../> element in the command");
    } catch (const Error& err) {
      spdlog::error("[fault] t={:.3f} s: rejected the faults sent on {} (nothing changed): {}",
                    to_seconds(now), source, err.what());
      return;
    }
    for (Fault& f : parsed) {
      const std::size_t i = faults_.size();
      faults_.push_back(std::move(f));
      schedule({faults_[i].time, i, false});
      if (faults_[i].duration > Duration{0}) {
        schedule({faults_[i].time + faults_[i].duration, i, true});
      }
    }
  }

  // Inserts a future event after every pending event of the same or an earlier time.
  void schedule(const Event& ev) {
    const auto at =
        std::upper_bound(events_.begin() + static_cast<std::ptrdiff_t>(next_), events_.end(), ev,
                         [](const Event& a, const Event& b) { return a.time < b.time; });
    events_.insert(at, ev);
  }

  ecs::Entity model(const Element& f, ecs::Registry& r) {
    const auto name = attribute_string(f, "model");
    const ecs::Entity m = r.child_by_name(world_, name);
    if (m == ecs::kNullEntity || !r.has<c::Model>(m)) {
      throw Error(f.where(), fmt::format("<fault> model '{}' is not a model of the world", name));
    }
    return m;
  }

  // The sensor a <fault> names and what a fault can do to its type.
  std::pair<ecs::Entity, const c::SensorFaultTarget*> sensor(const Element& f, ecs::Registry& r) {
    const auto name = attribute_string(f, "sensor");
    const ecs::Entity s = r.find_scoped(r.scoped_name(world_) + "::" + name);
    if (s == ecs::kNullEntity || !r.has<c::Sensor>(s)) {
      throw Error(f.where(), fmt::format("<fault> sensor '{}' is not a sensor of the world "
                                         "(give model::link::sensor)",
                                         name));
    }
    const std::string& type = r.get<c::Sensor>(s).type;
    const auto* target = c::sensor_fault_target(type);
    if (!target) {
      throw Error(f.where(), fmt::format("<fault> sensor '{}' is a '{}' sensor: sensor faults do "
                                         "not act on that type (they act on: {})",
                                         name, type, fault_sensor_types()));
    }
    return {s, target};
  }

  // A sensor_bias fault's `bias`: as many numbers as the sensor's type takes.
  static Vector3d bias_of(const Element& f, const c::SensorFaultTarget& target,
                          const std::string& name) {
    const std::string text = attribute_string(f, "bias");
    std::istringstream in(text);
    int numbers = 0;
    for (std::string word; in >> word;) ++numbers;
    if (target.bias_size == 0) {
      throw Error(f.where(),
                  fmt::format("<fault type=\"sensor_bias\">: sensor '{}' (type {}) "
                              "takes no bias (only sensor_stop{})",
                              name, target.type, target.noise ? " and sensor_noise" : ""));
    }
    if (numbers != target.bias_size) {
      throw Error(f.where(),
                  fmt::format("<fault type=\"sensor_bias\">: sensor '{}' (type {}) takes a bias "
                              "of {}, added to its {}; found '{}'",
                              name, target.type,
                              target.bias_size == 3 ? "three numbers 'x y z'" : "one number",
                              target.bias, text));
    }
    if (target.bias_size == 1) return {attribute_double(f, "bias"), 0, 0};
    const Vector3d b = attribute_vector(f, "bias");
    if (!std::isfinite(b.X()) || !std::isfinite(b.Y()) || !std::isfinite(b.Z())) {
      throw Error(f.where(),
                  "<fault type=\"sensor_bias\"> bias must be finite, found '" + text + "'");
    }
    return b;
  }

  static c::SensorFault& sensor_fault(ecs::Registry& r, ecs::Entity s) {
    if (auto* f = r.try_get<c::SensorFault>(s)) return *f;
    return r.add<c::SensorFault>(s);
  }

  // One <fault>. `now`: null for the world file's schedule (time required); the current sim time
  // for a run-time command (time optional, at least now; the target must exist now).
  Fault parse(const Element& f, ecs::Registry& r, const Duration* now) {
    Fault out;
    out.where = f.where();
    const double t = now ? attribute_double_or(f, "time", 0.0) : attribute_double(f, "time");
    const double d = attribute_double_or(f, "duration", 0.0);
    if (t < 0 || d < 0) throw Error(f.where(), "<fault> time and duration must be >= 0 [s]");
    out.time = now ? std::max(*now, from_seconds(t)) : from_seconds(t);
    out.duration = from_seconds(d);
    const auto type = attribute_string(f, "type");
    if (type == "rotor") {
      f.reject_unknown_attributes({"type", "time", "duration", "model", "rotor", "efficiency"});
      const ecs::Entity m = model(f, r);
      const double idx = attribute_double(f, "rotor");
      const double eff = attribute_double(f, "efficiency");
      if (idx < 0 || idx != std::floor(idx) || idx > 63 || eff < 0 || eff > 1) {
        throw Error(f.where(),
                    "<fault type=\"rotor\"> needs rotor=\"0..63\" and "
                    "efficiency=\"0..1\" (0 = failed)");
      }
      const auto n = static_cast<std::size_t>(idx);
      // The motors configure after this system (priority): a world file's rotor faults are
      // checked at the first step, a run-time command's now.
      const std::string where = f.where();
      out.check = [m, n, where](const ecs::Registry& reg) { check_rotor(reg, m, n, where); };
      if (now) out.check(r);
      auto set = [m, n](ecs::Registry& reg, double e) {
        auto* rf = reg.try_get<c::RotorFaults>(m);
        if (!rf) rf = &reg.add<c::RotorFaults>(m);
        if (rf->efficiency.size() <= n) rf->efficiency.resize(n + 1, 1.0);
        rf->efficiency[n] = e;
      };
      out.description = fmt::format("rotor {} of {} efficiency {}", n, r.scoped_name(m), eff);
      out.apply = [set, eff](ecs::Registry& reg) { set(reg, eff); };
      out.revert = [set](ecs::Registry& reg) { set(reg, 1.0); };
    } else if (type == "sensor_stop" || type == "sensor_bias" || type == "sensor_noise") {
      if (type == "sensor_stop") {
        f.reject_unknown_attributes({"type", "time", "duration", "sensor"});
      } else if (type == "sensor_bias") {
        f.reject_unknown_attributes({"type", "time", "duration", "sensor", "bias"});
      } else {
        f.reject_unknown_attributes({"type", "time", "duration", "sensor", "scale"});
      }
      const auto found = sensor(f, r);
      const ecs::Entity s = found.first;
      const c::SensorFaultTarget* target = found.second;
      const std::string name = r.scoped_name(s);
      if (type == "sensor_stop") {
        out.description = fmt::format("sensor {} stopped", name);
        out.apply = [s](ecs::Registry& reg) { sensor_fault(reg, s).stopped = true; };
        out.revert = [s](ecs::Registry& reg) { sensor_fault(reg, s).stopped = false; };
      } else if (type == "sensor_bias") {
        const Vector3d bias = bias_of(f, *target, attribute_string(f, "sensor"));
        out.description = target->bias_size == 1 ? fmt::format("sensor {} bias {}", name, bias.X())
                                                 : fmt::format("sensor {} bias {} {} {}", name,
                                                               bias.X(), bias.Y(), bias.Z());
        out.apply = [s, bias](ecs::Registry& reg) { sensor_fault(reg, s).bias = bias; };
        out.revert = [s](ecs::Registry& reg) { sensor_fault(reg, s).bias = {}; };
      } else {
        const double scale = attribute_double(f, "scale");
        if (scale < 0) throw Error(f.where(), "<fault type=\"sensor_noise\"> scale must be >= 0");
        const auto* sensor_data = &r.get<c::Sensor>(s);
        if (!target->noise) {
          throw Error(f.where(), fmt::format("<fault type=\"sensor_noise\">: sensor '{}' (type "
                                             "{}) has no noise to scale (only sensor_stop)",
                                             attribute_string(f, "sensor"), target->type));
        }
        if (!sensor_data->element || !declares_noise(*sensor_data->element)) {
          throw Error(
              f.where(),
              fmt::format("<fault type=\"sensor_noise\">: sensor '{}'{} declares no "
                          "<noise type=\"gaussian\"> or \"gaussian_quantized\": a noise "
                          "scale would multiply nothing",
                          attribute_string(f, "sensor"),
                          sensor_data->element ? " (" + sensor_data->element->where() + ")" : ""));
        }
        out.description = fmt::format("sensor {} noise x{}", name, scale);
        out.apply = [s, scale](ecs::Registry& reg) { sensor_fault(reg, s).noise_scale = scale; };
        out.revert = [s](ecs::Registry& reg) { sensor_fault(reg, s).noise_scale = 1.0; };
      }
    } else if (type == "gnss_loss") {
      f.reject_unknown_attributes({"type", "time", "duration", "model"});
      const ecs::Entity m = model(f, r);
      std::vector<ecs::Entity> gnss;
      for (ecs::Entity e : r.descendants(m)) {
        if (const auto* s = r.try_get<c::Sensor>(e);
            s && (s->type == "navsat" || s->type == "gps")) {
          gnss.push_back(e);
        }
      }
      if (gnss.empty()) {
        throw Error(f.where(), fmt::format("<fault type=\"gnss_loss\">: model '{}' has no navsat "
                                           "sensor",
                                           r.scoped_name(m)));
      }
      out.description = fmt::format("GNSS loss on {}", r.scoped_name(m));
      out.apply = [gnss](ecs::Registry& reg) {
        for (auto e : gnss) sensor_fault(reg, e).no_fix = true;
      };
      out.revert = [gnss](ecs::Registry& reg) {
        for (auto e : gnss) sensor_fault(reg, e).no_fix = false;
      };
    } else if (type == "wind_gust") {
      f.reject_unknown_attributes({"type", "time", "duration", "velocity"});
      const Vector3d v = attribute_vector(f, "velocity");
      const ecs::Entity w = world_;
      out.description = fmt::format("wind gust {} {} {} m/s", v.X(), v.Y(), v.Z());
      out.apply = [w, v](ecs::Registry& reg) { reg.set(w, c::WindGust{v}); };
      out.revert = [w](ecs::Registry& reg) { reg.set(w, c::WindGust{}); };
    } else if (type == "battery_drop") {
      f.reject_unknown_attributes({"type", "time", "duration", "model", "charge"});
      const ecs::Entity m = model(f, r);
      const double frac = attribute_double(f, "charge");
      if (frac < 0 || frac > 1) {
        throw Error(f.where(),
                    "<fault type=\"battery_drop\"> charge must be a fraction 0..1 of "
                    "the capacity");
      }
      const std::string where = f.where();
      if (now && !r.has<c::Battery>(m)) {
        throw Error(where, fmt::format("<fault type=\"battery_drop\">: model '{}' has no battery",
                                       r.scoped_name(m)));
      }
      out.description =
          fmt::format("battery of {} dropped to {:.0f} %", r.scoped_name(m), frac * 100);
      out.apply = [m, frac, where](ecs::Registry& reg) {
        auto* b = reg.try_get<c::Battery>(m);
        if (!b) {
          throw Error(where, fmt::format("<fault type=\"battery_drop\">: model '{}' has no "
                                         "battery (add a LinearBattery plugin)",
                                         reg.scoped_name(m)));
        }
        b->charge = std::min(b->charge, frac * b->capacity);
      };
      out.revert = [](ecs::Registry&) {};
    } else {
      throw Error(f.where(), fmt::format("<fault> type '{}' is unknown (types: {})", type, kTypes));
    }
    return out;
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::vector<Fault> faults_;  // the world file's (first sdf_faults_), then run-time commands
  std::size_t sdf_faults_ = 0;
  std::vector<Event> events_;
  std::size_t next_ = 0;
  bool checked_ = false;  // the world file's faults checked against the configured systems
};

}  // namespace

std::unique_ptr<System> make_fault_injection() { return std::make_unique<FaultInjection>(); }

}  // namespace kestrel::systems
