// MulticopterMission: a list of items (takeoff, waypoint, hold, land) flown through the velocity
// controller. Each step: check failure conditions → advance the item when reached → velocity
// command toward the target along the current leg (cross-track corrected) → MissionState.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "multicopter_control/multicopter_control.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "comLinkName, start_time, cruise_speed, vertical_speed, acceptance_radius, timeout, "
    "max_tilt, topic, takeoff, waypoint, hold, land";

// Guidance gains: along-track and vertical position → velocity [1/s], cross-track [1/s].
constexpr double kAlongGain = 0.9;
constexpr double kCrossGain = 2.0;
constexpr double kVerticalGain = 1.0;
constexpr double kYawGain = 1.0;
constexpr double kLandedHeight = 0.15;       // above the start height [m]
constexpr Duration kLandedFor{500'000'000};  // still on the ground this long [ns]
constexpr double kArrivalSpeed = 0.5;        // [m/s]

struct Item {
  enum class Kind { kTakeoff, kWaypoint, kHold, kLand } kind;
  Vector3d position;  // waypoint ENU [m]; takeoff: z = altitude above start
  Duration hold{0};   // hold time (hold items, waypoint hold attribute)
};

double wrap_pi(double a) { return std::remainder(a, 2 * M_PI); }

class MulticopterMission final : public System,
                                 public ISystemConfigure,
                                 public ISystemPreUpdate,
                                 public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics - 2; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "MulticopterMission must be declared inside a <model>");
    }
    model_ = entity;
    claim_unique_plugin(r, model_, "MulticopterMission", config);
    link_ = find_link(r, model_, config.get<std::string>("comLinkName"), config, "comLinkName");
    start_ = sdf_start_ = from_seconds(get_positive_or(config, "start_time", 0.0, true));
    cruise_ = get_positive_or(config, "cruise_speed", 2.0);
    vertical_ = get_positive_or(config, "vertical_speed", 1.0);
    accept_ = get_positive_or(config, "acceptance_radius", 0.2);
    timeout_ = from_seconds(get_positive_or(config, "timeout", 300.0));
    max_tilt_ = get_positive_or(config, "max_tilt", 1.2);
    const auto topic = config.get_or<std::string>(
        "topic", "/model/" + r.get<c::Name>(model_).value + "/mission/state");
    items_ = parse_items(config);
    reject_unknown_parameters(config, "MulticopterMission", kParams,
                              {"takeoff", "waypoint", "hold", "land"});  // checked in parse_items
    sdf_items_ = items_;
    name_ = r.scoped_name(model_);
    c::MissionState st;
    st.waypoint_count = waypoint_count(items_);
    r.set(model_, st);
    r.set(model_, c::MissionStateTopic{topic});
    r.set(model_, c::MissionCommandTopic{"/model/" + r.get<c::Name>(model_).value + "/mission"});
    if (!r.has<c::TwistCommand>(model_)) r.add<c::TwistCommand>(model_);
    // The controller is enabled (Gazebo's default) and waits for the first twist.
    if (!r.has<c::VelocityControlEnable>(model_)) r.add<c::VelocityControlEnable>(model_, true);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    run_ = {};
    items_ = sdf_items_;
    start_ = sdf_start_;
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    if (auto* cmd = r.try_get<c::MissionCommand>(model_); cmd && !cmd->text.empty()) {
      replace_mission(*cmd, r, info.sim_time);
      cmd->text.clear();
    }
    auto& st = r.get<c::MissionState>(model_);
    if (st.phase == c::MissionPhase::kCompleted || st.phase == c::MissionPhase::kFailed) return;
    const auto* X = r.try_get<c::WorldPose>(link_);
    const auto* V = r.try_get<c::WorldLinearVelocity>(link_);
    if (!X || !V) return;
    const Duration now = info.sim_time;
    const Vector3d p = X->value.Pos(), v = V->value;
    if (st.phase == c::MissionPhase::kIdle) {
      if (now < start_) return;
      run_.origin = p;
      run_.yaw = X->value.Rot().Euler().Z();
      run_.leg_start = p;
      run_.deadline_from = now;
      st.started = now;
      r.get<c::VelocityControlEnable>(model_).value = true;
      begin_item(st, 0, p, now);
    }
    st.flight_time = to_seconds(now - st.started);

    // Failure conditions.
    const Vector3d up = X->value.Rot().RotateVector(Vector3d::UnitZ);
    if (std::acos(std::clamp(up.Z(), -1.0, 1.0)) > max_tilt_) {
      return fail(st, now,
                  fmt::format("attitude lost (tilt {:.0f} deg)",
                              std::acos(std::clamp(up.Z(), -1.0, 1.0)) * 180 / M_PI));
    }
    if (const auto* b = r.try_get<c::Battery>(model_); b && b->empty) {
      return fail(st, now, "battery empty");
    }

    if (now - run_.deadline_from > timeout_) {
      return fail(st, now, fmt::format("timeout after {:.1f} s", to_seconds(timeout_)));
    }
    const Item& item = items_[static_cast<std::size_t>(st.item)];
    Vector3d v_cmd;
    if (item.kind == Item::Kind::kLand) {
      // Down at up to vertical_speed, slowing near the ground; hold x, y.
      const double height = p.Z() - run_.origin.Z();
      Vector3d h = st.target - p;
      h.Z(0);
      v_cmd = h * kAlongGain;
      v_cmd.Z(-std::clamp(0.5 * height, 0.3, vertical_));
      st.distance = std::max(0.0, height);
      if (height < kLandedHeight && std::abs(v.Z()) < 0.1) {
        if (run_.landed_since < Duration{0}) run_.landed_since = now;
        if (now - run_.landed_since >= kLandedFor) {
          r.get<c::VelocityControlEnable>(model_).value = false;
          r.get<c::TwistCommand>(model_) = {};
          st.phase = c::MissionPhase::kCompleted;
          st.finished = now;
          st.flight_time = to_seconds(now - st.started);
          spdlog::info(
              "[mission] {}: completed at t={:.3f} s (flight {:.1f} s, max tracking "
              "error {:.3f} m)",
              name_, to_seconds(now), st.flight_time, st.max_tracking_error);
          return;
        }
      } else {
        run_.landed_since = Duration{-1};
      }
    } else {
      v_cmd = guide(st, p);
      const bool reached = st.distance < accept_ && v.Length() < kArrivalSpeed;
      if (st.phase == c::MissionPhase::kHold) {
        if (now - run_.phase_started >= run_.hold) next_item(st, p, now);
      } else if (reached) {
        if (item.hold > Duration{0}) {
          st.phase = c::MissionPhase::kHold;
          run_.phase_started = now;
          run_.hold = item.hold;
        } else {
          next_item(st, p, now);
        }
      }
    }
    // Velocity in the body frame (Gazebo's controller tracks R·v), yaw held at its take-off value.
    const double yaw = X->value.Rot().Euler().Z();
    auto& twist = r.get<c::TwistCommand>(model_);
    twist.linear = X->value.Rot().RotateVectorReverse(v_cmd);
    twist.angular.Set(0, 0, -kYawGain * wrap_pi(yaw - run_.yaw));
    twist.received = true;
  }

 private:
  // The items (takeoff, waypoint, hold, land) among `e`'s children, in document order; the
  // first must be a takeoff, the last a land. Marks them read.
  static std::vector<Item> parse_items(const Element& e) {
    (void)e.children("takeoff");
    (void)e.children("waypoint");
    (void)e.children("hold");
    (void)e.children("land");
    std::vector<Item> items;
    for (const auto& ch : e.children()) {
      const Element& i = *ch;
      if (i.name() == "takeoff") {
        i.reject_unknown_attributes({"altitude"});
        const double alt = attribute_double(i, "altitude");
        if (alt <= 0) throw Error(i.where(), "<takeoff> altitude must be > 0 [m]");
        items.push_back({Item::Kind::kTakeoff, {0, 0, alt}, Duration{0}});
      } else if (i.name() == "waypoint") {
        i.reject_unknown_attributes({"hold"});
        const double hold = attribute_double_or(i, "hold", 0.0);
        if (hold < 0) throw Error(i.where(), "<waypoint> hold must be >= 0 [s]");
        items.push_back({Item::Kind::kWaypoint, i.value<Vector3d>(), from_seconds(hold)});
      } else if (i.name() == "hold") {
        i.reject_unknown_attributes({"duration"});
        const double d = attribute_double(i, "duration");
        if (d < 0) throw Error(i.where(), "<hold> duration must be >= 0 [s]");
        items.push_back({Item::Kind::kHold, {}, from_seconds(d)});
      } else if (i.name() == "land") {
        i.reject_unknown_attributes({});
        items.push_back({Item::Kind::kLand, {}, Duration{0}});
      }
    }
    if (items.empty() || items.front().kind != Item::Kind::kTakeoff) {
      throw Error(e.where(), "mission: the first item must be <takeoff altitude=\"...\"/>");
    }
    if (items.back().kind != Item::Kind::kLand) {
      throw Error(e.where(), "mission: the last item must be <land/>");
    }
    return items;
  }

  static int waypoint_count(const std::vector<Item>& items) {
    return static_cast<int>(std::count_if(
        items.begin(), items.end(), [](const Item& i) { return i.kind == Item::Kind::kWaypoint; }));
  }

  // A mission sent at run time: parsed and checked entirely before anything changes. In flight
  // it is flown from the current position (origin kept); otherwise it starts now from here.
  void replace_mission(const c::MissionCommand& cmd, ecs::Registry& r, Duration now) {
    std::vector<Item> items;
    try {
      std::string_view text = cmd.text;
      const bool wrapped = text.find("<mission") != std::string_view::npos;
      const auto e = Element::parse(wrapped ? cmd.text : "<mission>" + cmd.text + "</mission>",
                                    cmd.source.empty() ? "mission command" : cmd.source);
      if (e->name() != "mission") {
        throw Error(e->where(), fmt::format("expected <mission>, found <{}>", e->name()));
      }
      e->reject_unknown_attributes({});
      items = parse_items(*e);
      reject_unknown_parameters(*e, "mission command", "takeoff, waypoint, hold, land",
                                {"takeoff", "waypoint", "hold", "land"});
    } catch (const Error& err) {
      spdlog::error("[mission] {}: rejected the mission sent on {} (nothing changed): {}", name_,
                    cmd.source.empty() ? "?" : cmd.source, err.what());
      return;
    }
    auto& st = r.get<c::MissionState>(model_);
    const bool flying = st.phase != c::MissionPhase::kIdle &&
                        st.phase != c::MissionPhase::kCompleted &&
                        st.phase != c::MissionPhase::kFailed;
    items_ = std::move(items);
    c::MissionState fresh;
    fresh.waypoint_count = waypoint_count(items_);
    if (flying) {
      const Vector3d p = r.get<c::WorldPose>(link_).value.Pos();
      fresh.started = st.started;
      st = fresh;
      run_.deadline_from = now;
      begin_item(st, 0, p, now);
    } else {
      st = fresh;  // idle: starts at start_time or, if that has passed, at the next step
      if (now > start_) start_ = now;
    }
    spdlog::info("[mission] {}: new mission from {} at t={:.3f} s: {} items, {} waypoints{}", name_,
                 cmd.source, to_seconds(now), items_.size(), st.waypoint_count,
                 flying ? " (flown from the current position)" : "");
  }

  // Velocity toward st.target along the leg from run_.leg_start, with cross-track correction.
  Vector3d guide(c::MissionState& st, const Vector3d& p) {
    const Vector3d e = st.target - p;
    st.distance = e.Length();
    Vector3d leg = st.target - run_.leg_start;
    leg.Z(0);
    Vector3d e_h = e;
    e_h.Z(0);
    Vector3d v_h;
    if (leg.Length() > 1e-6) {
      const Vector3d d = leg.Normalized();
      const double along = d.Dot(e_h);
      const Vector3d cross = e_h - d * along;  // from p to the leg line, horizontal
      v_h = d * std::clamp(kAlongGain * along, -cruise_, cruise_) + cross * kCrossGain;
      st.tracking_error = cross.Length();
      if (st.phase == c::MissionPhase::kWaypoint) {
        st.max_tracking_error = std::max(st.max_tracking_error, st.tracking_error);
      }
    } else {
      v_h = e_h * kAlongGain;
      st.tracking_error = 0;
    }
    if (v_h.Length() > cruise_) v_h = v_h.Normalized() * cruise_;
    return {v_h.X(), v_h.Y(), std::clamp(kVerticalGain * e.Z(), -vertical_, vertical_)};
  }

  void begin_item(c::MissionState& st, int index, const Vector3d& p, Duration now) {
    st.item = index;
    run_.leg_start = st.item > 0 ? st.target : p;
    run_.phase_started = now;
    run_.landed_since = Duration{-1};
    const Item& it = items_[static_cast<std::size_t>(index)];
    switch (it.kind) {
      case Item::Kind::kTakeoff:
        st.phase = c::MissionPhase::kTakeoff;
        // Straight up (or down) from where the item begins: the take-off point, or the current
        // position when a mission sent at run time replaces one in flight.
        st.target = {p.X(), p.Y(), run_.origin.Z() + it.position.Z()};
        run_.leg_start = st.target;  // vertical: no horizontal leg
        break;
      case Item::Kind::kWaypoint:
        st.phase = c::MissionPhase::kWaypoint;
        st.target = it.position;
        ++st.waypoint;
        break;
      case Item::Kind::kHold:
        st.phase = c::MissionPhase::kHold;
        run_.hold = it.hold;
        run_.leg_start = st.target;
        break;
      case Item::Kind::kLand:
        st.phase = c::MissionPhase::kLand;
        break;
    }
    spdlog::debug("[mission] {}: item {} ({}) at t={:.3f} s", name_, index,
                  c::mission_phase_name(st.phase), to_seconds(now));
  }

  void next_item(c::MissionState& st, const Vector3d& p, Duration now) {
    begin_item(st, st.item + 1, p, now);
  }

  void fail(c::MissionState& st, Duration now, std::string reason) {
    st.phase = c::MissionPhase::kFailed;
    st.finished = now;
    st.reason = std::move(reason);
    spdlog::warn("[mission] {}: failed at t={:.3f} s: {}", name_, to_seconds(now), st.reason);
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::string name_;
  Duration start_{0}, sdf_start_{0}, timeout_{0};
  double cruise_ = 0, vertical_ = 0, accept_ = 0, max_tilt_ = 0;
  std::vector<Item> items_, sdf_items_;  // current mission; the world file's (restored by reset)
  struct Run {
    Vector3d origin, leg_start;
    double yaw = 0;
    Duration phase_started{0}, hold{0}, landed_since{-1}, deadline_from{0};
  } run_;
};

}  // namespace

std::unique_ptr<System> make_multicopter_mission() {
  return std::make_unique<MulticopterMission>();
}

}  // namespace kestrel::systems
