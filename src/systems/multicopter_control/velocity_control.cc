// MulticopterVelocityControl: gz-sim's Lee velocity controller (Lee, Leok, McClamroch 2010, as
// gz-sim's LeeVelocityController computes it; see README.md):
//   body-frame velocity command → desired acceleration → desired attitude (body x kept) →
//   angular acceleration from attitude and rate errors → [I·α; thrust] → rotor speeds
//   (pseudo-inverse of the allocation matrix) → ActuatorCommands.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ignition/math/Matrix3.hh>
#include <ignition/math/Quaternion.hh>
#include <limits>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/events.h"
#include "multicopter_control/multicopter_control.h"
#include "sensors/noise/noise.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Matrix3d;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "robotNamespace, commandSubTopic, enableSubTopic, comLinkName, velocityGain, attitudeGain, "
    "angularRateGain, maximumLinearAcceleration, maximumLinearVelocity, maximumAngularVelocity, "
    "linearVelocityNoiseMean, linearVelocityNoiseStdDev, angularVelocityNoiseMean, "
    "angularVelocityNoiseStdDev, rotorConfiguration, motorControlPubTopic";

// Gazebo's "no limit".
constexpr double kNoLimit = std::numeric_limits<double>::max();

Vector3d clamp_abs(const Vector3d& v, const Vector3d& limit) {
  return {std::clamp(v.X(), -limit.X(), limit.X()), std::clamp(v.Y(), -limit.Y(), limit.Y()),
          std::clamp(v.Z(), -limit.Z(), limit.Z())};
}

Vector3d vee(const Matrix3d& s) { return {s(2, 1), s(0, 2), s(1, 0)}; }

Vector3d column(const Matrix3d& m, int j) { return {m(0, j), m(1, j), m(2, j)}; }

Matrix3d from_columns(const Vector3d& a, const Vector3d& b, const Vector3d& cc) {
  return Matrix3d(a.X(), b.X(), cc.X(), a.Y(), b.Y(), cc.Y(), a.Z(), b.Z(), cc.Z());
}

// Inverts a 4×4 matrix (Gauss-Jordan, partial pivoting). Returns false if singular.
bool invert4(std::array<std::array<double, 8>, 4> m, std::array<std::array<double, 4>, 4>& out) {
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) m[i][4 + j] = i == j ? 1 : 0;
  }
  for (int col = 0; col < 4; ++col) {
    int pivot = col;
    for (int i = col + 1; i < 4; ++i) {
      if (std::abs(m[i][col]) > std::abs(m[pivot][col])) pivot = i;
    }
    if (std::abs(m[pivot][col]) < 1e-300) return false;
    std::swap(m[col], m[pivot]);
    const double p = m[col][col];
    for (double& x : m[col]) x /= p;
    for (int i = 0; i < 4; ++i) {
      if (i == col) continue;
      const double f = m[i][col];
      for (int j = 0; j < 8; ++j) m[i][j] -= f * m[col][j];
    }
  }
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) out[i][j] = m[i][4 + j];
  }
  return true;
}

// Model-local: its PreUpdate reads its model's link state and twist and writes its model's
// rotor commands (README.md, "Threads").
class MulticopterVelocityControl final : public System,
                                         public ISystemConfigure,
                                         public ISystemPreUpdate,
                                         public ISystemReset,
                                         public ISystemModelLocal {
 public:
  int priority() const override { return priority::kPrePhysics - 1; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "MulticopterVelocityControl must be declared inside a <model>");
    }
    model_ = entity;
    claim_unique_plugin(r, model_, "MulticopterVelocityControl", config);
    const auto ns = config.get<std::string>("robotNamespace");
    const auto cmd_topic = config.get_or<std::string>("commandSubTopic", "cmd_vel");
    const auto enable_topic = config.get_or<std::string>("enableSubTopic", "enable");
    link_ = find_link(r, model_, config.get<std::string>("comLinkName"), config, "comLinkName");
    for (const char* g : {"velocityGain", "attitudeGain", "angularRateGain"}) {
      if (!config.has(g)) {
        throw Error(config.where(),
                    fmt::format("<plugin> is missing required parameter <{}> (3 gains x y z)", g));
      }
    }
    k_v_ = get_nonnegative_vector_or(config, "velocityGain", {});
    const Vector3d k_r = get_nonnegative_vector_or(config, "attitudeGain", {});
    const Vector3d k_w = get_nonnegative_vector_or(config, "angularRateGain", {});
    max_acc_ = get_nonnegative_vector_or(config, "maximumLinearAcceleration",
                                         {kNoLimit, kNoLimit, kNoLimit});
    max_vel_ =
        get_nonnegative_vector_or(config, "maximumLinearVelocity", {kNoLimit, kNoLimit, kNoLimit});
    max_rate_ =
        get_nonnegative_vector_or(config, "maximumAngularVelocity", {kNoLimit, kNoLimit, kNoLimit});
    lin_noise_mean_ = config.get_or<Vector3d>("linearVelocityNoiseMean", {});
    lin_noise_std_ = get_nonnegative_vector_or(config, "linearVelocityNoiseStdDev", {});
    ang_noise_mean_ = config.get_or<Vector3d>("angularVelocityNoiseMean", {});
    ang_noise_std_ = get_nonnegative_vector_or(config, "angularVelocityNoiseStdDev", {});
    (void)config.get_or<std::string>("motorControlPubTopic", "");  // components, not topics

    // Vehicle mass and inertia as Gazebo sums them: every link's <inertial> of the model and its
    // nested models, each taken in its own link frame (its pose in the model is not applied).
    ignition::math::Inertiald vehicle;
    for (ecs::Entity e : r.descendants(model_)) {
      if (const auto* in = r.try_get<c::Inertial>(e); in && r.has<c::Link>(e)) vehicle += in->value;
    }
    mass_ = vehicle.MassMatrix().Mass();
    const Matrix3d inertia = vehicle.Moi();
    read_rotors(config, r, inertia);
    reject_unknown_parameters(config, "MulticopterVelocityControl", kParams);
    check_motors(config, r);
    // Gains normalised by the inertia: gainᵀ·I⁻¹.
    const Matrix3d inv = inertia.Inverse();
    for (int j = 0; j < 3; ++j) {
      double a = 0, b = 0;
      for (int i = 0; i < 3; ++i) {
        a += k_r[i] * inv(i, j);
        b += k_w[i] * inv(i, j);
      }
      k_r_norm_[j] = a;
      k_w_norm_[j] = b;
    }
    world_ = model_;
    while (world_ != ecs::kNullEntity && !r.has<c::World>(world_)) world_ = r.parent(world_);
    if (const auto* gr = r.try_get<c::Gravity>(world_)) gravity_ = gr->value;

    r.set(model_, c::TwistCommandTopic{resolve_topic(ns, cmd_topic)});
    r.set(model_, c::VelocityControlEnableTopic{resolve_topic(ns, enable_topic)});
    if (!r.has<c::TwistCommand>(model_)) r.add<c::TwistCommand>(model_);
    // Gazebo's controller starts enabled (and acts once a twist has arrived).
    if (!r.has<c::VelocityControlEnable>(model_)) r.add<c::VelocityControlEnable>(model_, true);
    // Gazebo creates the model's Actuators with one zero per rotor at configure.
    auto* out = r.try_get<c::ActuatorCommands>(model_);
    if (!out) out = &r.add<c::ActuatorCommands>(model_);
    out->velocity.assign(rotor_joints_.size(), 0.0);

    // Noise: the project's random streams (sensors/noise), one per component.
    scoped_ = r.scoped_name(model_) + "::MulticopterVelocityControl";
    const auto* s = r.try_get<c::WorldSeed>(world_);
    initial_seed_ = s ? s->value : 0;
    seed(initial_seed_);
    // A run-time seed change (sim::Runner::set_seed): the velocity noise restarts from it;
    // reset returns to the seed the world started with.
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this](const sim::WorldSeedChanged& e) { seed(e.seed); });
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { seed(initial_seed_); }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    auto& out = r.get<c::ActuatorCommands>(model_);
    auto& cmd = r.get<c::TwistCommand>(model_);
    const auto* enable = r.try_get<c::VelocityControlEnable>(model_);
    if (enable && !enable->value) {
      // Disabled: every rotor to 0 once, and the last twist is forgotten (as Gazebo).
      if (std::any_of(out.velocity.begin(), out.velocity.end(), [](double v) { return v != 0; })) {
        out.velocity.assign(rotor_joints_.size(), 0.0);
        out.stamp = info.sim_time;
        cmd.received = false;
      }
      return;
    }
    if (!cmd.received) return;  // nothing to track yet: the commands stay as they are
    const auto* X_WB = r.try_get<c::WorldPose>(link_);
    const auto* v_W = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w_B = r.try_get<c::AngularVelocity>(link_);
    if (!X_WB || !v_W || !w_B) return;  // before physics has built
    const Vector3d lin = clamp_abs(cmd.linear, max_vel_);
    const Vector3d ang = clamp_abs(cmd.angular, max_rate_);
    Vector3d v = v_W->value, w = w_B->value;
    add_noise(v, lin_noise_mean_, lin_noise_std_, lin_rng_);
    add_noise(w, ang_noise_mean_, ang_noise_std_, ang_rng_);
    const Matrix3d R(X_WB->value.Rot());

    // Desired acceleration (gravity included): kv∘(v − R·v_cmd)/m, limited per axis, + g.
    Vector3d acc = (v - R * lin) * k_v_ / mass_;
    acc = clamp_abs(acc, max_acc_) + gravity_;

    // Desired attitude: z against the acceleration, x as close to the body's x as possible.
    Vector3d b1d = column(R, 0);
    const Vector3d b3d = -acc / acc.Length();
    constexpr double kParallel = 1e-3;
    if (b1d.Cross(b3d).SquaredLength() < kParallel) {
      b1d = column(R, 1);
      if (b1d.Cross(b3d).SquaredLength() < kParallel) b1d = column(R, 2);
    }
    const Vector3d b2d = b3d.Cross(b1d).Normalized();
    const Matrix3d Rd = from_columns(b2d.Cross(b3d), b2d, b3d);
    const Vector3d e_r = vee((Rd.Transposed() * R - R.Transposed() * Rd) * 0.5);
    const Vector3d e_w = w - R.Transposed() * (Rd * Vector3d(0, 0, ang.Z()));
    const Vector3d alpha = -e_r * k_r_norm_ - e_w * k_w_norm_;
    const double thrust = -mass_ * acc.Dot(column(R, 2));

    // Rotor speeds² = A⁺·diag(I, 1)·[α; T].
    const double u[4] = {alpha.X(), alpha.Y(), alpha.Z(), thrust};
    out.velocity.resize(rotor_joints_.size());
    for (std::size_t i = 0; i < rotor_joints_.size(); ++i) {
      double w2 = 0;
      for (int k = 0; k < 4; ++k) w2 += to_speeds_[i][k] * u[k];
      out.velocity[i] = std::sqrt(std::max(0.0, w2));
    }
    out.stamp = info.sim_time;
  }

 private:
  // Gazebo adds N(mean, stddev) to a component only where its stddev is > 0.
  static void add_noise(Vector3d& v, const Vector3d& mean, const Vector3d& std,
                        std::array<sensors::Rng, 3>& rng) {
    for (int k = 0; k < 3; ++k) {
      if (std[k] > 0) v[k] += mean[k] + std[k] * rng[k].normal();
    }
  }

  void seed(std::uint64_t world_seed) {
    static constexpr const char* kAxes[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; ++k) {
      lin_rng_[k] = sensors::Rng(
          sensors::derive_seed(world_seed, scoped_, std::string("linear_velocity/") + kAxes[k]));
      ang_rng_[k] = sensors::Rng(
          sensors::derive_seed(world_seed, scoped_, std::string("angular_velocity/") + kAxes[k]));
    }
  }

  // Declares how many rotor speeds this controller commands, and checks the motors configured
  // before it (those configured after check themselves against it).
  void check_motors(const Element& config, ecs::Registry& r) {
    auto& plugins = model_plugins(r, model_);
    plugins.commanded_joints = rotor_joints_;
    plugins.commander_where = config.where();
    for (std::size_t i = 0; i < plugins.motor_where.size(); ++i) {
      if (plugins.motor_where[i].empty()) continue;
      check_motor_against_controller(plugins, r.scoped_name(model_), i, plugins.motor_joint[i],
                                     plugins.motor_where[i]);
    }
  }

  // The rotors as Gazebo reads them: each joint's position in the com link frame projected on
  // its xy plane (arm length and angle), the force constant times the z component of the joint
  // axis in the com link frame; then the allocation matrix A (4×n: roll, pitch, yaw moments and
  // thrust per ω²) and A⁺·diag(I, 1).
  void read_rotors(const Element& config, ecs::Registry& r, const Matrix3d& inertia) {
    const Element* rc = config.child("rotorConfiguration");
    if (!rc) {
      throw Error(config.where(),
                  "<plugin> is missing required parameter <rotorConfiguration> "
                  "(one <rotor> with jointName, forceConstant, momentConstant "
                  "and direction per rotor, in actuator order)");
    }
    const auto X_WC = r.get<c::WorldPose>(link_).value;
    std::vector<std::array<double, 4>> a;
    for (const Element* re : rc->children("rotor")) {
      const ecs::Entity joint =
          find_joint(r, model_, re->get<std::string>("jointName"), *re, "jointName");
      rotor_joints_.push_back(r.get<c::Name>(joint).value);
      const auto X_CJ = X_WC.Inverse() * r.get<c::WorldPose>(joint).value;
      Vector3d proj = X_CJ.Pos();
      proj.Z(0);
      const double arm = proj.Length();
      ignition::math::Quaterniond q;
      q.From2Axes(Vector3d::UnitX, proj);
      const double angle = q.Yaw();
      double k_force = get_positive(*re, "forceConstant");
      const Vector3d axis_C = X_CJ.Rot().RotateVector(r.get<c::JointData>(joint).axis.xyz);
      k_force *= axis_C.Z();
      const double k_moment = get_positive(*re, "momentConstant", true);
      const double d = re->get<double>("direction");
      if (d != 1 && d != -1) {
        throw Error(re->child("direction")->where(),
                    fmt::format("<direction> must be 1 (ccw) or -1 (cw), found {}", d));
      }
      reject_unknown_parameters(*re, "MulticopterVelocityControl <rotor>",
                                "jointName, forceConstant, momentConstant, direction");
      a.push_back({std::sin(angle) * arm * k_force, -std::cos(angle) * arm * k_force,
                   -d * k_force * k_moment, k_force});
    }
    reject_unknown_parameters(*rc, "MulticopterVelocityControl <rotorConfiguration>", "rotor");
    if (a.size() < 4) {
      throw Error(rc->where(), fmt::format("<rotorConfiguration> needs at least 4 <rotor>, "
                                           "found {}",
                                           a.size()));
    }
    const std::size_t n = a.size();
    std::array<std::array<double, 8>, 4> aat{};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        for (std::size_t k = 0; k < n; ++k) aat[i][j] += a[k][i] * a[k][j];
      }
    }
    std::array<std::array<double, 4>, 4> inv{};
    if (!invert4(aat, inv)) {
      throw Error(rc->where(),
                  "<rotorConfiguration> cannot produce roll, pitch, yaw and thrust "
                  "independently (singular allocation: check rotor positions and "
                  "directions)");
    }
    // moi = diag(I, 1) (4×4).
    double moi[4][4] = {};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) moi[i][j] = inertia(i, j);
    }
    moi[3][3] = 1;
    to_speeds_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      std::array<double, 4> pinv_row{};  // (Aᵀ (A Aᵀ)⁻¹) row i
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) pinv_row[k] += a[i][j] * inv[j][k];
      }
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) to_speeds_[i][k] += pinv_row[j] * moi[j][k];
      }
    }
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  Vector3d k_v_, k_r_norm_, k_w_norm_, max_acc_, max_vel_, max_rate_;
  Vector3d lin_noise_mean_, lin_noise_std_, ang_noise_mean_, ang_noise_std_;
  Vector3d gravity_{0, 0, -9.8};
  double mass_ = 0;
  std::vector<std::string> rotor_joints_;  // joint name of each rotor (rotorConfiguration order)
  std::vector<std::array<double, 4>> to_speeds_;  // n × 4: A⁺·diag(I, 1)
  std::string scoped_;                            // names the noise streams
  std::uint64_t initial_seed_ = 0;
  sim::EventBus::Subscription reseed_;
  std::array<sensors::Rng, 3> lin_rng_, ang_rng_;
};

}  // namespace

std::unique_ptr<System> make_multicopter_velocity_control() {
  return std::make_unique<MulticopterVelocityControl>();
}

}  // namespace kestrel::systems
