// TrackController: the belt speed and centre of rotation received on its topics, limited as
// gz-sim's (Fortress) TrackController limits them, become the track link's TrackSurface, which
// Physics turns into a moving contact surface. See README.md.
#include "track_controller/track_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <ignition/math/SpeedLimiter.hh>
#include <optional>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/track.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kKnown =
    "link, velocity_topic, center_of_rotation_topic, track_orientation, max_command_age, "
    "min_velocity, max_velocity, min_acceleration, max_acceleration, min_jerk, max_jerk, debug";

class TrackController final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "TrackController");
    if (!config.has("link")) {
      throw Error(config.where(), "TrackController: <link> (the track's link) is required");
    }
    const auto link = config.get<std::string>("link");
    link_ = find_link(r, model_, link, config, "link");
    const std::string prefix = "link/" + link;
    velocity_in_ =
        add_double_input(r, model_,
                         as_valid_topic(config.get_or<std::string>(
                             "velocity_topic", model_topic(r, model_, prefix + "/track_cmd_vel"))));
    center_in_ =
        add_vector3_input(r, model_,
                          as_valid_topic(config.get_or<std::string>(
                              "center_of_rotation_topic",
                              model_topic(r, model_, prefix + "/track_cmd_center_of_rotation"))));
    // Gazebo reads a quaternion as roll pitch yaw (ignition-math's stream input).
    const auto rpy = config.get_or("track_orientation", ignition::math::Vector3d::Zero);
    if (!rpy.IsFinite()) {
      throw Error(config.child("track_orientation")->where(),
                  "TrackController: <track_orientation> must be finite roll pitch yaw [rad]");
    }
    orientation_ = ignition::math::Quaterniond(rpy);
    if (config.has("max_command_age")) {
      const double age = get_positive(config, "max_command_age", /*allow_zero=*/true);
      max_age_ = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(age));
    }
    read_speed_limits(config, "", limiter_);
    if (config.get_or("debug", false)) {
      spdlog::warn(
          "{}: TrackController: <debug> is accepted; Kestrel prints no per-contact lines and "
          "publishes no /marker friction arrows (Gazebo's GUI draws those)",
          config.child("debug")->where());
    }
    reject_unknown_parameters(config, "TrackController", kKnown);
    r.add<c::TrackSurface>(link_, still());
    reset_state();
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    const auto& in = r.get<c::TopicInputs>(model_);
    // Gazebo's subscriber callbacks: a new message on either topic is a new command.
    const auto& v = in.real[velocity_in_];
    const auto& cor = in.vector3[center_in_];
    if (v.count != velocity_seen_ || cor.count != center_seen_) {
      if (v.count != velocity_seen_) velocity_ = v.value;
      if (cor.count != center_seen_) center_ = cor.value;
      velocity_seen_ = v.count;
      center_seen_ = cor.count;
      last_command_ = info.sim_time;
    }
    double limited = velocity_;
    if (max_age_ && info.sim_time - last_command_ > *max_age_) limited = 0;
    limiter_.Limit(limited, prev_, prev_prev_,
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(info.dt));
    prev_prev_ = prev_;
    prev_ = limited;
    auto& s = r.get<c::TrackSurface>(link_);
    s.velocity = limited;
    s.center_of_rotation = center_;
    s.orientation = orientation_;
  }

  void reset(const UpdateInfo&, ecs::Registry& r) override {
    reset_state();
    if (!r.has<c::TrackSurface>(link_)) r.add<c::TrackSurface>(link_);
    r.get<c::TrackSurface>(link_) = still();
  }

 private:
  // A still belt, driving straight.
  c::TrackSurface still() const {
    c::TrackSurface s;
    s.orientation = orientation_;
    return s;
  }
  void reset_state() {
    velocity_ = prev_ = prev_prev_ = 0;
    center_ = c::TrackSurface{}.center_of_rotation;
    last_command_ = Duration{0};
    velocity_seen_ = center_seen_ = 0;
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::size_t velocity_in_ = 0, center_in_ = 0;
  std::uint64_t velocity_seen_ = 0, center_seen_ = 0;
  ignition::math::Quaterniond orientation_;
  std::optional<Duration> max_age_;
  ignition::math::SpeedLimiter limiter_;
  double velocity_ = 0, prev_ = 0, prev_prev_ = 0;  // command and the last two limited [m/s]
  ignition::math::Vector3d center_ = c::TrackSurface{}.center_of_rotation;
  Duration last_command_{0};
};

}  // namespace

std::unique_ptr<System> make_track_controller() { return std::make_unique<TrackController>(); }

}  // namespace kestrel::systems
