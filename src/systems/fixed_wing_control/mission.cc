// FixedWingMission: take-off run, rotation and climb on the runway heading, waypoint legs
// (cross-track guidance, turns begun `acceptance_radius` before the waypoint), approach on a
// glide path to the touchdown point, flare, roll-out to a stop on the runway. Each step: failure
// conditions → advance the item/stage → FixedWingSetpoint for FixedWingControl → MissionState.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/fluid.h"
#include "common/plugin_params.h"
#include "fixed_wing_control/fixed_wing_control.h"
#include "kestrel/components/fixed_wing.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;
using Mode = c::FixedWingSetpoint::Mode;

constexpr const char* kParams =
    "comLinkName, start_time, airspeed, approach_airspeed, rotate_speed, rotate_pitch, "
    "acceptance_radius, track_capture, lookahead, timeout, max_tilt, topic, vtol, "
    "transition_airspeed, vertical_speed, back_transition_distance, takeoff, waypoint, land";

constexpr double kLiftoffHeight = 0.3;     // above the start height: airborne [m]
constexpr double kTouchdownHeight = 0.08;  // above the start height: on the wheels again [m]
constexpr double kStoppedSpeed = 0.2;      // [m/s]
constexpr Duration kStoppedFor{1'000'000'000};
constexpr Duration kLandedFor{500'000'000};  // VTOL: still on the ground this long
// VTOL transition: the multicopter controller is asked for up to this much less than the speed
// along the heading, so that it holds the nose a few degrees up (the wing's angle of attack),
// less as the airspeed approaches transition_airspeed [m/s].
constexpr double kTransitionLag = 0.6;
constexpr double kMaxIntercept = 1.0;  // largest angle between course and leg [rad]

double wrap_pi(double a) { return std::remainder(a, 2 * M_PI); }

struct Item {
  enum class Kind { kTakeoff, kWaypoint, kLand } kind;
  Vector3d position;  // waypoint / touchdown point, world ENU [m]; takeoff: z = altitude
  double glide = 0, flare_height = 0, runway_length = 0, runway_width = 0;  // land
};

class FixedWingMission final : public System,
                               public ISystemConfigure,
                               public ISystemPreUpdate,
                               public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 2; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "FixedWingMission must be declared inside a <model>");
    }
    model_ = entity;
    claim_unique_plugin(r, model_, "FixedWingMission", config);
    link_ = find_link(r, model_, config.get<std::string>("comLinkName"), config, "comLinkName");
    start_ = from_seconds(get_positive_or(config, "start_time", 0.0, true));
    airspeed_ = get_positive(config, "airspeed");
    approach_ = get_positive_or(config, "approach_airspeed", airspeed_);
    vtol_ = config.get_or("vtol", false);
    if (vtol_) {
      transition_ = get_positive(config, "transition_airspeed");
      vertical_ = get_positive_or(config, "vertical_speed", 1.5);
      back_distance_ = get_positive_or(config, "back_transition_distance", 60.0);
      if (!r.has<c::TwistCommand>(model_)) r.add<c::TwistCommand>(model_);
      if (!r.has<c::VelocityControlEnable>(model_)) r.add<c::VelocityControlEnable>(model_, true);
    }
    rotate_ = vtol_ ? 0.0 : get_positive(config, "rotate_speed");
    rotate_pitch_ = get_positive_or(config, "rotate_pitch", 0.15);
    accept_ = get_positive_or(config, "acceptance_radius", 30.0);
    capture_ = get_positive_or(config, "track_capture", 40.0, true);
    lookahead_ = get_positive_or(config, "lookahead", 25.0);
    timeout_ = from_seconds(get_positive_or(config, "timeout", 300.0));
    max_tilt_ = get_positive_or(config, "max_tilt", 1.0);
    const auto topic = config.get_or<std::string>(
        "topic", "/model/" + r.get<c::Name>(model_).value + "/mission/state");
    items_ = parse_items(config);
    reject_unknown_parameters(config, "FixedWingMission", kParams, {"takeoff", "waypoint", "land"});
    name_ = r.scoped_name(model_);
    c::MissionState st;
    st.waypoint_count =
        static_cast<int>(std::count_if(items_.begin(), items_.end(), [](const Item& i) {
          return i.kind == Item::Kind::kWaypoint;
        }));
    r.set(model_, st);
    r.set(model_, c::MissionStateTopic{topic});
    if (!r.has<c::FixedWingSetpoint>(model_)) r.add<c::FixedWingSetpoint>(model_);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { run_ = {}; }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    auto& st = r.get<c::MissionState>(model_);
    auto& sp = r.get<c::FixedWingSetpoint>(model_);
    if (st.phase == c::MissionPhase::kCompleted || st.phase == c::MissionPhase::kFailed) return;
    const auto* X = r.try_get<c::WorldPose>(link_);
    const auto* V = r.try_get<c::WorldLinearVelocity>(link_);
    if (!X || !V) return;
    const Duration now = info.sim_time;
    const Vector3d p = X->value.Pos(), v = V->value;
    if (st.phase == c::MissionPhase::kIdle) {
      if (now < start_) return;
      run_.origin = p;
      run_.runway_course = X->value.Rot().Yaw();
      st.started = now;
      begin_item(st, 0, p, now);
    }
    st.flight_time = to_seconds(now - st.started);
    const double height = p.Z() - run_.origin.Z();
    const double ground_speed = std::hypot(v.X(), v.Y());

    // Failure conditions.
    const Vector3d up = X->value.Rot().RotateVector(Vector3d::UnitZ);
    const double tilt = std::acos(std::clamp(up.Z(), -1.0, 1.0));
    if (tilt > max_tilt_) {
      return fail(st, sp, now, fmt::format("attitude lost (tilt {:.0f} deg)", tilt * 180 / M_PI));
    }
    if (now - st.started > timeout_) {
      return fail(st, sp, now, fmt::format("timeout after {:.1f} s", to_seconds(timeout_)));
    }
    if (run_.airborne && height < kTouchdownHeight && run_.stage != Stage::kFlare &&
        run_.stage != Stage::kRollout && run_.stage != Stage::kDescend) {
      return fail(st, sp, now, fmt::format("hit the ground at {:.1f} {:.1f}", p.X(), p.Y()));
    }

    const Item& item = items_[static_cast<std::size_t>(st.item)];
    air_velocity_ = air_velocity(r, world_of(r, model_));
    if (vtol_ && item.kind != Item::Kind::kWaypoint) {
      return vtol_step(st, sp, item, X->value, v, r, now);
    }
    sp.airspeed = airspeed_;
    sp.climb_rate = 0;
    sp.flare = false;
    switch (item.kind) {
      case Item::Kind::kTakeoff: {
        // Along the runway line through the start point.
        const Vector3d dir{std::cos(run_.runway_course), std::sin(run_.runway_course), 0};
        sp.course = guide(st, run_.origin, dir, p, false);
        sp.altitude = run_.origin.Z() + item.position.Z();
        st.target = {p.X(), p.Y(), sp.altitude};
        st.distance = std::max(0.0, sp.altitude - p.Z());
        if (!run_.airborne) {
          sp.mode = Mode::kGroundRun;
          sp.course = run_.runway_course;
          sp.pitch = ground_speed >= rotate_ ? rotate_pitch_ : 0.0;
          if (height > kLiftoffHeight) {
            run_.airborne = true;
            sp.mode = Mode::kFly;
            spdlog::info("[mission] {}: airborne at t={:.3f} s, {:.1f} m down the runway", name_,
                         to_seconds(now), (p - run_.origin).Length());
          }
        } else {
          sp.mode = Mode::kFly;
          if (p.Z() > sp.altitude - 1.0) next_item(st, p, now);
        }
        break;
      }
      case Item::Kind::kWaypoint: {
        sp.mode = Mode::kFly;
        Vector3d leg = item.position - run_.leg_start;
        leg.Z(0);
        const Vector3d dir = leg.Length() > 1e-6 ? leg.Normalized() : Vector3d::UnitX;
        sp.course = guide(st, run_.leg_start, dir, p, true);
        sp.altitude = item.position.Z();
        Vector3d to = item.position - p;
        to.Z(0);
        st.distance = to.Length();
        // Reached within the acceptance radius, or passed abeam of the waypoint.
        if (st.distance < accept_ || dir.Dot(to) < 0) next_item(st, p, now);
        break;
      }
      case Item::Kind::kLand:
        land(st, sp, item, p, v, height, ground_speed, now);
        break;
    }
  }

 private:
  enum class Stage {
    kGround,
    kAir,
    kApproach,
    kFlare,
    kRollout,  // fixed wing
    kClimb,
    kTransition,
    kBackTransition,
    kHover,
    kDescend,  // VTOL
  };

  // VTOL take-off and landing: the multicopter controller (TwistCommand, world velocity turned
  // into the body frame as MulticopterMission does) with FixedWingControl's setpoint beside it.
  void vtol_step(c::MissionState& st, c::FixedWingSetpoint& sp, const Item& item,
                 const ignition::math::Pose3d& X, const Vector3d& v, ecs::Registry& r,
                 Duration now) {
    const Vector3d p = X.Pos();
    const double yaw = X.Rot().Yaw();
    const double va = (v - air_velocity_).Length();
    auto& enable = r.get<c::VelocityControlEnable>(model_).value;
    Vector3d v_cmd;
    double yaw_target = run_.runway_course;
    sp.airspeed = airspeed_;
    sp.climb_rate = 0;
    sp.flare = false;
    if (item.kind == Item::Kind::kTakeoff) {
      const double alt = run_.origin.Z() + item.position.Z();
      const Vector3d dir{std::cos(run_.runway_course), std::sin(run_.runway_course), 0};
      st.target = {run_.origin.X(), run_.origin.Y(), alt};
      if (run_.stage == Stage::kGround) run_.stage = Stage::kClimb;
      if (run_.stage == Stage::kClimb) {
        // Straight up over the start point.
        sp.mode = Mode::kOff;
        enable = true;
        Vector3d h = st.target - p;
        h.Z(0);
        v_cmd = h * 0.9;
        v_cmd.Z(std::clamp(alt - p.Z(), -vertical_, vertical_));
        st.distance = std::abs(alt - p.Z());
        if (p.Z() - run_.origin.Z() > kLiftoffHeight) run_.airborne = true;
        if (p.Z() > alt - 0.3) {
          run_.stage = Stage::kTransition;
          spdlog::info("[mission] {}: transition at t={:.3f} s", name_, to_seconds(now));
        }
      }
      if (run_.stage == Stage::kTransition) {
        // Wing-borne from here: the fixed-wing controller flies the runway heading at the
        // take-off altitude while the multicopter controller holds the height and speeds up
        // with the aircraft (its rotors blended out by FixedWingControl as the airspeed grows).
        sp.mode = Mode::kFly;
        sp.altitude = p.Z();  // the energy loop speeds up; the height is the rotors' to hold
        sp.course = guide(st, run_.origin, dir, p, false);
        const double ahead = v.Dot(dir);
        // Less nose-up as the wing gains speed (its lift grows with V²).
        const double lag = kTransitionLag * std::max(0.0, 1 - va / transition_);
        v_cmd = dir * std::max(0.0, ahead - lag);
        v_cmd.Z(std::clamp(alt - p.Z(), -vertical_, vertical_));
        st.distance = std::max(0.0, transition_ - va);
        if (va >= transition_) {
          enable = false;
          spdlog::info("[mission] {}: wing-borne at t={:.3f} s, {:.1f} m/s", name_, to_seconds(now),
                       va);
          run_.stage = Stage::kAir;
          next_item(st, p, now);
          return;
        }
      }
    } else {  // land
      Vector3d leg = item.position - run_.leg_start;
      leg.Z(0);
      const Vector3d dir = leg.Length() > 1e-6 ? leg.Normalized() : Vector3d::UnitX;
      Vector3d to = item.position - p;
      to.Z(0);
      const double remaining = dir.Dot(to);
      const double cruise_alt = run_.leg_start.Z();
      const double h0 = run_.origin.Z() - item.position.Z();  // standing height
      yaw_target = std::atan2(dir.Y(), dir.X());
      if (run_.stage == Stage::kApproach) {
        sp.mode = Mode::kFly;
        sp.course = guide(st, run_.leg_start, dir, p, true);
        sp.altitude = cruise_alt;
        st.distance = std::max(0.0, remaining);
        if (remaining < back_distance_) {
          run_.stage = Stage::kBackTransition;
          spdlog::info("[mission] {}: back-transition at t={:.3f} s, {:.1f} m before the point",
                       name_, to_seconds(now), remaining);
        }
      }
      if (run_.stage == Stage::kBackTransition || run_.stage == Stage::kHover) {
        // Throttle off; while fast the wing holds the height (the speed left out), then the
        // multicopter controller brings the aircraft to a hover over the point.
        enable = true;
        st.distance = to.Length();
        sp.course = guide(st, run_.leg_start, dir, p, false);
        sp.altitude = cruise_alt;
        if (va > transition_ * 0.6) {
          sp.mode = Mode::kFly;
          sp.flare = true;  // throttle idle, pitch for the height alone
        } else {
          sp.mode = Mode::kOff;
        }
        Vector3d h = to;
        const double speed = std::min(airspeed_, 0.5 * h.Length());
        v_cmd = h.Length() > 1e-6 ? h.Normalized() * speed : Vector3d::Zero;
        v_cmd.Z(std::clamp(cruise_alt - p.Z(), -vertical_, vertical_));
        if (h.Length() < 1.0 && std::hypot(v.X(), v.Y()) < 0.5) {
          run_.stage = Stage::kDescend;
          spdlog::info("[mission] {}: descending at t={:.3f} s", name_, to_seconds(now));
        }
      }
      if (run_.stage == Stage::kDescend) {
        sp.mode = Mode::kOff;
        const double height = p.Z() - (item.position.Z() + h0);
        Vector3d h = to * 0.9;
        v_cmd = {h.X(), h.Y(), -std::clamp(0.5 * height, 0.3, vertical_)};
        st.distance = std::max(0.0, height);
        if (height < 0.1 && std::abs(v.Z()) < 0.1) {
          if (run_.stopped_since < Duration{0}) run_.stopped_since = now;
          if (now - run_.stopped_since >= kLandedFor) {
            enable = false;
            r.get<c::TwistCommand>(model_) = {};
            return complete(st, sp, p, now, "landed");
          }
        } else {
          run_.stopped_since = Duration{-1};
        }
      }
    }
    auto& twist = r.get<c::TwistCommand>(model_);
    twist.linear = X.Rot().RotateVectorReverse(v_cmd);
    twist.angular.Set(0, 0, -wrap_pi(yaw - yaw_target));
    twist.received = true;
  }

  static std::vector<Item> parse_items(const Element& e) {
    (void)e.children("takeoff");
    (void)e.children("waypoint");
    (void)e.children("land");
    std::vector<Item> items;
    for (const auto& ch : e.children()) {
      const Element& i = *ch;
      if (i.name() == "takeoff") {
        i.reject_unknown_attributes({"altitude"});
        const double alt = attribute_double(i, "altitude");
        if (!(alt > 1)) throw Error(i.where(), "<takeoff> altitude must be > 1 [m]");
        items.push_back({Item::Kind::kTakeoff, {0, 0, alt}});
      } else if (i.name() == "waypoint") {
        i.reject_unknown_attributes({});
        items.push_back({Item::Kind::kWaypoint, i.value<Vector3d>()});
      } else if (i.name() == "land") {
        i.reject_unknown_attributes(
            {"point", "glide_slope", "flare_height", "runway_length", "runway_width"});
        Item it{Item::Kind::kLand, attribute_vector(i, "point")};
        it.glide = attribute_double_or(i, "glide_slope", 0.1);
        it.flare_height = attribute_double_or(i, "flare_height", 1.5);
        it.runway_length = attribute_double_or(i, "runway_length", 200);
        it.runway_width = attribute_double_or(i, "runway_width", 20);
        if (!(it.glide > 0 && it.glide < 0.5)) {
          throw Error(i.where(), "<land> glide_slope must be in (0, 0.5) [rad]");
        }
        for (double x : {it.flare_height, it.runway_length, it.runway_width}) {
          if (!(x > 0)) {
            throw Error(i.where(), "<land> flare_height, runway_length, runway_width must be > 0");
          }
        }
        items.push_back(it);
      }
    }
    if (items.empty() || items.front().kind != Item::Kind::kTakeoff) {
      throw Error(e.where(), "mission: the first item must be <takeoff altitude=\"...\"/>");
    }
    if (items.back().kind != Item::Kind::kLand) {
      throw Error(e.where(), "mission: the last item must be <land point=\"x y z\"/>");
    }
    for (std::size_t k = 1; k + 1 < items.size(); ++k) {
      if (items[k].kind != Item::Kind::kWaypoint) {
        throw Error(e.where(), "mission: only <waypoint>s between <takeoff> and <land>");
      }
    }
    return items;
  }

  // Course along the line through `from` in direction `dir` (horizontal unit vector), turning
  // back onto it from a cross-track error e at atan(e / lookahead). Updates the tracking error.
  double guide(c::MissionState& st, const Vector3d& from, const Vector3d& dir, const Vector3d& p,
               bool count) {
    Vector3d e = p - from;
    e.Z(0);
    const Vector3d left{-dir.Y(), dir.X(), 0};
    const double cross = e.Dot(left), along = e.Dot(dir);
    st.tracking_error = std::abs(cross);
    if (count && along > capture_) {
      st.max_tracking_error = std::max(st.max_tracking_error, st.tracking_error);
    }
    const double bearing = std::atan2(dir.Y(), dir.X());
    return wrap_pi(bearing -
                   std::clamp(std::atan(cross / lookahead_), -kMaxIntercept, kMaxIntercept));
  }

  void land(c::MissionState& st, c::FixedWingSetpoint& sp, const Item& item, const Vector3d& p,
            const Vector3d& v, double height, double ground_speed, Duration now) {
    Vector3d leg = item.position - run_.leg_start;
    leg.Z(0);
    const Vector3d dir = leg.Length() > 1e-6 ? leg.Normalized() : Vector3d::UnitX;
    Vector3d to = item.position - p;
    to.Z(0);
    const double remaining = dir.Dot(to);  // along the approach, to the touchdown point [m]
    st.distance = std::max(0.0, remaining);
    sp.course = guide(st, run_.leg_start, dir, p, true);
    sp.airspeed = approach_;
    const double ground = item.position.Z();
    const double above = p.Z() - ground;         // above the runway, base link
    const double h0 = run_.origin.Z() - ground;  // base link height when standing on the wheels
    if (run_.stage == Stage::kApproach) {
      // The glide path down to the touchdown point, capped at the altitude the leg began at.
      const double path = ground + h0 + std::max(0.0, remaining) * std::tan(item.glide);
      sp.mode = Mode::kFly;
      sp.altitude = std::min(path, run_.leg_start.Z());
      sp.climb_rate = path < run_.leg_start.Z() ? -approach_ * std::tan(item.glide) : 0.0;
      if (above - h0 < item.flare_height) {
        run_.stage = Stage::kFlare;
        spdlog::info("[mission] {}: flare at t={:.3f} s, {:.1f} m before the touchdown point",
                     name_, to_seconds(now), remaining);
      }
    }
    if (run_.stage == Stage::kFlare) {
      // Sink rate proportional to the height left (an exponential flare), at least 0.15 m/s.
      const double left = std::max(0.0, above - h0);
      const double tau = item.flare_height / (approach_ * std::tan(item.glide));
      sp.mode = Mode::kFly;
      sp.flare = true;
      sp.climb_rate = -std::max(0.15, left / tau);
      sp.altitude = p.Z();
      if (height < kTouchdownHeight) {
        run_.stage = Stage::kRollout;
        run_.touchdown = p;
        spdlog::info("[mission] {}: touchdown at t={:.3f} s at {:.1f} {:.1f}, {:.1f} m/s", name_,
                     to_seconds(now), p.X(), p.Y(), v.Length());
      }
    }
    if (run_.stage == Stage::kRollout) {
      sp.mode = Mode::kRollout;
      sp.course = std::atan2(dir.Y(), dir.X());
      // On the runway: from runway_length/4 before the touchdown point to 3/4 beyond it.
      const Vector3d left{-dir.Y(), dir.X(), 0};
      Vector3d e = p - item.position;
      e.Z(0);
      const double along = e.Dot(dir), cross = e.Dot(left);
      if (along < -item.runway_length / 4 || along > item.runway_length * 3 / 4 ||
          std::abs(cross) > item.runway_width / 2) {
        return fail(st, sp, now,
                    fmt::format("off the runway at {:.1f} {:.1f} ({:.1f} m along, {:.1f} m "
                                "across from the touchdown point)",
                                p.X(), p.Y(), along, cross));
      }
      if (ground_speed < kStoppedSpeed) {
        if (run_.stopped_since < Duration{0}) run_.stopped_since = now;
        if (now - run_.stopped_since >= kStoppedFor) {
          complete(st, sp, p, now, "stopped");
        }
      } else {
        run_.stopped_since = Duration{-1};
      }
    }
  }

  void begin_item(c::MissionState& st, int index, const Vector3d& p, Duration now) {
    st.item = index;
    run_.leg_start = p;
    const Item& it = items_[static_cast<std::size_t>(index)];
    switch (it.kind) {
      case Item::Kind::kTakeoff:
        st.phase = c::MissionPhase::kTakeoff;
        break;
      case Item::Kind::kWaypoint:
        st.phase = c::MissionPhase::kWaypoint;
        st.target = it.position;
        ++st.waypoint;
        // A leg begins at the previous waypoint (the first at where the climb ended).
        if (index > 0 &&
            items_[static_cast<std::size_t>(index) - 1].kind == Item::Kind::kWaypoint) {
          run_.leg_start = items_[static_cast<std::size_t>(index) - 1].position;
        }
        break;
      case Item::Kind::kLand:
        st.phase = c::MissionPhase::kLand;
        st.target = it.position;
        run_.stage = Stage::kApproach;
        if (index > 0 &&
            items_[static_cast<std::size_t>(index) - 1].kind == Item::Kind::kWaypoint) {
          run_.leg_start = items_[static_cast<std::size_t>(index) - 1].position;
        }
        break;
    }
    spdlog::debug("[mission] {}: item {} ({}) at t={:.3f} s", name_, index,
                  c::mission_phase_name(st.phase), to_seconds(now));
  }

  void next_item(c::MissionState& st, const Vector3d& p, Duration now) {
    begin_item(st, st.item + 1, p, now);
  }

  // Everything off; `where` says how it ended ("stopped", "landed").
  void complete(c::MissionState& st, c::FixedWingSetpoint& sp, const Vector3d& p, Duration now,
                const char* where) {
    sp = {};
    st.phase = c::MissionPhase::kCompleted;
    st.finished = now;
    st.flight_time = to_seconds(now - st.started);
    spdlog::info(
        "[mission] {}: completed at t={:.3f} s (flight {:.1f} s, max tracking error {:.3f} m), "
        "{} at {:.2f} {:.2f}",
        name_, to_seconds(now), st.flight_time, st.max_tracking_error, where, p.X(), p.Y());
  }

  void fail(c::MissionState& st, c::FixedWingSetpoint& sp, Duration now, std::string reason) {
    sp = {};
    st.phase = c::MissionPhase::kFailed;
    st.finished = now;
    st.reason = std::move(reason);
    spdlog::warn("[mission] {}: failed at t={:.3f} s: {}", name_, to_seconds(now), st.reason);
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::string name_;
  Duration start_{0}, timeout_{0};
  bool vtol_ = false;
  double transition_ = 0, vertical_ = 0, back_distance_ = 0;
  Vector3d air_velocity_;
  double airspeed_ = 0, approach_ = 0, rotate_ = 0, rotate_pitch_ = 0, accept_ = 0, capture_ = 0,
         lookahead_ = 0, max_tilt_ = 0;
  std::vector<Item> items_;
  struct Run {
    Vector3d origin, leg_start, touchdown;
    double runway_course = 0;
    bool airborne = false;
    Stage stage = Stage::kGround;
    Duration stopped_since{-1};
  } run_;
};

}  // namespace

std::unique_ptr<System> make_fixed_wing_mission() { return std::make_unique<FixedWingMission>(); }

}  // namespace kestrel::systems
