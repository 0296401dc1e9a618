// Hydrodynamics: Fossen's model of a body moving in a fluid, as gz-sim's Hydrodynamics
// (Fortress) computes it, in the body frame with SNAME names (forces x y z, moments k m n;
// velocities U V W, rates P Q R): added mass −Ma·ν̇ (ν̇ by finite difference), the added mass's
// Coriolis −C_A(ν)·ν, and damping (linear, quadratic |ν|·ν and ν·ν) D(ν)·ν, with ν the velocity
// relative to the current. See README.md.

#include "hydrodynamics/hydrodynamics.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cmath>
#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;
using Vec6 = std::array<double, 6>;
using Mat6 = std::array<Vec6, 6>;

constexpr const char* kMoments = "xyzkmn";
constexpr const char* kVelocities = "UVWPQR";

class Hydrodynamics final : public System,
                            public ISystemConfigure,
                            public ISystemPreUpdate,
                            public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "Hydrodynamics must be declared inside a <model>");
    }
    bool quadratic_signed = false;
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 6; ++j) {
        const std::string prefix{kMoments[i], kVelocities[j]};
        linear_[i][j] = get_finite_or(config, prefix, 0);
        for (int k = 0; k < 6; ++k) {
          const std::string name = prefix + kVelocities[k];
          if (config.child(name)) quadratic_signed = true;
          quad_[i][j][k] = get_finite_or(config, name, 0);
          quad_abs_[i][j][k] = get_finite_or(config, prefix + "abs" + kVelocities[k], 0);
        }
        added_[i][j] = get_finite_or(config, std::string{kMoments[i]} + "Dot" + kVelocities[j], 0);
      }
    }
    if (quadratic_signed) {
      spdlog::warn(
          "{}: Hydrodynamics: parameters such as <xUU> (ν·ν, not |ν|·ν) may make the "
          "simulation unstable; Gazebo recommends <xUabsU> and the like",
          config.where());
    }
    disable_coriolis_ = config.get_or<bool>("disable_coriolis", false);
    disable_added_mass_ = config.get_or<bool>("disable_added_mass", false);
    current_ = default_current_ = get_finite_vector_or(config, "default_current", Vector3d::Zero);
    // Gazebo's topic: /ocean_current, or /model/<namespace>/ocean_current.
    std::string topic = "/ocean_current";
    if (const Element* ns = config.child("namespace")) {
      topic = as_valid_topic("/model/" + ns->value<std::string>() + "/ocean_current");
    }
    if (!config.child("link_name")) {
      throw Error(config.where(), "Hydrodynamics requires the <link_name> parameter");
    }
    link_ = find_link(r, entity, config.get<std::string>("link_name"), config, "link_name");
    reject_unknown_parameters(config, "Hydrodynamics",
                              "link_name, default_current, namespace, "
                              "disable_coriolis, disable_added_mass, "
                              "and the SNAME coefficients");
    // ν̇ from the last step makes the added mass an explicit feedback −Ma·a_prev: it diverges
    // when an added mass reaches the body's own (Gazebo behaves the same).
    if (const auto* in = r.try_get<c::Inertial>(link_); in && !disable_added_mass_) {
      const double m = in->value.MassMatrix().Mass();
      for (int i = 0; i < 3; ++i) {
        if (std::abs(added_[i][i]) >= m) {
          spdlog::warn(
              "{}: Hydrodynamics: added mass <{}Dot{}> {} is not below the link's mass "
              "{} kg: its finite-difference form (as Gazebo's) is unstable",
              config.where(), kMoments[i], kVelocities[i], added_[i][i], m);
        }
      }
    }
    model_ = entity;
    entry_ = add_vector3_input(r, model_, topic);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    // A current message replaces the current (Gazebo's subscription callback).
    if (const auto* in = r.try_get<c::TopicInputs>(model_)) {
      const auto& cur = in->vector3.at(entry_);
      if (cur.count != seen_) {
        seen_ = cur.count;
        current_ = cur.value;
      }
    }
    if (info.paused) return;
    const auto* X = r.try_get<c::WorldPose>(link_);
    const auto* v = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w = r.try_get<c::WorldAngularVelocity>(link_);
    if (!X || !v || !w) return;
    const auto& rot = X->value.Rot();
    const Vector3d v_B = rot.RotateVectorReverse(v->value - current_);
    const Vector3d w_B = rot.RotateVectorReverse(w->value);
    const Vec6 x{v_B.X(), v_B.Y(), v_B.Z(), w_B.X(), w_B.Y(), w_B.Z()};
    if (first_) {
      prev_ = x;
      first_ = false;
    }
    const double dt = to_seconds(info.dt);
    Vec6 xdot{};
    for (int i = 0; i < 6; ++i) xdot[i] = (x[i] - prev_[i]) / dt;
    prev_ = x;

    // Gazebo's total τ = −Ma·ν̇ − C(ν)·ν + D(ν)·ν; the wrench applied is −τ.
    Vec6 tau{};
    if (!disable_added_mass_) {
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) tau[i] -= added_[i][j] * xdot[j];
      }
    }
    if (!disable_coriolis_) {
      const Mat6 C = coriolis(x);
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) tau[i] -= C[i][j] * x[j];
      }
    }
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 6; ++j) {
        double d = -linear_[i][j];
        for (int k = 0; k < 6; ++k) {
          d -= quad_abs_[i][j][k] * std::abs(x[k]) + quad_[i][j][k] * x[k];
        }
        tau[i] += d * x[j];
      }
    }
    auto& wrench = r.get<c::ExternalWorldWrenchCmd>(link_);
    wrench.force += rot.RotateVector(-Vector3d(tau[0], tau[1], tau[2]));
    wrench.torque += rot.RotateVector(-Vector3d(tau[3], tau[4], tau[5]));
  }

  // Back to the state after configure: no previous velocity (no ν̇ kick), the default current.
  void reset(const UpdateInfo&, ecs::Registry&) override {
    first_ = true;
    current_ = default_current_;
    seen_ = 0;
  }

 private:
  // The added mass's Coriolis matrix from its diagonal (Gazebo's buildCoriolisMatrix).
  Mat6 coriolis(const Vec6& s) const {
    const auto& M = added_;
    Mat6 C{};
    C[0][4] = -M[2][2] * s[2];
    C[0][5] = M[1][1] * s[1];
    C[1][3] = M[2][2] * s[2];
    C[1][5] = -M[0][0] * s[0];
    C[2][3] = -M[1][1] * s[1];
    C[2][4] = M[0][0] * s[0];
    C[3][1] = -M[2][2] * s[2];
    C[3][2] = M[1][1] * s[1];
    C[3][4] = -M[5][5] * s[5];
    C[3][5] = M[4][4] * s[4];
    C[4][0] = M[2][2] * s[2];
    C[4][2] = -M[0][0] * s[0];
    C[4][3] = M[5][5] * s[5];
    C[4][5] = -M[3][3] * s[3];
    C[5][0] = -M[1][1] * s[1];
    C[5][1] = M[0][0] * s[0];
    C[5][3] = -M[4][4] * s[4];
    C[5][4] = M[3][3] * s[3];
    return C;
  }

  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  Mat6 linear_{}, added_{};
  std::array<Mat6, 6> quad_{}, quad_abs_{};
  bool disable_coriolis_ = false, disable_added_mass_ = false, first_ = true;
  Vector3d current_, default_current_;
  std::size_t entry_ = 0;
  std::uint64_t seen_ = 0;
  Vec6 prev_{};
};

}  // namespace

std::unique_ptr<System> make_hydrodynamics() { return std::make_unique<Hydrodynamics>(); }

}  // namespace kestrel::systems
