// MulticopterVelocityControl: a Lee geometric controller (Lee, Leok, McClamroch 2010) tracking a
// body-heading velocity and a yaw rate, allocating thrust and moments to rotor speeds.
//   velocity error → desired acceleration → desired force and attitude → attitude/rate errors →
//   moments → rotor speeds² (pseudo-inverse of the allocation matrix) → ActuatorCommands.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ignition/math/Matrix3.hh>
#include <random>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/events.h"
#include "multicopter_control/multicopter_control.h"

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

constexpr double kInf = std::numeric_limits<double>::infinity();

Vector3d clamp_abs(const Vector3d& v, const Vector3d& limit) {
  return {std::clamp(v.X(), -limit.X(), limit.X()), std::clamp(v.Y(), -limit.Y(), limit.Y()),
          std::clamp(v.Z(), -limit.Z(), limit.Z())};
}

Vector3d vee(const Matrix3d& s) { return {s(2, 1), s(0, 2), s(1, 0)}; }

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

class MulticopterVelocityControl final : public System,
                                         public ISystemConfigure,
                                         public ISystemPreUpdate,
                                         public ISystemReset {
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
    k_v_ = get_nonnegative_vector_or(config, "velocityGain", {});
    k_r_ = get_nonnegative_vector_or(config, "attitudeGain", {});
    k_w_ = get_nonnegative_vector_or(config, "angularRateGain", {});
    for (const char* g : {"velocityGain", "attitudeGain", "angularRateGain"}) {
      if (!config.has(g)) {
        throw Error(config.where(),
                    fmt::format("<plugin> is missing required parameter <{}> (3 gains x y z)", g));
      }
    }
    max_acc_ = get_nonnegative_vector_or(config, "maximumLinearAcceleration", {kInf, kInf, kInf});
    max_vel_ = get_nonnegative_vector_or(config, "maximumLinearVelocity", {kInf, kInf, kInf});
    max_rate_ = get_nonnegative_vector_or(config, "maximumAngularVelocity", {kInf, kInf, kInf});
    lin_noise_mean_ = config.get_or<Vector3d>("linearVelocityNoiseMean", {});
    lin_noise_std_ = get_nonnegative_vector_or(config, "linearVelocityNoiseStdDev", {});
    ang_noise_mean_ = config.get_or<Vector3d>("angularVelocityNoiseMean", {});
    ang_noise_std_ = get_nonnegative_vector_or(config, "angularVelocityNoiseStdDev", {});
    (void)config.get_or<std::string>("motorControlPubTopic", "");  // components, not topics
    read_rotors(config, r);
    reject_unknown_parameters(config, "MulticopterVelocityControl", kParams);
    check_motors(config, r);

    // Vehicle mass (every link of the model) and the body's inertia (com link, link frame).
    mass_ = 0;
    for (ecs::Entity e : r.descendants(model_)) {
      if (const auto* in = r.try_get<c::Inertial>(e); in && r.has<c::Link>(e)) {
        mass_ += in->value.MassMatrix().Mass();
      }
    }
    if (const auto* in = r.try_get<c::Inertial>(link_)) inertia_ = in->value.Moi();
    world_ = model_;
    while (world_ != ecs::kNullEntity && !r.has<c::World>(world_)) world_ = r.parent(world_);

    r.set(model_, c::TwistCommandTopic{resolve_topic(ns, cmd_topic)});
    r.set(model_, c::VelocityControlEnableTopic{resolve_topic(ns, enable_topic)});
    if (!r.has<c::TwistCommand>(model_)) r.add<c::TwistCommand>(model_);
    // Gazebo's controller starts disabled until enabled on its topic.
    if (!r.has<c::VelocityControlEnable>(model_)) r.add<c::VelocityControlEnable>(model_, false);
    if (!r.has<c::ActuatorCommands>(model_)) r.add<c::ActuatorCommands>(model_);

    const std::uint64_t name_hash = fnv1a(r.scoped_name(model_) + "::MulticopterVelocityControl");
    auto seed_from = [name_hash](std::uint64_t world_seed) {
      return name_hash ^ (world_seed * 0x9e3779b97f4a7c15ull);
    };
    const auto* s = r.try_get<c::WorldSeed>(world_);
    seed_ = seed_from(s ? s->value : 0);
    rng_.seed(seed_);
    // A run-time seed change (sim::Runner::set_seed): the velocity noise restarts from it;
    // reset returns to the seed the world started with.
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this, seed_from](const sim::WorldSeedChanged& e) { rng_.seed(seed_from(e.seed)); });
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { rng_.seed(seed_); }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    auto& out = r.get<c::ActuatorCommands>(model_);
    out.velocity.resize(rotors_.size());
    out.stamp = info.sim_time;
    const auto* enable = r.try_get<c::VelocityControlEnable>(model_);
    if (!enable || !enable->value) {
      std::fill(out.velocity.begin(), out.velocity.end(), 0.0);
      return;
    }
    const auto* X_WB = r.try_get<c::WorldPose>(link_);
    const auto* v_W = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w_B = r.try_get<c::AngularVelocity>(link_);
    if (!X_WB || !v_W || !w_B) return;  // before physics has built
    const auto& q = X_WB->value.Rot();
    Vector3d v = v_W->value, w = w_B->value;
    add_noise(v, lin_noise_mean_, lin_noise_std_);
    add_noise(w, ang_noise_mean_, ang_noise_std_);

    // Desired velocity: command in the heading frame (yaw only), limited.
    const auto& cmd = r.get<c::TwistCommand>(model_);
    const double yaw = q.Euler().Z();
    const double cy = std::cos(yaw), sy = std::sin(yaw);
    const Vector3d lin = clamp_abs(cmd.linear, max_vel_);
    const Vector3d v_des(cy * lin.X() - sy * lin.Y(), sy * lin.X() + cy * lin.Y(), lin.Z());
    const double yaw_rate = std::clamp(cmd.angular.Z(), -max_rate_.Z(), max_rate_.Z());

    // Desired acceleration and force (world), thrust along the current body z.
    const Vector3d acc = clamp_abs((v_des - v) * k_v_ / mass_, max_acc_);
    Vector3d g(0, 0, -9.8);
    if (const auto* gr = r.try_get<c::Gravity>(world_)) g = gr->value;
    const Vector3d force = (acc - g) * mass_;
    const Vector3d b3 = q.RotateVector(Vector3d::UnitZ);
    const double thrust = force.Dot(b3);

    // Desired attitude: b3 along the force, heading kept.
    const Vector3d b3d = force.Length() > 1e-9 ? force.Normalized() : Vector3d::UnitZ;
    Vector3d b2d = b3d.Cross(Vector3d(cy, sy, 0));
    b2d = b2d.Length() > 1e-9 ? b2d.Normalized() : Vector3d::UnitY;
    const Vector3d b1d = b2d.Cross(b3d);
    const Matrix3d R(q), Rd = from_columns(b1d, b2d, b3d);
    const Vector3d e_r = vee(Rd.Transposed() * R - R.Transposed() * Rd) * 0.5;
    const Vector3d e_w = w - R.Transposed() * (Rd * Vector3d(0, 0, yaw_rate));
    const Vector3d moment = -e_r * k_r_ - e_w * k_w_ + w.Cross(inertia_ * w);

    // Rotor speeds² = A⁺ [M; T].
    const double u[4] = {moment.X(), moment.Y(), moment.Z(), thrust};
    for (std::size_t i = 0; i < rotors_.size(); ++i) {
      double w2 = 0;
      for (int k = 0; k < 4; ++k) w2 += pinv_[i][k] * u[k];
      out.velocity[i] = std::sqrt(std::max(0.0, w2));
    }
  }

 private:
  struct Rotor {
    Vector3d position;  // in the com link frame [m]
    double k_force = 0, k_moment = 0, direction = 1;
  };

  void add_noise(Vector3d& v, const Vector3d& mean, const Vector3d& std) {
    if (mean == Vector3d::Zero && std == Vector3d::Zero) return;
    for (int k = 0; k < 3; ++k) {
      double n = mean[k];
      if (std[k] > 0) n += std::normal_distribution<double>(0.0, std[k])(rng_);
      v[k] += n;
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

  void read_rotors(const Element& config, ecs::Registry& r) {
    const Element* rc = config.child("rotorConfiguration");
    if (!rc) {
      throw Error(config.where(),
                  "<plugin> is missing required parameter <rotorConfiguration> "
                  "(one <rotor> with jointName, forceConstant, momentConstant "
                  "and direction per rotor, in actuator order)");
    }
    const auto X_WB = r.get<c::WorldPose>(link_).value;
    for (const Element* re : rc->children("rotor")) {
      Rotor rot;
      const ecs::Entity joint =
          find_joint(r, model_, re->get<std::string>("jointName"), *re, "jointName");
      rotor_joints_.push_back(r.get<c::Name>(joint).value);
      const auto& jd = r.get<c::JointData>(joint);
      rot.position =
          X_WB.Rot().RotateVectorReverse(r.get<c::WorldPose>(jd.child).value.Pos() - X_WB.Pos());
      rot.k_force = get_positive(*re, "forceConstant");
      rot.k_moment = get_positive(*re, "momentConstant", true);
      const double d = re->get<double>("direction");
      if (d != 1 && d != -1) {
        throw Error(re->child("direction")->where(),
                    fmt::format("<direction> must be 1 (ccw) or -1 (cw), found {}", d));
      }
      rot.direction = d;
      reject_unknown_parameters(*re, "MulticopterVelocityControl <rotor>",
                                "jointName, forceConstant, momentConstant, direction");
      rotors_.push_back(rot);
    }
    reject_unknown_parameters(*rc, "MulticopterVelocityControl <rotorConfiguration>", "rotor");
    if (rotors_.size() < 4) {
      throw Error(rc->where(), fmt::format("<rotorConfiguration> needs at least 4 <rotor>, "
                                           "found {}",
                                           rotors_.size()));
    }
    // Allocation A (4×n): moments about x, y, z and thrust per ω².
    const std::size_t n = rotors_.size();
    std::vector<std::array<double, 4>> a(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Rotor& ro = rotors_[i];
      a[i] = {ro.position.Y() * ro.k_force, -ro.position.X() * ro.k_force,
              -ro.direction * ro.k_moment * ro.k_force, ro.k_force};
    }
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
    pinv_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) pinv_[i][k] += a[i][j] * inv[j][k];
      }
    }
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  Vector3d k_v_, k_r_, k_w_, max_acc_, max_vel_, max_rate_;
  Vector3d lin_noise_mean_, lin_noise_std_, ang_noise_mean_, ang_noise_std_;
  double mass_ = 0;
  Matrix3d inertia_ = Matrix3d::Zero;
  std::vector<Rotor> rotors_;
  std::vector<std::string> rotor_joints_;    // joint name of each rotor (rotorConfiguration order)
  std::vector<std::array<double, 4>> pinv_;  // n × 4
  std::uint64_t seed_ = 0;                   // from the world's initial seed
  sim::EventBus::Subscription reseed_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<System> make_multicopter_velocity_control() {
  return std::make_unique<MulticopterVelocityControl>();
}

}  // namespace kestrel::systems
