// TrackedVehicle: a twist on cmd_vel becomes the speeds and the centre of rotation of the
// model's left and right tracks, handed to their TrackControllers as messages on their topics
// would be, and odometry as if the tracks were wheels as high as a track, as gz-sim's
// (Fortress) TrackedVehicle computes them. See README.md.
#include "tracked_vehicle/tracked_vehicle.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ignition/math/DiffDriveOdometry.hh>
#include <ignition/math/SpeedLimiter.hh>
#include <limits>
#include <string>
#include <vector>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kParams =
    "left_track, right_track, body_link, tracks_separation, steering_efficiency, "
    "linear_velocity, angular_velocity, odom_publish_frequency, topic, odom_topic, tf_topic, "
    "steering_efficiency_topic, frame_id, child_frame_id, debug, tracks_height";
constexpr double kTrackHeight = 0.2;  // Gazebo's, not a parameter [m]

class TrackedVehicle final : public System,
                             public ISystemConfigure,
                             public ISystemUpdate,
                             public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "TrackedVehicle");
    for (const char* side : {"left_track", "right_track"}) {
      for (const Element* e : config.children(side)) {
        Track t;
        t.left = std::string(side) == "left_track";
        if (!e->has("link")) {
          throw Error(e->where(), fmt::format("TrackedVehicle: <{}> needs a <link>", side));
        }
        const auto link = e->get<std::string>("link");
        find_link(r, model_, link, *e, "link");
        const std::string prefix = "link/" + link;
        t.velocity_topic = as_valid_topic(e->get_or<std::string>(
            "velocity_topic", model_topic(r, model_, prefix + "/track_cmd_vel")));
        t.center_topic = as_valid_topic(e->get_or<std::string>(
            "center_of_rotation_topic",
            model_topic(r, model_, prefix + "/track_cmd_center_of_rotation")));
        t.where = e->where();
        reject_unknown_parameters(*e, "TrackedVehicle",
                                  "link, velocity_topic, center_of_rotation_topic");
        tracks_.push_back(std::move(t));
      }
    }
    bool left = false, right = false;
    for (const auto& t : tracks_) (t.left ? left : right) = true;
    if (!left || !right) {
      throw Error(config.where(),
                  "TrackedVehicle: needs at least one <left_track> and one <right_track>");
    }
    const std::string body = config.get_or<std::string>("body_link", "");
    body_ = body.empty() ? ecs::kNullEntity : find_link(r, model_, body, config, "body_link");
    if (body_ == ecs::kNullEntity) {
      const std::string canonical = canonical_link_name(r, model_);
      if (!canonical.empty()) body_ = r.child_by_name(model_, canonical);
    }
    separation_ = get_positive_or(config, "tracks_separation", 1.0);
    initial_efficiency_ = get_positive_or(config, "steering_efficiency", 0.5);
    for (const auto& [tag, limiter] :
         {std::pair{"linear_velocity", &limit_lin_}, {"angular_velocity", &limit_ang_}}) {
      if (const Element* e = config.child(tag)) {
        read_speed_limits(*e, "", *limiter);
        reject_unknown_parameters(*e, "TrackedVehicle", "{min,max}_{velocity,acceleration,jerk}");
      }
    }
    schedule_.period = publish_period(config, "odom_publish_frequency", 50);
    cmd_ = add_twist_input(r, model_,
                           config.get_or<std::string>("topic", model_topic(r, model_, "cmd_vel")));
    efficiency_in_ =
        add_double_input(r, model_,
                         config.get_or<std::string>("steering_efficiency_topic",
                                                    model_topic(r, model_, "steering_efficiency")));
    odom_ = add_drive_odometry(r, model_, config);
    if (!config.has("child_frame_id")) {  // Gazebo names a child frame only with <body_link>
      r.get<c::TopicOutputs>(model_).odometry[odom_].child_frame_id =
          body.empty() ? "" : r.get<c::Name>(model_).value + "/" + body;
    }
    if (config.get_or("debug", false)) {
      spdlog::warn(
          "{}: TrackedVehicle: <debug> is accepted; Kestrel prints no per-step lines and "
          "publishes no /marker for the centre of rotation",
          config.child("debug")->where());
    }
    // gz-sim's own tracked_vehicle_simple.sdf gives <tracks_height>, which no version of its
    // TrackedVehicle reads (the odometry's track height is fixed).
    if (const Element* e = config.child("tracks_height")) {
      spdlog::warn(
          "{}: TrackedVehicle: <tracks_height> is not a parameter of Gazebo's TrackedVehicle "
          "(its odometry takes a track height of {} m), so Kestrel ignores it too",
          e->where(), kTrackHeight);
    }
    reject_unknown_parameters(config, "TrackedVehicle", kParams);
    reset_state();
  }

  // Gazebo's PostUpdate: UpdateVelocity, then UpdateOdometry, at its simTime (the end of the
  // step). The tracks' TrackControllers read the commands in the next PreUpdate, as they would
  // read the messages Gazebo publishes to them.
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    if (!resolved_) resolve(r);
    const Duration now = info.sim_time + info.dt;
    const auto& in = r.get<c::TopicInputs>(model_);
    bool fresh = false;
    // A message the tracks cannot take (Gazebo would divide by a zero efficiency or pass a NaN
    // on) is refused, loudly, and the last good one stands.
    if (const auto& t = in.twist[cmd_]; t.count != cmd_seen_) {
      cmd_seen_ = t.count;
      if (std::isfinite(t.linear.X()) && std::isfinite(t.angular.Z())) {
        target_lin_ = t.linear.X();
        target_ang_ = t.angular.Z();
        fresh = true;
      } else {
        spdlog::error(
            "TrackedVehicle of '{}': refused a twist on '{}' with linear.x {} and angular.z {} "
            "(not finite); the tracks keep {} m/s, {} rad/s",
            r.scoped_name(model_), t.topic, t.linear.X(), t.angular.Z(), target_lin_, target_ang_);
      }
    }
    if (const auto& e = in.real[efficiency_in_]; e.count != efficiency_seen_) {
      efficiency_seen_ = e.count;
      if (std::isfinite(e.value) && e.value > 0) {
        efficiency_ = e.value;
        fresh = true;
      } else {
        spdlog::error(
            "TrackedVehicle of '{}': refused steering efficiency {} on '{}' (expected a "
            "positive number); it stays {}",
            r.scoped_name(model_), e.value, e.topic, efficiency_);
      }
    }
    // UpdateVelocity
    double lin = target_lin_, ang = target_ang_;
    const double last_lin = history_.lin0, last_ang = history_.ang0;
    limit_twist(limit_lin_, limit_ang_, history_, lin, ang, info.dt);
    // While the limiters still move the speeds, the tracks get every step's.
    const bool send = fresh || std::abs(lin - last_lin) > 1e-6 || std::abs(ang - last_ang) > 1e-6;
    if (send) {
      right_speed_ = lin + ang * separation_ / (2.0 * efficiency_);
      left_speed_ = lin - ang * separation_ / (2.0 * efficiency_);
      const double radius = std::abs(ang) < 0.1 ? std::numeric_limits<double>::infinity()
                                                : (std::abs(lin) < 0.1 ? 0 : lin / ang);
      const auto* pose = body_ == ecs::kNullEntity ? nullptr : r.try_get<c::WorldPose>(body_);
      const ignition::math::Pose3d X_WB = pose ? pose->value : ignition::math::Pose3d::Zero;
      // Not finite for a straight drive (Gazebo's +inf times the axis), which the tracks read
      // as "straight".
      const auto center =
          X_WB.Rot().RotateVector(ignition::math::Vector3d::UnitY) * radius + X_WB.Pos();
      auto& inputs = r.get<c::TopicInputs>(model_);
      for (const auto& t : tracks_) {
        auto& v = inputs.real[t.velocity_entry];
        v.value = t.left ? left_speed_ : right_speed_;
        ++v.count;
        auto& cor = inputs.vector3[t.center_entry];
        cor.value = center;
        ++cor.count;
      }
    }
    const double dt = to_seconds(info.dt);
    left_position_ += left_speed_ / (kTrackHeight / 2) * dt;
    right_position_ += right_speed_ / (kTrackHeight / 2) * dt;
    // UpdateOdometry
    update_drive_odometry(r, model_, odom_, *odometry_, left_position_, right_position_, now,
                          schedule_);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  struct Track {
    bool left = true;
    std::string velocity_topic, center_topic, where;
    std::size_t velocity_entry = 0, center_entry = 0;  // the TrackController's inputs
  };

  // The entries of the model's TopicInputs the tracks' TrackControllers read (configured after
  // this system, perhaps). A track no TrackController listens to would never move: an error.
  void resolve(const ecs::Registry& r) {
    const auto& in = r.get<c::TopicInputs>(model_);
    for (auto& t : tracks_) {
      bool v = false, cor = false;
      for (std::size_t i = 0; i < in.real.size() && !v; ++i) {
        if (in.real[i].topic == t.velocity_topic) t.velocity_entry = i, v = true;
      }
      for (std::size_t i = 0; i < in.vector3.size() && !cor; ++i) {
        if (in.vector3[i].topic == t.center_topic) t.center_entry = i, cor = true;
      }
      if (!v || !cor) {
        throw Error(t.where,
                    fmt::format("TrackedVehicle: no TrackController of model '{}' listens on "
                                "'{}'{}: the track would never move (declare a TrackController "
                                "for the track's link)",
                                r.scoped_name(model_), v ? t.center_topic : t.velocity_topic,
                                v || cor ? "" : fmt::format(" and '{}'", t.center_topic)));
      }
    }
    resolved_ = true;
  }

  // The state right after configure (Gazebo keeps its state across a reset; Kestrel returns to
  // the start, as a fresh run).
  void reset_state() {
    target_lin_ = target_ang_ = left_speed_ = right_speed_ = 0;
    left_position_ = right_position_ = 0;
    efficiency_ = initial_efficiency_;
    cmd_seen_ = efficiency_seen_ = 0;  // the inputs' counts start again too
    history_ = TwistHistory{};
    schedule_.last = Duration{0};
    odometry_ = std::make_unique<ignition::math::DiffDriveOdometry>();
    odometry_->SetWheelParams(separation_, kTrackHeight / 2, kTrackHeight / 2);
  }

  ecs::Entity model_ = ecs::kNullEntity, body_ = ecs::kNullEntity;
  std::vector<Track> tracks_;
  bool resolved_ = false;
  double separation_ = 1.0, initial_efficiency_ = 0.5, efficiency_ = 0.5;
  ignition::math::SpeedLimiter limit_lin_, limit_ang_;
  std::size_t cmd_ = 0, efficiency_in_ = 0, odom_ = 0;
  std::uint64_t cmd_seen_ = 0, efficiency_seen_ = 0;
  double target_lin_ = 0, target_ang_ = 0;         // the last twist [m/s, rad/s]
  double left_speed_ = 0, right_speed_ = 0;        // the tracks' speeds [m/s]
  double left_position_ = 0, right_position_ = 0;  // odometry's "wheel" angles [rad]
  TwistHistory history_;
  PublishSchedule schedule_;
  std::unique_ptr<ignition::math::DiffDriveOdometry> odometry_;
};

}  // namespace

std::unique_ptr<System> make_tracked_vehicle() { return std::make_unique<TrackedVehicle>(); }

}  // namespace kestrel::systems
