// ArduPilotBridge: Kestrel as the physics backend of ArduPilot's SITL JSON interface
// (`arducopter --model JSON`). See include/kestrel/sitl/sitl.h and src/sitl/README.md.
//
// ArduPilot sends a binary servo packet per physics frame to UDP 9002 + 10·instance:
//   uint16 magic (18458: 16 channels, 29569: 32), uint16 frame_rate [Hz], uint32 frame_count,
//   uint16 pwm[16 or 32] [µs]  — little-endian, packed.
// Kestrel runs physics for 1/frame_rate seconds of sim time (whole steps) with those outputs,
// then answers the sender with one JSON text datagram describing the state at the end of the
// frame. ArduPilot waits for the answer before its next frame, and Kestrel for the next packet
// before stepping again: lockstep by construction (src/sitl/README.md, "Lockstep"). Before the
// first packet the world holds at its first step; only <answer_timeout> makes it run on
// without packets (rotors to zero until they come back).

#include <arpa/inet.h>
#include <fmt/core.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sitl/sitl.h"
#include "sitl/actuator_map.h"
#include "sitl/ardupilot_packet.h"
#include "sitl/autopilot_clock.h"
#include "sitl/exchange_cost.h"
#include "sitl/frames.h"
#include "sitl/lockstep.h"
#include "sitl/net.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {
namespace {

class ArduPilotBridge final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemPostUpdate,
                              public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 1; }

  ~ArduPilotBridge() override {
    if (packets_ == 0 && bad_packets_ == 0) return;
    spdlog::info(
        "{}: {} servo packets, {} frames answered, {} repeated and {} skipped "
        "frame counts, {} restarts, {} stalls, {} bad packets",
        who_, packets_, frames_, repeated_, skipped_, restarts_, stalls_, bad_packets_);
    if (frames_ > 1) spdlog::info("{}: {}", who_, cost_.summary());
  }

  void configure(ecs::Entity entity, const Element& cfg, ecs::Registry& reg,
                 sim::EventBus& events) override {
    instance_ = cfg.get_or<unsigned>("instance", 0u);
    who_ = fmt::format("ArduPilot bridge (model '{}', instance {})", reg.scoped_name(entity),
                       instance_);
    address_ = cfg.get_or<std::string>("address", "127.0.0.1");
    port_ = cfg.get_or<int>("port", default_port(Autopilot::kArduPilot, instance_));
    pwm_min_ = cfg.get_or<double>("pwm_min", 1000.0);
    pwm_max_ = cfg.get_or<double>("pwm_max", 2000.0);
    const double max_rotor = cfg.get_or<double>("max_rotor_velocity", 1000.0);
    const std::string link = cfg.get_or<std::string>("link", "");
    if (!(pwm_max_ > pwm_min_)) {
      throw Error(cfg.where(), fmt::format("{}: <pwm_max> {} must exceed <pwm_min> {}", who_,
                                           pwm_max_, pwm_min_));
    }
    if (!(max_rotor > 0)) throw Error(cfg.where(), who_ + ": <max_rotor_velocity> must be > 0");
    // ArduCopter's quad X: motor 1 front right, 2 back left, 3 front left, 4 back right on
    // SERVO1..4 — the rotor order of the iris, x500 and X3 models.
    map_ = ChannelMap::parse(cfg, ChannelMap::identity(4, max_rotor), 32, max_rotor, who_);
    plugin_where_ = cfg.where();
    surfaces_ = SurfaceMap::parse(cfg, map_, 32, who_);
    vehicle_ = find_vehicle(reg, entity, link, who_);
    limits_ = LockstepLimits::read(cfg, reg, vehicle_.world, who_);
    stop_ = stop_signal_of(events);
    reader_.bind(reg, vehicle_, "");  // ArduPilot has its own WMM: no field note
    socket_ = udp_bind(address_, port_, who_);
    if (!reg.has<components::ActuatorCommands>(entity)) {
      reg.add<components::ActuatorCommands>(entity);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry& reg) override {
    reader_.reset();
    in_frame_ = false;
    restart_ = true;
    if (!reg.has<components::ActuatorCommands>(vehicle_.model)) {
      reg.add<components::ActuatorCommands>(vehicle_.model);
    }
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& reg) override {
    if (info.sim_time < last_t_) {  // a time-only reset (a full one also calls reset())
      restart_ = true;
      if (in_frame_) ideal_end_ = info.sim_time + frame_period_;
    }
    last_t_ = info.sim_time;
    if (!info.paused && !in_frame_) {
      // Between frames: ArduPilot's next packet starts the next frame. Wait for it (for the
      // first one too); only <answer_timeout> runs the world on without it.
      // In lockstep the wait's poll() comes first: one poll() and one recvfrom() per frame.
      Received r = lockstep_active_ ? Received::kNothing : receive();
      if (r != Received::kFrame && (lockstep_active_ || !have_frame_count_)) {
        r = wait_for_packet(info);
      }
      if (r == Received::kFrame) {
        // Frames end on the ideal schedule t0 + k·period (the first step at or after it), so a
        // period that is not a whole number of steps still averages to the frame rate.
        const bool behind = ideal_end_ + frame_period_ <= info.sim_time;
        ideal_end_ =
            (restart_ || behind) ? info.sim_time + frame_period_ : ideal_end_ + frame_period_;
        restart_ = false;
      }
    }
    auto& cmd = reg.get<components::ActuatorCommands>(vehicle_.model);
    map_.apply(inputs_, have_outputs_, cmd.velocity);
    if (!surfaces_resolved_) {
      surfaces_.resolve(reg, vehicle_.model, who_);
      surfaces_resolved_ = true;
    }
    surfaces_.apply(inputs_, true, have_outputs_, reg, vehicle_.model);
    cmd.stamp = info.sim_time;
    reg.mark_changed<components::ActuatorCommands>(vehicle_.model);
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    if (!in_frame_ || info.paused || info.dt.count() == 0) return;
    const Duration t = info.sim_time + info.dt;
    if (t < ideal_end_) return;  // the frame needs more steps
    in_frame_ = false;
    reply(t, reg);
  }

 private:
  enum class Received { kNothing, kFrame, kOther };

  std::string where() const { return fmt::format("UDP {}:{}", address_, port_); }

  // Blocks until a servo packet starts a frame: a line every kWaitReport. Before the first
  // packet <connect_timeout> ends the run (an Error: exit 1); in lockstep <answer_timeout>
  // runs the world on without ArduPilot (rotors to zero); a stop request ends the wait.
  Received wait_for_packet(const UpdateInfo& info) {
    const bool first = !have_frame_count_;
    const auto limit = first ? limits_.connect_s : limits_.answer_s;
    const auto say = [&](double waited) {
      if (first) {
        spdlog::info(
            "{}: waiting for ArduPilot instance {} to send its first servo "
            "packet to {} (sim time {:.3f} s held{}{})",
            who_, instance_, where(), to_seconds(info.sim_time),
            waited > 0 ? fmt::format(", {:.0f} s so far", waited) : "",
            limit ? fmt::format(", giving up after {} s", *limit) : "");
      } else {
        spdlog::warn(
            "{}: waiting {:.0f} s (wall clock) for ArduPilot's next "
            "servo packet (after frame {}) on {}; the world holds at sim time {:.3f} "
            "s{}",
            who_, waited, last_frame_count_, where(), to_seconds(info.sim_time),
            limit ? "" : " (--sitl-answer-timeout SEC runs on instead)");
      }
    };
    if (first) say(0);
    Wait wait(stop_, limit);
    for (;;) {
      switch (wait.next({socket_.get()})) {
        case Wait::Event::kReadable:
          if (receive() == Received::kFrame) return Received::kFrame;
          break;
        case Wait::Event::kReport:
          say(wait.waited_s());
          break;
        case Wait::Event::kExpired:
          if (first) {
            throw Error(fmt::format(
                "{}: ArduPilot instance {} sent no servo packet to {} within {} s "
                "(--sitl-connect-timeout / <connect_timeout>); the world stopped at sim time "
                "{:.3f} s. Start ArduPilot SITL with --model JSON (docs/ardupilot.md) or leave "
                "the timeout out to wait as long as it takes",
                who_, instance_, where(), *limit, to_seconds(info.sim_time)));
          }
          ++stalls_;
          restart_ = true;
          lockstep_active_ = false;
          have_outputs_ = false;
          spdlog::warn(
              "{}: no servo packet from ArduPilot within {} s (wall "
              "clock, --sitl-answer-timeout / <answer_timeout>); rotors set to zero and "
              "the world runs on without waiting until packets come back",
              who_, *limit);
          return Received::kNothing;
      }
    }
  }

  // Reads the waiting datagrams up to the first that starts a new frame (kFrame; later ones
  // wait in the socket). Every packet is answered exactly once: a new frame by the reply at
  // its end, a repeated frame count (ArduPilot resends a frame it got no answer to) at once
  // with that frame's reply. Never blocks.
  Received receive() {
    Received result = Received::kNothing;
    for (;;) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(socket_.get(), rx_.data(), rx_.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) return result;
      ServoPacket p;
      std::string error;
      if (!parse_servo_packet(rx_.data(), static_cast<std::size_t>(n), p, error)) {
        if (bad_packets_++ == 0) {
          spdlog::warn(
              "{}: ignoring a malformed servo packet ({}); "
              "further ones are counted and reported at exit",
              who_, error);
        }
        if (result == Received::kNothing) result = Received::kOther;
        continue;
      }
      ++packets_;
      peer_ = from;
      if (have_frame_count_ && p.frame_count == last_frame_count_) {
        if (repeated_++ == 0) {
          spdlog::warn(
              "{}: ArduPilot sent frame {} again (it resends a frame "
              "it got no answer to); answered with that frame's state, without "
              "stepping; further repeats are counted",
              who_, p.frame_count);
        }
        if (!last_reply_.empty()) send_text(last_reply_);
        if (result == Received::kNothing) result = Received::kOther;
        continue;
      }
      if (have_frame_count_ && p.frame_count < last_frame_count_) {
        ++restarts_;
        spdlog::warn("{}: ArduPilot restarted (frame count {} after {})", who_, p.frame_count,
                     last_frame_count_);
      } else if (have_frame_count_ && p.frame_count > last_frame_count_ + 1) {
        const std::uint32_t missed = p.frame_count - last_frame_count_ - 1;
        if (skipped_ == 0) {
          spdlog::warn(
              "{}: frame count jumped from {} to {}: {} frame{} never "
              "arrived (stepping on from the new one; further gaps are counted)",
              who_, last_frame_count_, p.frame_count, missed, missed == 1 ? "" : "s");
        }
        skipped_ += missed;
      }
      if (!have_frame_count_ || !lockstep_active_) {
        spdlog::info(
            "{}: ArduPilot {} ({} channels, {} Hz frames); lockstep on, sim "
            "time advances only on its servo packets",
            who_, have_frame_count_ ? "talks again" : "connected", p.channels, p.frame_rate);
      }
      if (p.channels != checked_channels_) check_channels(p);
      have_frame_count_ = true;
      last_frame_count_ = p.frame_count;
      // PWM 0 is ArduPilot's "no output" on that channel (ardupilot_gazebo's plugin gives its
      // control 0): NaN here, so a rotor gets 0 and a surface its neutral <offset>.
      for (std::size_t i = 0; i < inputs_.size(); ++i) {
        inputs_[i] = p.pwm[i] == 0 ? std::nan("") : (p.pwm[i] - pwm_min_) / (pwm_max_ - pwm_min_);
      }
      have_outputs_ = true;
      lockstep_active_ = true;
      in_frame_ = true;
      frame_period_ = from_seconds(1.0 / p.frame_rate);
      return Received::kFrame;
    }
  }

  // A channel the model maps but the packet does not carry (SERVO17..32 in ArduPilot's default
  // 16-channel packet) would drive nothing: ardupilot_gazebo's plugin logs "channel is greater
  // than the number of servo channels, control not applied" every frame and flies on; Kestrel
  // ends the run at the first such packet, naming the model, the channel and the packet's count.
  void check_channels(const ServoPacket& p) {
    auto refuse = [&](int index, const std::string& where, const std::string& what) {
      throw Error(where.empty() ? plugin_where_ : where,
                  fmt::format("{}: output channel {} (SERVO{}) drives {}, but ArduPilot's servo "
                              "packets carry {} channels (magic {}), so it would read nothing. "
                              "Set ArduPilot's SERVO_32_ENABLE 1 for 32-channel packets, or map "
                              "the output to SERVO1..{}",
                              who_, index, index + 1, what, p.channels,
                              p.channels == 16 ? kServoMagic16 : kServoMagic32, p.channels));
    };
    for (const auto& c : map_.channels) {
      if (static_cast<std::size_t>(c.index) >= p.channels) {
        refuse(c.index, c.where, fmt::format("rotor {}", c.rotor));
      }
    }
    for (const auto& s : surfaces_.surfaces) {
      if (static_cast<std::size_t>(s.index) >= p.channels) {
        refuse(s.index, s.where, "the surface on " + s.topic);
      }
    }
    checked_channels_ = p.channels;
  }

  // The JSON carries the IMU and the truth ArduPilot simulates its GPS, compass and barometer
  // from: a fault on the vehicle's other sensors cannot reach it. Said once per sensor.
  void note_unsent_faults(const ecs::Registry& reg) {
    for (const ecs::Entity e : {vehicle_.magnetometer, vehicle_.air_pressure, vehicle_.navsat,
                                vehicle_.air_speed, vehicle_.altimeter}) {
      const auto* f = e == ecs::kNullEntity ? nullptr : reg.try_get<components::SensorFault>(e);
      if (!f || (!f->stopped && !f->no_fix && f->noise_scale == 1.0 && f->bias.X() == 0 &&
                 f->bias.Y() == 0 && f->bias.Z() == 0)) {
        continue;
      }
      if (std::find(noted_.begin(), noted_.end(), e) != noted_.end()) continue;
      noted_.push_back(e);
      fmt::print(stderr,
                 "kestrel: WARNING: {}: the fault on sensor '{}' does not reach ArduPilot: its "
                 "JSON interface carries only the IMU, and ArduPilot simulates its GPS, compass "
                 "and barometer from the true position and attitude Kestrel sends (inject those "
                 "failures with ArduPilot's SIM_* parameters)\n",
                 who_, reg.scoped_name(e));
    }
  }

  void reply(Duration t, const ecs::Registry& reg) {
    note_unsent_faults(reg);
    const Truth truth = reader_.truth(reg);
    // A stopped IMU reads its last sample: gyro and accel_body are mandatory in every answer.
    const SensorSample s = reader_.read(reg, truth);
    const Vector3d gyro = flu_to_frd(s.gyro), acc = flu_to_frd(s.accel);
    const Vector3d pos = enu_to_ned(truth.X_EB.Pos());
    const Vector3d vel = enu_to_ned(truth.v_WB_E);
    const Quaterniond q = enu_flu_to_ned_frd(truth.X_EB.Rot());
    nlohmann::json j = {
        {"timestamp", to_seconds(timestamp(t))},
        {"imu",
         {{"gyro", {gyro.X(), gyro.Y(), gyro.Z()}}, {"accel_body", {acc.X(), acc.Y(), acc.Z()}}}},
        {"position", {pos.X(), pos.Y(), pos.Z()}},
        {"quaternion", {q.W(), q.X(), q.Y(), q.Z()}},
        {"velocity", {vel.X(), vel.Y(), vel.Z()}},
    };
    last_reply_ = "\n" + j.dump() + "\n";
    send_text(last_reply_);
    cost_.exchange();
    ++frames_;
  }

  // ArduPilot's clock: sim time, continuing from the last value sent across world resets.
  Duration timestamp(Duration t) {
    const int jumps = clock_.jumps();
    const Duration at = clock_.at(t);
    if (clock_.jumps() != jumps) {
      spdlog::warn(
          "{}: the world was reset while ArduPilot is "
          "connected; its clock cannot go back, so the JSON timestamp continues from "
          "{:.6f} s (sim time + {:.6f} s) and ArduPilot sees the vehicle jump to its "
          "reset state",
          who_, to_seconds(at), to_seconds(clock_.offset()));
    }
    return at;
  }

  void send_text(const std::string& text) {
    ::sendto(socket_.get(), text.data(), text.size(), 0, reinterpret_cast<const sockaddr*>(&peer_),
             sizeof peer_);
  }

  AutopilotClock clock_;  // ArduPilot's clock (JSON timestamp)
  Duration last_t_{0};    // sim time of the previous PreUpdate
  unsigned instance_ = 0;
  std::string who_, address_;
  int port_ = 9002;
  double pwm_min_ = 1000, pwm_max_ = 2000;
  LockstepLimits limits_;
  const sim::StopSignal* stop_ = nullptr;
  ChannelMap map_;
  SurfaceMap surfaces_;  // control surfaces (planes, VTOLs)
  bool surfaces_resolved_ = false;
  std::string plugin_where_;         // FILE:LINE of the bridge's <plugin>
  std::size_t checked_channels_ = 0;  // packet channel count the maps were checked against
  Vehicle vehicle_;
  SensorReader reader_;

  Fd socket_;
  sockaddr_in peer_{};
  std::array<std::uint8_t, 2048> rx_{};
  std::array<double, 32> inputs_{};
  bool have_outputs_ = false;
  bool lockstep_active_ = false;
  bool in_frame_ = false;
  bool have_frame_count_ = false;
  std::uint32_t last_frame_count_ = 0;
  Duration frame_period_{0}, ideal_end_{0};
  bool restart_ = true;  // the next frame starts a new schedule (first frame, after a stall)
  std::string last_reply_;
  std::vector<ecs::Entity> noted_;  // sensors whose fault was said not to reach ArduPilot
  std::uint64_t packets_ = 0, frames_ = 0, repeated_ = 0, skipped_ = 0, restarts_ = 0, stalls_ = 0,
                bad_packets_ = 0;
  ExchangeCost cost_;
};

}  // namespace

std::unique_ptr<System> make_ardupilot_bridge_system() {
  return std::make_unique<ArduPilotBridge>();
}

}  // namespace kestrel::sitl
