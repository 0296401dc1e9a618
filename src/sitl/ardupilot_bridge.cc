// ArduPilotBridge: Kestrel as the physics backend of ArduPilot's SITL JSON interface
// (`arducopter --model JSON`). See include/kestrel/sitl/sitl.h and src/sitl/README.md.
//
// ArduPilot sends a binary servo packet per physics frame to UDP 9002 + 10·instance:
//   uint16 magic (18458: 16 channels, 29569: 32), uint16 frame_rate [Hz], uint32 frame_count,
//   uint16 pwm[16 or 32] [µs]  — little-endian, packed.
// Kestrel runs physics for 1/frame_rate seconds of sim time (whole steps) with those outputs,
// then answers the sender with one JSON text datagram describing the state at the end of the
// frame. ArduPilot waits for the answer before its next frame: lockstep by construction. Kestrel
// waits for the next packet before stepping again; no packet within the timeout → one warning,
// rotors to zero, the world runs on until packets come back.

#include <arpa/inet.h>
#include <fmt/core.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "kestrel/components/multicopter.h"
#include "kestrel/sitl/sitl.h"
#include "sitl/actuator_map.h"
#include "sitl/ardupilot_packet.h"
#include "sitl/autopilot_clock.h"
#include "sitl/frames.h"
#include "sitl/net.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {
namespace {

using Clock = std::chrono::steady_clock;

class ArduPilotBridge final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemPostUpdate,
                              public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 1; }

  ~ArduPilotBridge() override {
    if (frames_ > 0 || bad_packets_ > 0) {
      const double per = frames_ > 1 ? (cpu_last_ - cpu_first_) / double(frames_ - 1) : 0;
      fmt::print(stderr,
                 "kestrel: {}: {} frames answered ({:.1f} us step-thread CPU each), {} "
                 "stalls, {} bad packets\n",
                 who_, frames_, per * 1e6, stalls_, bad_packets_);
    }
  }

  void configure(ecs::Entity entity, const Element& cfg, ecs::Registry& reg,
                 sim::EventBus&) override {
    instance_ = cfg.get_or<unsigned>("instance", 0u);
    who_ = fmt::format("ArduPilot bridge (model '{}', instance {})", reg.scoped_name(entity),
                       instance_);
    address_ = cfg.get_or<std::string>("address", "127.0.0.1");
    port_ = cfg.get_or<int>("port", default_port(Autopilot::kArduPilot, instance_));
    const double timeout = cfg.get_or<double>("lockstep_timeout", 1.0);
    pwm_min_ = cfg.get_or<double>("pwm_min", 1000.0);
    pwm_max_ = cfg.get_or<double>("pwm_max", 2000.0);
    const double max_rotor = cfg.get_or<double>("max_rotor_velocity", 1000.0);
    const std::string link = cfg.get_or<std::string>("link", "");
    if (!(timeout > 0)) throw Error(cfg.where(), who_ + ": <lockstep_timeout> must be > 0 s");
    if (!(pwm_max_ > pwm_min_)) {
      throw Error(cfg.where(), fmt::format("{}: <pwm_max> {} must exceed <pwm_min> {}", who_,
                                           pwm_max_, pwm_min_));
    }
    if (!(max_rotor > 0)) throw Error(cfg.where(), who_ + ": <max_rotor_velocity> must be > 0");
    timeout_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
    // ArduCopter's quad X: motor 1 front right, 2 back left, 3 front left, 4 back right on
    // SERVO1..4 — the rotor order of the iris, x500 and X3 models.
    map_ = ChannelMap::parse(cfg, ChannelMap::identity(4, max_rotor), 32, max_rotor, who_);
    vehicle_ = find_vehicle(reg, entity, link, who_);
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
      // Between frames: take ArduPilot's next packet; once it is talking to us, wait for it.
      Received r = receive(0);
      if (r != Received::kFrame && lockstep_active_) {
        const auto deadline = Clock::now() + timeout_;
        while (r != Received::kFrame && Clock::now() < deadline) {
          const auto ms =
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                  .count();
          r = receive(static_cast<int>(std::max<long>(1, ms)));
        }
        if (r != Received::kFrame) {
          ++stalls_;
          restart_ = true;
          lockstep_active_ = false;
          have_outputs_ = false;
          fmt::print(stderr,
                     "kestrel: WARNING: {}: no servo packet from ArduPilot within "
                     "{:.3f} s (wall clock); rotors set to zero and the world runs on without "
                     "waiting until packets come back\n",
                     who_, std::chrono::duration<double>(timeout_).count());
        }
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

  // Reads every waiting datagram (waiting up to timeout_ms for the first). A new frame starts
  // a frame (kFrame); a duplicate is answered with the last reply.
  Received receive(int timeout_ms) {
    Received result = Received::kNothing;
    if (timeout_ms > 0 && !wait_readable(socket_.get(), timeout_ms)) return result;
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
          fmt::print(stderr,
                     "kestrel: WARNING: {}: ignoring a malformed servo packet ({}); "
                     "further ones are only counted\n",
                     who_, error);
        }
        if (result == Received::kNothing) result = Received::kOther;
        continue;
      }
      peer_ = from;
      if (have_frame_count_ && p.frame_count == last_frame_count_) {
        if (!last_reply_.empty()) send_text(last_reply_);  // ArduPilot resent: same answer
        if (result == Received::kNothing) result = Received::kOther;
        continue;
      }
      if (have_frame_count_ && p.frame_count < last_frame_count_) {
        fmt::print(stderr, "kestrel: {}: ArduPilot restarted (frame count went back)\n", who_);
      }
      if (!have_frame_count_ || !lockstep_active_) {
        fmt::print(stderr,
                   "kestrel: {}: ArduPilot connected ({} channels, {} Hz frames); "
                   "lockstep on\n",
                   who_, p.channels, p.frame_rate);
      }
      have_frame_count_ = true;
      last_frame_count_ = p.frame_count;
      for (std::size_t i = 0; i < inputs_.size(); ++i) {
        inputs_[i] = i < p.channels ? (p.pwm[i] - pwm_min_) / (pwm_max_ - pwm_min_) : 0.0;
      }
      have_outputs_ = true;
      lockstep_active_ = true;
      in_frame_ = true;
      frame_period_ = from_seconds(1.0 / p.frame_rate);
      return Received::kFrame;  // one frame at a time; later packets wait in the socket
    }
  }

  void reply(Duration t, const ecs::Registry& reg) {
    const Truth truth = reader_.truth(reg);
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
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    cpu_last_ = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    if (frames_ == 0) cpu_first_ = cpu_last_;
    ++frames_;
  }

  // ArduPilot's clock: sim time, continuing from the last value sent across world resets.
  Duration timestamp(Duration t) {
    const int jumps = clock_.jumps();
    const Duration at = clock_.at(t);
    if (clock_.jumps() != jumps) {
      fmt::print(stderr,
                 "kestrel: WARNING: {}: the world was reset while ArduPilot is "
                 "connected; its clock cannot go back, so the JSON timestamp continues from "
                 "{:.6f} s (sim time + {:.6f} s) and ArduPilot sees the vehicle jump to its "
                 "reset state\n",
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
  Clock::duration timeout_{};
  ChannelMap map_;
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
  std::uint64_t frames_ = 0, stalls_ = 0, bad_packets_ = 0;
  double cpu_first_ = 0, cpu_last_ = 0;  // step-thread CPU time [s] at the first/last answer
};

}  // namespace

std::unique_ptr<System> make_ardupilot_bridge_system() {
  return std::make_unique<ArduPilotBridge>();
}

}  // namespace kestrel::sitl
