// RflySimBridge: a vehicle flown and observed over CopterSim's UDP structs (src/sitl/rflysim/
// README.md). Inputs (PX4SILIntFloat, DllInDoubCtrls) are polled at PreUpdate and drive the
// model's MulticopterVelocityControl (TwistCommand, VelocityControlEnable) or its motors
// (ActuatorCommands); the truth (VehileInfo60d) and outCopterData go out at PostUpdate at a rate
// in sim time, and on request (<hil_sensor_port>, <hil_gps_port>) the model's sensors as
// HILSensor30d and HILGPS30d, built as the PX4 bridge builds HIL_SENSOR and HIL_GPS
// (sitl/hil.h). Not lockstep: the world runs at its own pace and a packet takes effect at the
// first step after it arrived.

#include <arpa/inet.h>
#include <fmt/core.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/core/time.h"
#include "kestrel/sitl/sitl.h"
#include "sitl/frames.h"
#include "sitl/hil.h"
#include "sitl/net.h"
#include "sitl/rflysim/packet.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {
namespace {

namespace c = components;
using rflysim::Command;
using rflysim::Mode;
using rflysim::Rejection;

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kNone:
      return "0 (no command)";
    case Mode::kVelocity:
      return "1 (NED velocity + yaw rate)";
    case Mode::kPosition:
      return "2 (NED position + yaw)";
    case Mode::kMotors:
      return "3 (normalised motor commands)";
  }
  return "?";
}

double positive(const Element& cfg, const char* name, double fallback, const std::string& who) {
  const double v = cfg.get_or<double>(name, fallback);
  if (!(v > 0) || !std::isfinite(v)) {
    throw Error(cfg.where(),
                fmt::format("{}: <{}> must be a positive number, got {}", who, name, v));
  }
  return v;
}

// 1 / <name> as a period the clock holds (at least 1 ns, below 292 years): a rate of 1e12 Hz
// would round to a zero period (the send schedules would never advance), 1e-10 Hz overflow.
Duration period_of(const Element& cfg, const char* name, double rate, const std::string& who) {
  const auto d = checked_seconds(1.0 / rate, /*positive=*/true);
  if (!d) {
    throw Error(cfg.where(), fmt::format("{}: <{}> {} Hz gives a period outside {}", who, name,
                                         rate, seconds_range(true)));
  }
  return *d;
}

// The first multiple of `period` after `t`: the next send of a schedule on multiples of its
// period, in one step however far the rate is above the step rate (a loop adding the period
// would turn a 1 GHz rate into a million additions per step).
Duration next_multiple(Duration t, Duration period) { return (t / period + 1) * period; }

// At most this many datagrams are read per step: a sender flooding the port cannot hold the
// step (the rest wait in the socket's bounded kernel buffer, or are dropped there).
constexpr int kMaxDatagramsPerStep = 64;

class RflySimBridge final : public System,
                            public ISystemConfigure,
                            public ISystemPreUpdate,
                            public ISystemPostUpdate,
                            public ISystemReset {
 public:
  // Before MulticopterVelocityControl (kPrePhysics − 1) and the motor model (kPrePhysics), so
  // both read this step's command.
  int priority() const override { return priority::kPrePhysics - 2; }

  ~RflySimBridge() override {
    if (!configured_) return;
    spdlog::info(
        "{}: {} commands and {} fault parameter packets applied; rejected: {} wrong size, {} "
        "wrong checksum, {} unknown CopterID, {} unknown mode, {} bad setpoint value, {} mode "
        "the model cannot fly, {} fault Kestrel cannot apply, {} input the model does not take",
        who_, applied_, faults_applied_, rejected_[1], rejected_[2], rejected_[3], rejected_[4],
        rejected_[5], rejected_[6], rejected_[7], rejected_[8]);
  }

  void configure(ecs::Entity entity, const Element& cfg, ecs::Registry& reg,
                 sim::EventBus&) override {
    const int id = cfg.get_or<int>("copter_id", 1);
    if (id < 1 || id > 10000) {
      throw Error(cfg.where(),
                  fmt::format("RflySim bridge of model '{}': <copter_id> {} is out of range "
                              "(RflySim's CopterIDs are 1, 2, ...; at most 10000)",
                              reg.scoped_name(entity), id));
    }
    copter_id_ = id;
    who_ = fmt::format("RflySim bridge (model '{}', CopterID {})", reg.scoped_name(entity), id);
    address_ = cfg.get_or<std::string>("address", "127.0.0.1");
    port_ = cfg.get_or<int>("port", rflysim::input_port(id));
    peer_address_ = cfg.get_or<std::string>("peer_address", "127.0.0.1");
    peer_port_ = cfg.get_or<int>("peer_port", rflysim::output_port(id));
    rate_ = positive(cfg, "rate", 100.0, who_);
    period_ = period_of(cfg, "rate", rate_, who_);
    vehicle_type_ = cfg.get_or<int>("vehicle_type", 3);
    if (vehicle_type_ < 0) {
      throw Error(cfg.where(), fmt::format("{}: <vehicle_type> must be >= 0 (RflySim3D's class "
                                           "ID), got {}",
                                           who_, vehicle_type_));
    }
    max_rotor_ = positive(cfg, "max_rotor_velocity", 800.0, who_);
    position_gain_ = positive(cfg, "position_gain", 1.0, who_);
    yaw_gain_ = positive(cfg, "yaw_gain", 1.0, who_);
    max_speed_ = positive(cfg, "max_speed", 2.0, who_);
    max_yaw_rate_ = positive(cfg, "max_yaw_rate", 1.0, who_);
    vehicle_ = find_vehicle(reg, entity, cfg.get_or<std::string>("link", ""), who_);
    configure_hil(cfg);
    // The magnetometer stand-in's note (WMM against the world's field) only when it is sent.
    reader_.bind(reg, vehicle_, hil_sensor_ ? who_ : "");
    peer_ = make_address(peer_address_, peer_port_, who_);
    socket_ = udp_bind(address_, port_, who_);
    if (!reg.has<c::ActuatorCommands>(entity)) reg.add<c::ActuatorCommands>(entity);
    configured_ = true;
    spdlog::info(
        "{}: listening on UDP {}:{}, sending VehileInfo60d and outCopterData at {} Hz "
        "(sim time) to {}:{}",
        who_, address_, port_, rate_, peer_address_, peer_port_);
    if (hil_sensor_) {
      spdlog::info("{}: sending HILSensor30d at {} Hz (sim time) to {}:{}", who_, hil_sensor_rate_,
                   peer_address_, hil_sensor_port_);
    }
    if (hil_gps_) {
      spdlog::info("{}: sending HILGPS30d to {}:{} {}", who_, peer_address_, hil_gps_port_,
                   vehicle_.navsat != ecs::kNullEntity
                       ? fmt::format("at the rate of the model's navsat sensor '{}'",
                                     reg.scoped_name(vehicle_.navsat))
                       : fmt::format("at {} Hz (sim time)", hil_gps_rate_));
    }
    if ((hil_sensor_ || hil_gps_) && !vehicle_.stand_ins.empty()) {
      std::string list;
      for (const auto& s : vehicle_.stand_ins) list += (list.empty() ? "" : ", ") + s;
      spdlog::info(
          "{}: the model has no {} sensor; HILSensor30d/HILGPS30d use noise-free "
          "values from the truth at link '{}' instead",
          who_, list, reg.scoped_name(vehicle_.link));
    }
  }

  void reset(const UpdateInfo&, ecs::Registry& reg) override {
    active_ = Command{};
    next_send_ = Duration{0};
    next_hil_sensor_ = hil_sensor_period_;
    next_hil_gps_ = hil_gps_period_;
    reader_.reset();
    faults_ = {};  // FaultInjection forgets commanded faults at a reset, and so does this
    fault_efficiency_.clear();
    pending_faults_.clear();
    if (!reg.has<c::ActuatorCommands>(vehicle_.model)) reg.add<c::ActuatorCommands>(vehicle_.model);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& reg) override {
    receive(reg);
    hand_over_faults(reg);
    if (info.paused) return;
    switch (active_.mode) {
      case Mode::kNone:
        return;
      case Mode::kVelocity:
        fly(reg, ned_to_enu({active_.values[0], active_.values[1], active_.values[2]}),
            yaw_rate_ned_to_enu(active_.values[3]));
        return;
      case Mode::kPosition: {
        // A proportional loop on the position and yaw errors, limited, flown as mode 1.
        const Truth t = reader_.truth(reg);
        const Vector3d target_E =
            ned_to_enu({active_.values[0], active_.values[1], active_.values[2]});
        Vector3d v_E = (target_E - t.X_EB.Pos()) * position_gain_;
        if (v_E.Length() > max_speed_) v_E = v_E.Normalized() * max_speed_;
        const double yaw_error =
            std::remainder(active_.values[3] - euler_ned_frd(t.X_EB.Rot()).Z(), 2 * M_PI);
        const double r_NED = std::clamp(yaw_error * yaw_gain_, -max_yaw_rate_, max_yaw_rate_);
        fly(reg, v_E, yaw_rate_ned_to_enu(r_NED));
        return;
      }
      case Mode::kMotors: {
        // The velocity controller (if any) is left enabled but without a twist: it then writes
        // no rotor command (multicopter.h, TwistCommand), and these reach the motors.
        // (A disabled controller would zero the rotors after this system: it is enabled.)
        if (auto* twist = reg.try_get<c::TwistCommand>(vehicle_.model)) twist->received = false;
        enable_controller(reg);
        auto& cmd = reg.get<c::ActuatorCommands>(vehicle_.model);
        cmd.velocity.resize(8);
        for (std::size_t i = 0; i < 8; ++i) cmd.velocity[i] = active_.values[i] * max_rotor_;
        cmd.stamp = info.sim_time;
        reg.mark_changed<c::ActuatorCommands>(vehicle_.model);
        return;
      }
    }
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    if (info.paused || info.dt.count() == 0) return;
    const Duration t = info.sim_time + info.dt;  // the state after this step's physics
    send_hil(t, reg);  // on schedules of their own
    if (t < next_send_) return;
    next_send_ = next_send_ + period_ <= t ? t + period_ : next_send_ + period_;
    send_truth(t, reg);
    send_copter_data(t);
  }

 private:
  // <hil_sensor_port>, <hil_gps_port> (the request: absent, nothing is sent) and their rates.
  void configure_hil(const Element& cfg) {
    auto port = [&](const char* name, int& out) {
      if (!cfg.has(name)) return false;
      out = cfg.get_or<int>(name, 0);
      if (out < 1 || out > 65535) {
        throw Error(cfg.where(),
                    fmt::format("{}: <{}> must be a UDP port 1..65535, got {}", who_, name, out));
      }
      return true;
    };
    hil_sensor_ = port("hil_sensor_port", hil_sensor_port_);
    hil_gps_ = port("hil_gps_port", hil_gps_port_);
    if (hil_sensor_ && hil_gps_ && hil_sensor_port_ == hil_gps_port_) {
      throw Error(cfg.where(),
                  fmt::format("{}: <hil_sensor_port> and <hil_gps_port> are both {}: HILSensor30d "
                              "and HILGPS30d have the same size (240 bytes), so a receiver "
                              "could not tell them apart; give each its own port",
                              who_, hil_sensor_port_));
    }
    hil_sensor_rate_ = positive(cfg, "hil_sensor_rate", 250.0, who_);
    hil_gps_rate_ = positive(cfg, "hil_gps_rate", 10.0, who_);
    hil_sensor_period_ = period_of(cfg, "hil_sensor_rate", hil_sensor_rate_, who_);
    hil_gps_period_ = period_of(cfg, "hil_gps_rate", hil_gps_rate_, who_);
    next_hil_sensor_ = hil_sensor_period_;
    next_hil_gps_ = hil_gps_period_;
    gps_report_.eph_cm = cfg.get_or<double>("gps_eph", 0.3) * 100.0;
    gps_report_.epv_cm = cfg.get_or<double>("gps_epv", 0.4) * 100.0;
    gps_report_.satellites = cfg.get_or<int>("gps_satellites", 10);
    if (!(gps_report_.eph_cm >= 0) || !(gps_report_.epv_cm >= 0) ||
        !std::isfinite(gps_report_.eph_cm + gps_report_.epv_cm) || gps_report_.satellites < 0 ||
        gps_report_.satellites > 255) {
      throw Error(cfg.where(), fmt::format("{}: expected <gps_eph>, <gps_epv> >= 0 m and "
                                           "<gps_satellites> 0..255; found {} m, {} m, {}",
                                           who_, gps_report_.eph_cm / 100.0,
                                           gps_report_.epv_cm / 100.0, gps_report_.satellites));
    }
    if (hil_sensor_) hil_sensor_to_ = make_address(peer_address_, hil_sensor_port_, who_);
    if (hil_gps_) hil_gps_to_ = make_address(peer_address_, hil_gps_port_, who_);
  }

  // HILSensor30d on multiples of its period; HILGPS30d for each new sample of the model's
  // navsat, or on multiples of <hil_gps_rate>'s period for the stand-in.
  void send_hil(Duration t, const ecs::Registry& reg) {
    if (!hil_sensor_ && !hil_gps_) return;
    const bool sensor_due = hil_sensor_ && t >= next_hil_sensor_;
    const bool has_navsat = vehicle_.navsat != ecs::kNullEntity;
    const bool gps_due = hil_gps_ && (has_navsat || t >= next_hil_gps_);
    if (!sensor_due && !gps_due) return;
    const Truth truth = reader_.truth(reg);
    const double time_usec = static_cast<double>(t.count() / 1000);
    if (sensor_due) {
      next_hil_sensor_ = next_multiple(t, hil_sensor_period_);
      const auto d =
          rflysim::hil_sensor_30d(time_usec, hil_sensor_values(reader_.read(reg, truth)));
      send_to(rflysim::encode_doubles(d.data(), d.size()), hil_sensor_to_);
    }
    if (gps_due) {
      const GnssSample gnss = reader_.read_gnss(reg, truth);
      if (has_navsat && !gnss.fresh) return;
      next_hil_gps_ = next_multiple(t, hil_gps_period_);
      const auto d = rflysim::hil_gps_30d(time_usec, hil_gps_values(gnss, gps_report_));
      send_to(rflysim::encode_doubles(d.data(), d.size()), hil_gps_to_);
    }
  }

  // Drives the velocity controller: the world velocity v_E (ENU) expressed in the body frame
  // (TwistCommand.linear is body FLU), yaw rate r_ENU about up.
  void fly(ecs::Registry& reg, const Vector3d& v_E, double r_ENU) {
    const Truth t = reader_.truth(reg);
    auto& twist = reg.get<c::TwistCommand>(vehicle_.model);
    twist.linear = t.X_EB.Rot().Inverse().RotateVector(v_E);
    twist.angular = {0, 0, r_ENU};
    twist.received = true;
    reg.mark_changed<c::TwistCommand>(vehicle_.model);
    enable_controller(reg);
  }

  void enable_controller(ecs::Registry& reg) {
    if (auto* enable = reg.try_get<c::VelocityControlEnable>(vehicle_.model);
        enable && !enable->value) {
      enable->value = true;
      reg.mark_changed<c::VelocityControlEnable>(vehicle_.model);
    }
  }

  // Reads the waiting datagrams (at most kMaxDatagramsPerStep) in arrival order; the last
  // valid one becomes the command.
  void receive(const ecs::Registry& reg) {
    for (int i = 0; i < kMaxDatagramsPerStep; ++i) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(socket_.get(), rx_.data(), rx_.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) return;
      const auto size = static_cast<std::size_t>(n);
      if (size == rflysim::kModelInParamsSize) {
        fault(reg, size, from);
        continue;
      }
      Command cmd;
      Rejection r = rflysim::decode(rx_.data(), size, copter_id_, cmd);
      if (r == Rejection::kNone && (cmd.mode == Mode::kVelocity || cmd.mode == Mode::kPosition) &&
          !reg.has<c::TwistCommand>(vehicle_.model)) {
        r = Rejection::kUnsupported;
      }
      if (r != Rejection::kNone) {
        reject(r, size, from);
        continue;
      }
      ++applied_;
      const auto bit = 1u << static_cast<int>(cmd.mode);
      if (!(modes_seen_ & bit)) {
        modes_seen_ |= bit;
        spdlog::info("{}: first command in mode {} ({} from {}:{})", who_, mode_name(cmd.mode),
                     cmd.doubles ? "DllInDoubCtrls" : "PX4SILIntFloat", inet_ntoa(from.sin_addr),
                     ntohs(from.sin_port));
      }
      active_ = cmd;
    }
  }

  void reject(Rejection r, std::size_t n, const sockaddr_in& from, const std::string& why = "") {
    const int k = static_cast<int>(r);
    if (rejected_[k]++ == 0) {
      spdlog::warn(
          "{}: rejected a datagram from {}:{}: {} ({}); not applied. Further ones of this "
          "kind are counted (outCopterData[{}]) and reported at exit",
          who_, inet_ntoa(from.sin_addr), ntohs(from.sin_port), rflysim::rejection_name(r),
          why.empty() ? rflysim::describe(r, rx_.data(), n, copter_id_) : why, 3 + k);
    }
  }

  // PX4ModelInParams (FaultInParams): the vehicle's fault state changes by the flagged entries;
  // a state Kestrel can apply becomes FaultInjection rotor faults for the motors whose
  // efficiency changed (handed over in hand_over_faults). Anything else is rejected whole.
  void fault(const ecs::Registry& reg, std::size_t n, const sockaddr_in& from) {
    rflysim::FaultParams p;
    std::string why;
    Rejection r = rflysim::decode_fault(rx_.data(), n, p, why);
    std::vector<double> efficiency;
    rflysim::FaultState next = faults_;
    if (r == Rejection::kNone) {
      next.apply(p);
      why = fault_target_problem(reg);
      if (why.empty()) {
        const auto* rotors = reg.try_get<c::RotorVelocities>(vehicle_.model);
        why = rflysim::motor_efficiencies(next, rotors ? rotors->velocity.size() : 0, efficiency);
      }
      if (!why.empty()) r = Rejection::kFault;
    }
    if (r != Rejection::kNone) {
      reject(r, n, from, why);
      return;
    }
    faults_ = next;
    if (faults_applied_++ == 0) {
      spdlog::info("{}: first fault parameters (PX4ModelInParams, fault ID {}) from {}:{}", who_,
                   faults_.values[0], inet_ntoa(from.sin_addr), ntohs(from.sin_port));
    }
    fault_efficiency_.resize(efficiency.size(), 1.0);
    const std::string model = reg.get<c::Name>(vehicle_.model).value;
    for (std::size_t i = 0; i < efficiency.size(); ++i) {
      if (efficiency[i] == fault_efficiency_[i]) continue;
      pending_faults_ += fmt::format(
          "<fault type=\"rotor\" model=\"{}\" rotor=\"{}\" "
          "efficiency=\"{}\"/>",
          model, i, efficiency[i]);
      fault_efficiency_[i] = efficiency[i];
    }
  }

  // Why this vehicle's faults cannot go to FaultInjection ("" when they can).
  std::string fault_target_problem(const ecs::Registry& reg) const {
    if (!reg.has<c::FaultCommandTopic>(vehicle_.world)) {
      return "the world declares no FaultInjection system, which applies the faults (add <plugin "
             "filename=\"kestrel-fault-injection-system\" "
             "name=\"kestrel::systems::FaultInjection\"/> to the <world>)";
    }
    if (reg.parent(vehicle_.model) != vehicle_.world) {
      return fmt::format("model '{}' is nested; FaultInjection's faults name models of the world",
                         reg.scoped_name(vehicle_.model));
    }
    return "";
  }

  // The faults decided so far become FaultInjection's run-time command (components::
  // FaultCommand), applied at its next PreUpdate; one already waiting there (from transport)
  // goes first and these follow at the next step.
  void hand_over_faults(ecs::Registry& reg) {
    if (pending_faults_.empty()) return;
    auto* cmd = reg.try_get<c::FaultCommand>(vehicle_.world);
    if (!cmd) cmd = &reg.add<c::FaultCommand>(vehicle_.world);
    if (!cmd->text.empty()) return;
    cmd->text = std::move(pending_faults_);
    cmd->source = who_ + " (RflySim FaultInParams)";
    pending_faults_.clear();
  }

  void send_truth(Duration t, const ecs::Registry& reg) {
    const Truth truth = reader_.truth(reg);
    rflysim::VehicleInfo v;
    v.copter_id = copter_id_;
    v.vehicle_type = vehicle_type_;
    v.runned_time = to_seconds(t);
    v.vel_ned = enu_to_ned(truth.v_WB_E);
    v.pos_ned = enu_to_ned(truth.X_EB.Pos());
    v.q_ned_frd = enu_flu_to_ned_frd(truth.X_EB.Rot());
    v.euler = euler_ned_frd(truth.X_EB.Rot());
    if (const auto* rotors = reg.try_get<c::RotorVelocities>(vehicle_.model)) {
      for (std::size_t i = 0; i < std::min<std::size_t>(8, rotors->velocity.size()); ++i) {
        v.motor_rpm[i] = std::abs(rotors->velocity[i]) * 60.0 / (2 * M_PI);
      }
    }
    v.acc_frd = flu_to_frd(truth.specific_force_B);
    v.rate_frd = flu_to_frd(truth.w_WB_B);
    v.latitude_deg = truth.latitude_deg;
    v.longitude_deg = truth.longitude_deg;
    v.altitude = truth.altitude;
    const auto d = rflysim::vehicle_info_60d(v);
    send(rflysim::encode_doubles(d.data(), d.size()));
  }

  void send_copter_data(Duration t) {
    std::array<double, rflysim::kCopterDataDoubles> d{};
    d[0] = copter_id_;
    d[1] = to_seconds(t);
    d[2] = static_cast<double>(static_cast<int>(active_.mode));
    d[3] = static_cast<double>(applied_);
    for (int k = 1; k < rflysim::kRejectionKinds; ++k) {
      d[3 + k] = static_cast<double>(rejected_[k]);
    }
    d[12] = static_cast<double>(faults_applied_);
    d[13] = faults_.values[0];  // the fault ID in force
    send(rflysim::encode_doubles(d.data(), d.size()));
  }

  void send(const std::vector<std::uint8_t>& bytes) { send_to(bytes, peer_); }
  void send_to(const std::vector<std::uint8_t>& bytes, const sockaddr_in& to) {
    // UDP to a peer that is not listening fails with ECONNREFUSED at times: not an error.
    ::sendto(socket_.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to),
             sizeof to);
  }

  bool configured_ = false;
  int copter_id_ = 1;
  std::string who_, address_, peer_address_;
  int port_ = 30100, peer_port_ = 30101;
  double rate_ = 100;
  Duration period_{0}, next_send_{0};
  int vehicle_type_ = 3;
  double max_rotor_ = 800, position_gain_ = 1, yaw_gain_ = 1, max_speed_ = 2, max_yaw_rate_ = 1;
  Vehicle vehicle_;
  SensorReader reader_;
  // HILSensor30d / HILGPS30d (on request).
  bool hil_sensor_ = false, hil_gps_ = false;
  int hil_sensor_port_ = 0, hil_gps_port_ = 0;
  double hil_sensor_rate_ = 250, hil_gps_rate_ = 10;
  Duration hil_sensor_period_{4'000'000}, hil_gps_period_{100'000'000};
  Duration next_hil_sensor_{0}, next_hil_gps_{0};
  GpsReport gps_report_;
  sockaddr_in hil_sensor_to_{}, hil_gps_to_{};
  Fd socket_;
  sockaddr_in peer_{};
  std::array<std::uint8_t, 2048> rx_{};
  Command active_;
  unsigned modes_seen_ = 0;
  std::uint64_t applied_ = 0, faults_applied_ = 0;
  rflysim::FaultState faults_;            // FaultInParams in force
  std::vector<double> fault_efficiency_;  // by actuator number, as last handed to FaultInjection
  std::string pending_faults_;            // <fault> elements not yet handed over
  std::array<std::uint64_t, rflysim::kRejectionKinds> rejected_{};
};

}  // namespace

std::unique_ptr<System> make_rflysim_bridge_system() { return std::make_unique<RflySimBridge>(); }

}  // namespace kestrel::sitl
