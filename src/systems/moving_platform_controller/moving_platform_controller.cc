// MovingPlatformController: PX4-Autopilot's moving-platform plugin for Gazebo, as it computes. Each PreUpdate, on the link:
//   F = m·a_n·n_F + (0, 0, −g_z·m) + PD(z to the height set point, v to the velocity set point;
//       horizontal part clipped to 2 m/s² · m)
//   τ = I∘a_n·n_τ − 2·I∘imag(q·q_sp⁻¹) − I∘ω
// with n_F, n_τ unit white noise low-passed at 5 Hz (PX4's AlphaFilter) and a_n = 1, or a_n = 0
// and a zero velocity set point while the vehicle PX4 launches has not spawned yet.

#include "moving_platform_controller/moving_platform_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/events.h"
#include "sensors/noise/noise.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

constexpr double kCutoffHz = 5.0;     // noise low-pass cut-off, force and torque [Hz]
constexpr double kMaxAccelXy = 2.0;   // horizontal feedback acceleration limit [m/s²]

// A number from the environment (PX4's launcher sets these), or `fallback` when unset.
// @throws Error naming the variable when it is set but not a finite number.
double env_number(const char* name, double fallback, const std::string& where) {
  const char* text = std::getenv(name);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    throw Error(where, fmt::format("MovingPlatformController: environment variable {}='{}' is not "
                                   "a number",
                                   name, text));
  }
  return v;
}

class MovingPlatformController final : public System,
                                       public ISystemConfigure,
                                       public ISystemPreUpdate,
                                       public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    where_ = config.where();
    require_model(r, entity, config, "MovingPlatformController");
    link_ = find_link(r, entity, config.get<std::string>("link_name"), config, "link_name");
    reject_unknown_parameters(config, "MovingPlatformController", "link_name");
    world_ = world_of(r, entity);
    scoped_ = r.scoped_name(link_);

    // Set points from PX4's environment variables: forward speed and heading.
    const double speed = env_number("PX4_GZ_PLATFORM_VEL", 1.0, where_);
    const double heading_deg = env_number("PX4_GZ_PLATFORM_HEADING_DEG", 0.0, where_);
    q_sp_ = Quaterniond(0, 0, heading_deg * M_PI / 180.0);
    v_sp_ = q_sp_.RotateVector(Vector3d(speed, 0, 0));
    // The platform turned to the heading where its link stands: the model's frame goes there.
    const auto& X_WL = r.get<c::WorldPose>(link_).value;
    r.set<c::WorldPoseCmd>(entity, c::WorldPoseCmd{{X_WL.Pos(), q_sp_}});

    // The vehicle PX4's launcher spawns (PX4_SIM_MODEL without "gz_", "_", px4_instance): the
    // platform holds still until it exists.
    if (const char* model = std::getenv("PX4_SIM_MODEL")) {
      std::string name = model;
      if (name.starts_with("gz_")) name = name.substr(3);
      const char* instance = std::getenv("px4_instance");
      vehicle_ = name + "_" + (instance ? instance : "0");
    }
    spdlog::info(
        "{}: MovingPlatformController of '{}': {} m/s at heading {} deg "
        "(PX4_GZ_PLATFORM_VEL, PX4_GZ_PLATFORM_HEADING_DEG){}",
        where_, scoped_, speed, heading_deg,
        vehicle_.empty() ? ", moving at once (no PX4_SIM_MODEL)"
                         : ", still until model '" + vehicle_ + "' exists (PX4_SIM_MODEL)");

    if (const auto* g = r.try_get<c::Gravity>(world_)) gravity_z_ = g->value.Z();
    const auto& inertial = r.get<c::Inertial>(link_).value;
    mass_ = inertial.MassMatrix().Mass();
    moments_ = inertial.MassMatrix().DiagonalMoments();
    height_sp_ = r.get<c::Pose>(link_).value.Pos().Z();
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);

    const auto* s = r.try_get<c::WorldSeed>(world_);
    initial_seed_ = s ? s->value : 0;
    seed(initial_seed_);
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this](const sim::WorldSeedChanged& e) { seed(e.seed); });
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    // The platform's state at the start of the step.
    const auto& X_WL = r.get<c::WorldPose>(link_).value;
    const auto* v = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w = r.try_get<c::WorldAngularVelocity>(link_);
    const Vector3d v_W = v ? v->value : Vector3d::Zero;
    const Vector3d w_W = w ? w->value : Vector3d::Zero;

    update_noise(to_seconds(info.dt));
    const bool still = !vehicle_.empty() && !vehicle_spawned(r);
    const double amplitude = still ? 0.0 : 1.0;  // [N/kg] and [1/s²]

    // Buoyancy against gravity, plus the noise (waves, road).
    Vector3d force = amplitude * mass_ * noise_force_ + Vector3d(0, 0, -gravity_z_ * mass_);
    Vector3d torque = amplitude * moments_ * noise_torque_;
    // Position (height only) and velocity feedback; the horizontal part limited.
    const Vector3d pos_gain = mass_ * Vector3d(0, 0, 1);  // [N/m]
    const Vector3d vel_gain = mass_ * Vector3d(1, 1, 1);  // [N/(m/s)]
    const Vector3d v_set = still ? Vector3d::Zero : v_sp_;
    const Vector3d feedback = -pos_gain * (X_WL.Pos() - Vector3d(0, 0, height_sp_)) -
                              vel_gain * (v_W - v_set);
    const double accel_xy = std::hypot(feedback.X(), feedback.Y()) / mass_;
    const double clip = accel_xy > kMaxAccelXy ? kMaxAccelXy / accel_xy : 1.0;
    force += feedback * Vector3d(clip, clip, 1);
    // Attitude: quaternion error to the heading, PD on the diagonal moments.
    const Quaterniond err = X_WL.Rot() * q_sp_.Inverse();
    const double sign = err.W() > 0 ? 1.0 : -1.0;
    const Vector3d err_imag = sign * Vector3d(err.X(), err.Y(), err.Z());
    torque += -2.0 * moments_ * err_imag - moments_ * w_W;

    auto& wrench = r.get<c::ExternalWorldWrenchCmd>(link_);
    wrench.force += force;
    wrench.torque += torque;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { seed(initial_seed_); }

 private:
  bool vehicle_spawned(const ecs::Registry& r) const {
    const ecs::Entity m = r.child_by_name(world_, vehicle_);
    return m != ecs::kNullEntity && r.has<c::Model>(m);
  }

  // Unit white noise through PX4's AlphaFilter at kCutoffHz: α = dt / (dt + 1 / (2π·f)).
  void update_noise(double dt) {
    if (kCutoffHz > 0.5 / dt) {
      throw Error(where_, fmt::format("MovingPlatformController: a step of {} s is too long for "
                                      "its {} Hz noise filter (at most {} s)",
                                      dt, kCutoffHz, 0.5 / kCutoffHz));
    }
    double n[6];  // force x, y, z, then torque x, y, z (one stream, in this order)
    for (double& d : n) d = rng_.normal();
    const Vector3d n_force(n[0], n[1], n[2]), n_torque(n[3], n[4], n[5]);
    const double alpha = dt / (dt + 1.0 / (2 * M_PI * kCutoffHz));
    noise_force_ = (1 - alpha) * noise_force_ + alpha * n_force;
    noise_torque_ = (1 - alpha) * noise_torque_ + alpha * n_torque;
  }

  void seed(std::uint64_t world_seed) {
    rng_ = sensors::Rng(sensors::derive_seed(world_seed, scoped_, "moving_platform/noise"));
    noise_force_ = noise_torque_ = Vector3d::Zero;
  }

  std::string where_, scoped_, vehicle_;
  ecs::Entity link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  Quaterniond q_sp_;
  Vector3d v_sp_, moments_, noise_force_, noise_torque_;
  double gravity_z_ = -9.8, mass_ = 0, height_sp_ = 0;
  std::uint64_t initial_seed_ = 0;
  sim::EventBus::Subscription reseed_;
  sensors::Rng rng_;
};

}  // namespace

std::unique_ptr<System> make_moving_platform_controller() {
  return std::make_unique<MovingPlatformController>();
}

}  // namespace kestrel::systems
