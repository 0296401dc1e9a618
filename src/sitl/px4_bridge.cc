// Px4Bridge: Kestrel as the simulator side of PX4's simulator_mavlink module (MAVLink v2 over
// TCP, Kestrel listening). See include/kestrel/sitl/sitl.h and src/sitl/README.md.
//
// Lockstep, step by step (src/sitl/README.md, "Lockstep"):
//   PreUpdate of every step: without a connection, block until PX4 connects (a line every 5 s;
//     <connect_timeout> ends the run with an error). Connected but no HIL_ACTUATOR_CONTROLS yet
//     (PX4 boots): the world runs at real time (components::RealTimePacing) without waiting.
//   PostUpdate of step k (state at t = end of step k): if a sensor message is due, send
//     HIL_SENSOR (+ HIL_STATE_QUATERNION, + HIL_GPS when due); PX4's clock becomes t.
//   PreUpdate of step k+1: once PX4 has answered on this connection, block until the
//     HIL_ACTUATOR_CONTROLS answering that message arrives (a warning every 5 s), then write
//     ActuatorCommands; physics (Update) runs only after that. Only <answer_timeout> makes the
//     world run on without an answer (rotors to zero until PX4 answers again).

#include <fmt/core.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "kestrel/components/multicopter.h"
#include "kestrel/components/pacing.h"
#include "kestrel/components/world.h"
#include "kestrel/sitl/sitl.h"
#include "sitl/actuator_map.h"
#include "sitl/autopilot_clock.h"
#include "sitl/exchange_cost.h"
#include "sitl/frames.h"
#include "sitl/hil.h"
#include "sitl/lockstep.h"
#include "sitl/mavlink/codec.h"
#include "sitl/net.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {
namespace {

namespace mav = mavlink;

constexpr double kGravity = 9.80665;  // for milli-g [m/s²]
constexpr mav::Endpoint kSelf{1, 51};

template <class T>
T saturate(double v) {
  if (!std::isfinite(v)) return 0;
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::lround(std::clamp(v, lo, hi)));
}

Duration period_of(double rate_hz) { return from_seconds(1.0 / rate_hz); }

class Px4Bridge final : public System,
                        public ISystemConfigure,
                        public ISystemPreUpdate,
                        public ISystemPostUpdate,
                        public ISystemReset {
 public:
  // Before the motor model (kPrePhysics), so the commands it reads are this step's.
  int priority() const override { return priority::kPrePhysics - 1; }

  ~Px4Bridge() override {
    if (connections_ == 0) return;
    const auto& s = parser_.stats();
    spdlog::info(
        "{}: {} connection{}, {} bytes received, {} lockstep exchanges, {} "
        "stalls; bad input: {} frames (bad CRC {}, bad length {}, unknown id {}, bad "
        "flags {}), {} bytes skipped",
        who_, connections_, connections_ == 1 ? "" : "s", bytes_received_, exchanges_, stalls_,
        bad_frames(), s.bad_crc, s.bad_length, s.unknown_id, s.bad_flags, s.skipped_bytes);
    if (exchanges_ > 1) spdlog::info("{}: {}", who_, cost_.summary());
  }

  void configure(ecs::Entity entity, const Element& cfg, ecs::Registry& reg,
                 sim::EventBus& events) override {
    instance_ = cfg.get_or<unsigned>("instance", 0u);
    who_ = fmt::format("PX4 bridge (model '{}', instance {})", reg.scoped_name(entity), instance_);
    address_ = cfg.get_or<std::string>("address", "127.0.0.1");
    port_ = cfg.get_or<int>("port", default_port(Autopilot::kPx4, instance_));
    const double sensor_rate = cfg.get_or<double>("sensor_rate", 250.0);
    const double gps_rate = cfg.get_or<double>("gps_rate", 10.0);
    lockstep_ = cfg.get_or<bool>("lockstep", true);
    eph_cm_ = cfg.get_or<double>("gps_eph", 0.3) * 100.0;
    epv_cm_ = cfg.get_or<double>("gps_epv", 0.4) * 100.0;
    satellites_ = cfg.get_or<int>("gps_satellites", 10);
    const double max_rotor = cfg.get_or<double>("max_rotor_velocity", 1000.0);
    const double distance_min = cfg.get_or<double>("distance_min", 0.1);
    const double distance_max = cfg.get_or<double>("distance_max", 40.0);
    const std::string link = cfg.get_or<std::string>("link", "");
    auto positive = [&](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v)) {
        throw Error(cfg.where(), fmt::format("{}: <{}> must be > 0 (found {})", who_, name, v));
      }
    };
    positive(sensor_rate, "sensor_rate");
    positive(gps_rate, "gps_rate");
    positive(max_rotor, "max_rotor_velocity");
    if (!(distance_min >= 0 && distance_min < distance_max && distance_max <= 655.0)) {
      throw Error(cfg.where(), fmt::format("{}: expected 0 <= <distance_min> < <distance_max> <= "
                                           "655 m (DISTANCE_SENSOR carries cm in 16 bits); found "
                                           "{} and {}",
                                           who_, distance_min, distance_max));
    }
    distance_min_cm_ = distance_min * 100.0;
    distance_max_cm_ = distance_max * 100.0;
    if (satellites_ < 0 || satellites_ > 255) {
      throw Error(cfg.where(), who_ + ": <gps_satellites> must be 0..255");
    }
    sensor_period_ = period_of(sensor_rate);
    gps_period_ = period_of(gps_rate);
    // PX4's quad X order (motor 1 front right, 2 back left, 3 front left, 4 back right) is the
    // rotor order of the iris, x500 and X3 models: channel i drives rotor i.
    map_ = ChannelMap::parse(cfg, ChannelMap::identity(4, max_rotor), 16, max_rotor, who_);
    surfaces_ = SurfaceMap::parse(cfg, map_, 16, who_);

    vehicle_ = find_vehicle(reg, entity, link, who_);
    limits_ = LockstepLimits::read(cfg, reg, vehicle_.world, who_);
    stop_ = stop_signal_of(events);
    reader_.bind(reg, vehicle_, who_);
    const double imu_rate = sensor_rate_of_imu(reg);
    if (imu_rate > 0 && imu_rate < sensor_rate) {
      throw Error(cfg.where(), fmt::format("{}: the model's IMU runs at {} Hz, slower than the "
                                           "bridge's <sensor_rate> {} Hz; PX4 needs new IMU "
                                           "data in every HIL_SENSOR (lower <sensor_rate> or "
                                           "raise the IMU's <update_rate>)",
                                           who_, imu_rate, sensor_rate));
    }
    if (!vehicle_.stand_ins.empty()) {
      std::string list;
      for (const auto& s : vehicle_.stand_ins) list += (list.empty() ? "" : ", ") + s;
      spdlog::info(
          "{}: the model has no {} sensor; using noise-free {} at link "
          "'{}'",
          who_, list, vehicle_.stand_ins.size() > 1 ? "ones" : "one",
          reg.scoped_name(vehicle_.link));
    }
    listener_ = tcp_listen(address_, port_, who_);
    if (!reg.has<components::ActuatorCommands>(entity)) {
      reg.add<components::ActuatorCommands>(entity);
    }
    if (!reg.has<components::RealTimePacing>(entity)) {
      reg.add<components::RealTimePacing>(entity);
    }
    reset_timers();
  }

  void reset(const UpdateInfo&, ecs::Registry& reg) override {
    reader_.reset();
    reset_timers();
    awaiting_ = false;
    if (!reg.has<components::ActuatorCommands>(vehicle_.model)) {
      reg.add<components::ActuatorCommands>(vehicle_.model);
    }
    if (!reg.has<components::RealTimePacing>(vehicle_.model)) {
      reg.add<components::RealTimePacing>(vehicle_.model);
    }
    set_pacing(reg);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& reg) override {
    // In lockstep only the awaited answer is read, by one poll() and one recv() (no system call
    // in the steps between sensor messages; a new connection is noticed while waiting, or every
    // 256 steps); otherwise every step takes what has arrived.
    if (!(lockstep_active_ && lockstep_ && link_.open())) {
      poll_network();
    } else if (info.iterations % 256 == 0) {
      poll_network(true, false);  // the awaited answer is read by wait_for_answer's poll()
    }
    // Hold the world until PX4 is there and has answered the last HIL_SENSOR (a disconnect
    // while waiting for the answer means waiting for a reconnect). Only <answer_timeout> lets
    // the world run on without PX4 once it has connected.
    for (;;) {
      if (!link_.open() && !(connected_once_ && limits_.answer_s)) wait_for_connection(info);
      if (awaiting_ && lockstep_active_) wait_for_answer(info);
      if (link_.open() || (connected_once_ && limits_.answer_s)) break;
    }
    set_pacing(reg);
    // Rotor commands: PX4's last outputs while it is connected, answering and armed.
    const bool active = link_.open() && have_controls_ && armed_ && !stalled_;
    auto& cmd = reg.get<components::ActuatorCommands>(vehicle_.model);
    map_.apply(controls_, active, cmd.velocity);
    if (!surfaces_resolved_) {
      surfaces_.resolve(reg, vehicle_.model, who_);
      surfaces_resolved_ = true;
    }
    surfaces_.apply(controls_, false, active, reg, vehicle_.model);
    cmd.stamp = info.sim_time;
    reg.mark_changed<components::ActuatorCommands>(vehicle_.model);
  }

  // Real time while PX4 boots (connected, no answer yet) or runs without lockstep.
  void set_pacing(ecs::Registry& reg) {
    const bool real_time = link_.open() && (!answered_ || !lockstep_);
    auto& p = reg.get<components::RealTimePacing>(vehicle_.model);
    if (p.active == real_time) return;
    p.active = real_time;
    reg.mark_changed<components::RealTimePacing>(vehicle_.model);
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    if (info.paused || info.dt.count() == 0) return;
    const Duration t = info.sim_time + info.dt;  // the state PostUpdate sees
    if (t < last_t_) {  // a time-only reset (a full one also calls reset())
      reset_timers();
      awaiting_ = false;
    }
    last_t_ = t;
    if (!link_.open()) {  // keep the schedule on multiples of the periods while nobody listens
      while (next_sensor_ <= t) next_sensor_ += sensor_period_;
      while (next_gps_ <= t) next_gps_ += gps_period_;
      return;
    }
    send_messages(t, reg);
    flush();
  }

 private:
  void send_messages(Duration t, const ecs::Registry& reg) {
    if (t >= next_heartbeat_) {
      mav::Heartbeat hb;
      hb.type = mav::mav_type::kGeneric;
      hb.autopilot = mav::mav_autopilot::kInvalid;
      hb.system_status = mav::mav_state::kActive;
      send(hb);
      while (next_heartbeat_ <= t) next_heartbeat_ += std::chrono::seconds(1);
    }
    if (t < next_sensor_) return;
    while (next_sensor_ <= t) next_sensor_ += sensor_period_;
    // PX4's clock: sim time, continuing from the last value sent across world resets.
    const int jumps = clock_.jumps();
    const auto time_usec = static_cast<std::uint64_t>(clock_.at(t).count() / 1000);
    if (clock_.jumps() != jumps) {
      spdlog::warn(
          "{}: the world was reset while PX4 is connected; "
          "PX4's clock cannot go back, so HIL time_usec continues from {} us (sim time "
          "+ {} us) and PX4 sees the vehicle jump to its reset state",
          who_, time_usec, clock_.offset().count() / 1000);
    }
    const Truth truth = reader_.truth(reg);
    send_sensor(time_usec, reader_.read(reg, truth));
    send_state(time_usec, truth, reg);
    const GnssSample gnss = reader_.read_gnss(reg, truth);
    const bool stand_in_due = vehicle_.navsat == ecs::kNullEntity && t >= next_gps_;
    if ((vehicle_.navsat != ecs::kNullEntity && gnss.fresh) || stand_in_due) {
      send_gps(time_usec, gnss);
      while (next_gps_ <= t) next_gps_ += gps_period_;
    }
    if (const RangeSample range = reader_.read_range(reg, truth); range.fresh) {
      send_distance(time_usec, range);
    }
    last_sent_usec_ = time_usec;
    if (lockstep_ && lockstep_active_) {
      awaiting_ = true;
      awaited_usec_ = time_usec;
    }
  }

  double sensor_rate_of_imu(const ecs::Registry& reg) const {
    return sensor_rate(reg, vehicle_.imu);
  }

  void reset_timers() {
    // Messages on multiples of their periods: HIL_SENSOR at 4, 8, 12 ms... (250 Hz).
    next_sensor_ = sensor_period_;
    next_gps_ = gps_period_;
    next_heartbeat_ = Duration{0};
  }

  std::uint64_t bad_frames() const {
    const auto& s = parser_.stats();
    return s.bad_crc + s.bad_length + s.unknown_id + s.bad_flags;
  }

  // Messages are queued and written with one send() per batch (one syscall per exchange).
  template <class M>
  void send(const M& m) {
    const std::size_t at = tx_.size();
    tx_.resize(at + mav::kMaxFrameSize);
    tx_.resize(at + mav::encode(m, seq_++, kSelf, tx_.data() + at));
  }
  void flush() {
    if (!tx_.empty() && link_.open() && !link_.send(tx_.data(), tx_.size())) {
      lost("the connection failed while sending");
    }
    tx_.clear();
  }

  void send_sensor(std::uint64_t time_usec, const SensorSample& s) {
    const HilSensorValues v = hil_sensor_values(s);  // FRD and MAVLink's units (sitl/hil.h)
    mav::HilSensor m;
    m.time_usec = time_usec;
    m.xacc = static_cast<float>(v.acc_frd.X());
    m.yacc = static_cast<float>(v.acc_frd.Y());
    m.zacc = static_cast<float>(v.acc_frd.Z());
    m.xgyro = static_cast<float>(v.gyro_frd.X());
    m.ygyro = static_cast<float>(v.gyro_frd.Y());
    m.zgyro = static_cast<float>(v.gyro_frd.Z());
    m.xmag = static_cast<float>(v.mag_frd.X());
    m.ymag = static_cast<float>(v.mag_frd.Y());
    m.zmag = static_cast<float>(v.mag_frd.Z());
    m.abs_pressure = static_cast<float>(v.abs_pressure);
    m.diff_pressure = static_cast<float>(v.diff_pressure);
    m.pressure_alt = static_cast<float>(v.pressure_alt);
    m.temperature = static_cast<float>(v.temperature);
    m.fields_updated = v.fields_updated;
    send(m);
  }

  void send_state(std::uint64_t time_usec, const Truth& t, const ecs::Registry& reg) {
    mav::HilStateQuaternion m;
    m.time_usec = time_usec;
    const Quaterniond q = enu_flu_to_ned_frd(t.X_EB.Rot());
    m.attitude_quaternion = {static_cast<float>(q.W()), static_cast<float>(q.X()),
                             static_cast<float>(q.Y()), static_cast<float>(q.Z())};
    const Vector3d w = flu_to_frd(t.w_WB_B);
    m.rollspeed = static_cast<float>(w.X());
    m.pitchspeed = static_cast<float>(w.Y());
    m.yawspeed = static_cast<float>(w.Z());
    m.lat = saturate<std::int32_t>(t.latitude_deg * 1e7);
    m.lon = saturate<std::int32_t>(t.longitude_deg * 1e7);
    m.alt = saturate<std::int32_t>(t.altitude * 1000.0);
    const Vector3d v = enu_to_ned(t.v_WB_E) * 100.0;  // cm/s
    m.vx = saturate<std::int16_t>(v.X());
    m.vy = saturate<std::int16_t>(v.Y());
    m.vz = saturate<std::int16_t>(v.Z());
    Vector3d wind;  // the air's velocity: the wind plus a fault's gust
    if (const auto* wc = reg.try_get<components::Wind>(vehicle_.world)) wind = wc->linear_velocity;
    if (const auto* g = reg.try_get<components::WindGust>(vehicle_.world)) {
      wind += g->linear_velocity;
    }
    const double airspeed = (t.v_WB_W - wind).Length() * 100.0;
    m.ind_airspeed = saturate<std::uint16_t>(airspeed);
    m.true_airspeed = saturate<std::uint16_t>(airspeed);
    const Vector3d a = flu_to_frd(t.specific_force_B) * (1000.0 / kGravity);  // milli-g
    m.xacc = saturate<std::int16_t>(a.X());
    m.yacc = saturate<std::int16_t>(a.Y());
    m.zacc = saturate<std::int16_t>(a.Z());
    send(m);
  }

  void send_gps(std::uint64_t time_usec, const GnssSample& g) {
    const HilGpsValues v = hil_gps_values(g, {eph_cm_, epv_cm_, satellites_});  // sitl/hil.h
    mav::HilGps m;
    m.time_usec = time_usec;
    m.fix_type = static_cast<std::uint8_t>(v.fix_type);
    m.lat = saturate<std::int32_t>(v.lat_e7);
    m.lon = saturate<std::int32_t>(v.lon_e7);
    m.alt = saturate<std::int32_t>(v.alt_mm);
    m.eph = saturate<std::uint16_t>(v.eph);
    m.epv = saturate<std::uint16_t>(v.epv);
    m.vel = saturate<std::uint16_t>(v.vel);
    m.vn = saturate<std::int16_t>(v.v_ned_cm.X());
    m.ve = saturate<std::int16_t>(v.v_ned_cm.Y());
    m.vd = saturate<std::int16_t>(v.v_ned_cm.Z());
    m.cog = g.fix ? static_cast<std::uint16_t>(std::min(35999.0, std::round(v.cog)))
                  : std::numeric_limits<std::uint16_t>::max();
    m.satellites_visible = static_cast<std::uint8_t>(v.satellites);
    send(m);
  }

  // The model's altimeter as a downward rangefinder, at the altimeter's rate.
  void send_distance(std::uint64_t time_usec, const RangeSample& r) {
    mav::DistanceSensor m;
    m.time_boot_ms = static_cast<std::uint32_t>(time_usec / 1000);
    m.min_distance = saturate<std::uint16_t>(distance_min_cm_);
    m.max_distance = saturate<std::uint16_t>(distance_max_cm_);
    // Beyond the range (or tilted away from the ground): PX4 treats values outside
    // [min_distance, max_distance] as invalid.
    const double cm = std::isfinite(r.distance) ? r.distance * 100.0 : 65535.0;
    m.current_distance = saturate<std::uint16_t>(cm);
    m.type = mav::mav_distance_sensor::kLaser;
    m.orientation = 25;  // MAV_SENSOR_ROTATION_PITCH_270: facing down
    // Variance in cm², 255 = unknown (never the case: a noise-free altimeter has 0).
    m.covariance = saturate<std::uint8_t>(std::min(254.0, r.variance * 1e4));
    send(m);
  }

  // ---- network --------------------------------------------------------------------------

  std::string where() const { return fmt::format("{}:{}", address_, port_); }

  // Blocks until PX4 connects: a line now and every kWaitReport; <connect_timeout> ends the
  // run (an Error: exit 1); a stop request ends the wait (StepInterrupted).
  void wait_for_connection(const UpdateInfo& info) {
    const char* again = connected_once_ ? "re" : "";
    const auto say = [&](double waited) {
      spdlog::info(
          "{}: waiting for PX4 instance {} to {}connect on TCP {} (sim time "
          "{:.3f} s held{}{})",
          who_, instance_, again, where(), to_seconds(info.sim_time),
          waited > 0 ? fmt::format(", {:.0f} s so far", waited) : "",
          limits_.connect_s ? fmt::format(", giving up after {} s", *limits_.connect_s) : "");
    };
    say(0);
    Wait wait(stop_, limits_.connect_s);
    while (!link_.open()) {
      switch (wait.next({listener_.get()})) {
        case Wait::Event::kReadable:
          accept_pending();
          break;
        case Wait::Event::kReport:
          say(wait.waited_s());
          break;
        case Wait::Event::kExpired:
          throw Error(fmt::format(
              "{}: PX4 instance {} did not {}connect on TCP {} within {} s (--sitl-connect-"
              "timeout / <connect_timeout>); the world stopped at sim time {:.3f} s. Start PX4 "
              "SITL (docs/px4.md) or leave the timeout out to wait as long as it takes",
              who_, instance_, again, where(), *limits_.connect_s, to_seconds(info.sim_time)));
      }
    }
  }

  void accept_pending() {
    // Every connection waiting in the backlog: the newest one is PX4 (each replaces the last).
    for (Fd c = tcp_accept(listener_); c; c = tcp_accept(listener_)) {
      if (link_.open()) {
        spdlog::info("{}: a new PX4 connection replaces the current one", who_);
      }
      link_ = TcpLink(std::move(c));
      parser_.clear();
      have_controls_ = false;
      answered_ = false;
      lockstep_active_ = false;
      awaiting_ = false;
      stalled_ = false;
      connected_once_ = true;
      ++connections_;
      spdlog::info("{}: PX4 connected on TCP {}", who_, where());
    }
  }

  void lost(const char* why) {
    link_.close();
    spdlog::warn("{}: PX4 disconnected ({}); {}", who_, why,
                 limits_.answer_s ? "rotors set to zero, the world runs on and waits for a "
                                    "reconnect on TCP " +
                                        where() + " (--sitl-answer-timeout)"
                                  : "the world holds until PX4 reconnects on TCP " + where());
    have_controls_ = false;
    lockstep_active_ = false;
    awaiting_ = false;
  }

  // Reads what the link has now, then accepts pending connections (never blocks): a peer that
  // closed is seen to go before its successor replaces it.
  void poll_network(bool accept = true, bool read = true) {
    if (read) receive_all();
    if (accept) accept_pending();
  }

  void receive_all() {
    while (link_.open()) {
      const long n = link_.receive(rx_.data(), rx_.size());
      if (n < 0) {
        lost("connection closed by the peer");
        return;
      }
      if (n == 0) return;
      bytes_received_ += static_cast<std::uint64_t>(n);
      const std::uint64_t bad = bad_frames();
      parser_.feed(rx_.data(), static_cast<std::size_t>(n),
                   [&](const mav::Frame& f) { handle(f); });
      if (bad == 0 && bad_frames() > 0) {
        spdlog::warn(
            "{}: malformed MAVLink from PX4 (a frame with a bad CRC, "
            "length, message id or flags) skipped; further ones are counted and "
            "reported at exit",
            who_);
      }
      if (static_cast<std::size_t>(n) < rx_.size()) return;
    }
  }

  // Blocks until PX4 answers the awaited HIL_SENSOR or the connection ends: a warning every
  // kWaitReport; <answer_timeout> runs the world on without the answer (rotors to zero).
  void wait_for_answer(const UpdateInfo& info) {
    Wait wait(stop_, limits_.answer_s);
    while (awaiting_ && link_.open()) {
      switch (wait.next({link_.fd(), listener_.get()})) {
        case Wait::Event::kReadable:
          poll_network(wait.readable(1), wait.readable(0));
          break;
        case Wait::Event::kReport:
          spdlog::warn(
              "{}: waiting {:.0f} s (wall clock) for PX4's answer "
              "(HIL_ACTUATOR_CONTROLS) to HIL_SENSOR time_usec {}; the world holds at "
              "sim time {:.3f} s while the connection is open{}",
              who_, wait.waited_s(), awaited_usec_, to_seconds(info.sim_time),
              limits_.answer_s ? "" : " (--sitl-answer-timeout SEC runs on instead)");
          break;
        case Wait::Event::kExpired:
          ++stalls_;
          stalled_ = true;
          lockstep_active_ = false;
          awaiting_ = false;
          spdlog::warn(
              "{}: PX4 did not answer HIL_SENSOR time_usec {} within "
              "{} s (wall clock, --sitl-answer-timeout / <answer_timeout>); rotors set to "
              "zero and the world runs on without waiting until PX4 answers again",
              who_, awaited_usec_, *limits_.answer_s);
          return;
      }
    }
  }

  void handle(const mav::Frame& f) {
    if (auto a = mav::decode<mav::HilActuatorControls>(f)) {
      for (std::size_t i = 0; i < controls_.size(); ++i) {
        const double u = a->controls[i];
        controls_[i] = std::isfinite(u) ? u : 0.0;
      }
      armed_ = (a->mode & mav::mav_mode_flag::kSafetyArmed) != 0;
      have_controls_ = true;
      // The answer to the awaited HIL_SENSOR carries its time (PX4's lockstep clock); an
      // older one is a late answer to an earlier message: use it, keep waiting.
      if (awaiting_ && a->time_usec >= awaited_usec_) {
        cost_.exchange();
        ++exchanges_;
        awaiting_ = false;
      }
      if (stalled_) {
        spdlog::info("{}: PX4 answers again; lockstep resumed", who_);
        stalled_ = false;
      }
      if (!answered_) {
        answered_ = true;
        std::vector<double> rotors;
        map_.apply(controls_, armed_, rotors);
        if (lockstep_ &&
            std::any_of(rotors.begin(), rotors.end(), [](double w) { return w > 0; })) {
          spdlog::warn(
              "{}: PX4's first answer is armed with rotors turning: "
              "what the world did before it (PX4 booting, at real time) depends on "
              "timing, so this run is not reproducible (arm once lockstep is on)",
              who_);
        }
        spdlog::info("{}: PX4's first answer (time_usec {}): {}", who_, a->time_usec,
                     lockstep_ ? "lockstep on, sim time advances only on PX4's answers"
                               : "<lockstep> is off, the world runs at real time");
      }
      if (lockstep_ && !lockstep_active_) {
        // Lockstep (again) from the last HIL_SENSOR sent on, so that every step after it sees
        // the answer to the message before it (messages PX4 has not answered yet, sent while
        // it booted or stalled, are not waited for).
        if (last_sent_usec_ > a->time_usec) {
          awaiting_ = true;
          awaited_usec_ = last_sent_usec_;
        }
      }
      lockstep_active_ = lockstep_;
    } else if (auto c = mav::decode<mav::CommandLong>(f)) {
      mav::CommandAck ack;
      ack.command = c->command;
      ack.result = mav::mav_result::kUnsupported;
      ack.target_system = f.sysid;
      ack.target_component = f.compid;
      send(ack);
      flush();
    }
    // HEARTBEAT, SYSTEM_TIME and anything else PX4 sends: nothing to do.
  }

  // Configuration.
  unsigned instance_ = 0;
  std::string who_, address_;
  int port_ = 4560;
  bool lockstep_ = true;
  LockstepLimits limits_;
  const sim::StopSignal* stop_ = nullptr;
  double eph_cm_ = 30, epv_cm_ = 40;
  double distance_min_cm_ = 10, distance_max_cm_ = 4000;
  int satellites_ = 10;
  Duration sensor_period_{4'000'000}, gps_period_{100'000'000};
  ChannelMap map_;
  SurfaceMap surfaces_;  // control surfaces (planes, VTOLs)
  bool surfaces_resolved_ = false;
  Vehicle vehicle_;
  SensorReader reader_;
  AutopilotClock clock_;  // PX4's clock (time_usec)
  Duration last_t_{0};    // sim time of the previous PostUpdate

  // Network and lockstep state.
  Fd listener_;
  TcpLink link_;
  mav::Parser parser_;
  std::array<std::uint8_t, 4096> rx_{};
  std::vector<std::uint8_t> tx_;
  std::uint8_t seq_ = 0;
  bool connected_once_ = false;
  bool have_controls_ = false;
  bool answered_ = false;  // PX4 has sent HIL_ACTUATOR_CONTROLS on this connection (booted)
  bool armed_ = false;
  bool lockstep_active_ = false;      // PX4 answered on this connection and has not stalled
  bool awaiting_ = false;             // a HIL_SENSOR waits for its HIL_ACTUATOR_CONTROLS
  std::uint64_t awaited_usec_ = 0;    // time_usec of that HIL_SENSOR
  std::uint64_t last_sent_usec_ = 0;  // time_usec of the last HIL_SENSOR sent
  bool stalled_ = false;
  std::array<double, 16> controls_{};
  Duration next_sensor_{0}, next_gps_{0}, next_heartbeat_{0};
  std::uint64_t connections_ = 0, bytes_received_ = 0, exchanges_ = 0, stalls_ = 0;
  ExchangeCost cost_;
};

}  // namespace

std::unique_ptr<System> make_px4_bridge_system() { return std::make_unique<Px4Bridge>(); }

}  // namespace kestrel::sitl
