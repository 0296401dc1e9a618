// TrajectoryFollower: gz-sim's waypoint follower. Each step the next 2D waypoint is seen from
// the link (z ignored): if its bearing is within bearing_tolerance [deg] the link is pushed
// forward by `force` [N] along its centre-of-mass frame's x, otherwise turned by ±`torque`
// [N·m] about its z; within range_tolerance [m] the waypoint is reached and the next one taken
// (the last one is held: nothing more is applied). Waypoints are given, or 8 points of a
// circle, or the two ends of a line, from the link's pose when the world starts.

#include "trajectory_follower/trajectory_follower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ignition/math/Angle.hh>
#include <ignition/math/Vector2.hh>
#include <numbers>
#include <sstream>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector2d;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "link_name, waypoints, circle, line, loop, force, torque, range_tolerance, "
    "bearing_tolerance, zero_vel_on_bearing_reached, topic";

Vector2d parse_vector2(const Element& e) {
  std::istringstream in(e.text());
  double x = 0, y = 0;
  std::string rest;
  if (!(in >> x >> y) || (in >> rest)) {
    throw Error(e.where(), fmt::format("<{}> must be two numbers \"x y\" [m], found '{}'", e.name(),
                                       e.text()));
  }
  return Vector2d(x, y);
}

class TrajectoryFollower final : public System,
                                 public ISystemConfigure,
                                 public ISystemPreUpdate,
                                 public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "TrajectoryFollower");
    link_ = find_link(r, model_, config.get<std::string>("link_name"), config, "link_name");
    Pose3d start = r.get<c::WorldPose>(link_).value;
    start.Pos().Z() = 0;
    const Vector2d origin(start.Pos().X(), start.Pos().Y());
    std::vector<Vector2d> points;
    if (const Element* w = config.child("waypoints")) {
      for (const Element* p : w->children("waypoint")) points.push_back(parse_vector2(*p));
      if (points.empty()) {
        throw Error(w->where(), "TrajectoryFollower: <waypoints> has no <waypoint>");
      }
      reject_unknown_parameters(*w, "TrajectoryFollower <waypoints>", "waypoint");
    } else if (const Element* circle = config.child("circle")) {
      const double radius = get_positive(*circle, "radius");
      reject_unknown_parameters(*circle, "TrajectoryFollower <circle>", "radius");
      // Gazebo's 8 samples, starting at +x of the world from the link's start.
      double angle = 0;
      Vector2d v(radius, 0);
      for (int i = 0; i < 8; ++i) {
        points.push_back(origin + v);
        angle += 2 * std::numbers::pi / 8;
        v.Set(radius * std::cos(angle), radius * std::sin(angle));
      }
    } else if (const Element* line = config.child("line")) {
      const double direction = line->get<double>("direction");  // [rad], world frame
      const double length = get_positive(*line, "length");
      reject_unknown_parameters(*line, "TrajectoryFollower <line>", "direction, length");
      points.push_back(origin);
      // Gazebo: the line's far end in the link's frame (CoordPositionAdd of the start pose).
      const Vector3d end = start.CoordPositionAdd(
          Vector3d(length * std::cos(direction), length * std::sin(direction), 0));
      points.emplace_back(end.X(), end.Y());
    } else {
      throw Error(config.where(),
                  "TrajectoryFollower: give the trajectory as <waypoints>, <circle> or <line>");
    }
    loop_ = config.get_or<bool>("loop", false);
    force_ = config.get_or<double>("force", 60);
    torque_ = config.get_or<double>("torque", 50);
    range_tolerance_ = get_positive_or(config, "range_tolerance", 0.5, true);
    bearing_tolerance_ = get_positive_or(config, "bearing_tolerance", 2.0, true);
    zero_vel_ = config.get_or<bool>("zero_vel_on_bearing_reached", false);
    pause_ = add_bool_input(
        r, model_,
        config.get_or<std::string>("topic", model_topic(r, model_, "trajectory_follower/pause")));
    reject_unknown_parameters(config, "TrajectoryFollower", kParams);
    initial_.waypoints = std::move(points);
    s_ = initial_;
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    if (r.get<c::TopicInputs>(model_).boolean[pause_].value) return;
    if (s_.waypoints.empty()) return;
    Pose3d pose = r.get<c::WorldPose>(link_).value;
    pose.Pos().Z() = 0;
    const Vector3d goal(s_.waypoints.front().X(), s_.waypoints.front().Y(), 0);
    const Vector3d local = pose.Rot().RotateVectorReverse(goal - pose.Pos());
    const double range = local.Length();
    ignition::math::Angle bearing(std::atan2(local.Y(), local.X()));
    bearing.Normalize();
    if (range <= range_tolerance_) {
      if (s_.waypoints.size() == 1) return;
      if (loop_) {
        std::rotate(s_.waypoints.begin(), s_.waypoints.begin() + 1, s_.waypoints.end());
      } else {
        s_.waypoints.erase(s_.waypoints.begin());
      }
      return;
    }
    // The centre-of-mass frame (Gazebo's WorldInertialPose).
    const Pose3d X_WL = r.get<c::WorldPose>(link_).value;
    const auto& inertial = r.get<c::Inertial>(link_).value;
    const ignition::math::Quaterniond com_rot = X_WL.Rot() * inertial.Pose().Rot();
    Vector3d force, torque;
    const double degrees = std::abs(bearing.Degree());
    if (degrees <= bearing_tolerance_) {
      force = com_rot.RotateVector(Vector3d(force_, 0, 0));
      if (zero_vel_ && !s_.zero_set && degrees <= bearing_tolerance_ * 0.5) {
        r.set(link_, c::AngularVelocityCmd{Vector3d::Zero});
        s_.zero_set = true;
      }
    } else {
      if (zero_vel_ && s_.zero_set && r.has<c::AngularVelocityCmd>(link_)) {
        r.remove<c::AngularVelocityCmd>(link_);
        s_.zero_set = false;
      }
      const double sign = bearing.Degree() > 0 ? 1.0 : -1.0;
      torque = com_rot.RotateVector(Vector3d(0, 0, sign * torque_));
    }
    // Gazebo's Link::AddWorldWrench: the force at the centre of mass.
    const Vector3d r_com = X_WL.Rot().RotateVector(inertial.Pose().Pos());
    auto* cmd = r.try_get<c::ExternalWorldWrenchCmd>(link_);
    if (!cmd) cmd = &r.add<c::ExternalWorldWrenchCmd>(link_);
    cmd->force += force;
    cmd->torque += torque + r_com.Cross(force);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { s_ = initial_; }

 private:
  struct State {
    std::vector<Vector2d> waypoints;  // front: the next goal
    bool zero_set = false;
  };
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  bool loop_ = false, zero_vel_ = false;
  double force_ = 60, torque_ = 50, range_tolerance_ = 0.5, bearing_tolerance_ = 2.0;
  std::size_t pause_ = 0;
  State initial_, s_;
};

}  // namespace

std::unique_ptr<System> make_trajectory_follower() {
  return std::make_unique<TrajectoryFollower>();
}

}  // namespace kestrel::systems
