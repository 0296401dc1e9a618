// LighterThanAirDynamics: gz-sim's aerodynamics of an airship hull, as it computes them each
// step from the link's velocity in its own frame (v, ω): the viscous cross-flow force and
// moment of the flow seen at eps_v ahead of the origin, the Coriolis terms of the link's fluid
// added mass (whose inertia Physics adds, components/fluid.h) and the axial drag; applied at
// the link origin. See README.md.

#include "lighter_than_air_dynamics/lighter_than_air_dynamics.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/fluid.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Matrix3d;
using ignition::math::Vector3d;

// One 3×3 block of the 6×6 added mass matrix (rows from `r0`, columns from `c0`).
Matrix3d block(const c::FluidAddedMass& a, int r0, int c0) {
  return Matrix3d(a(r0, c0), a(r0, c0 + 1), a(r0, c0 + 2), a(r0 + 1, c0), a(r0 + 1, c0 + 1),
                  a(r0 + 1, c0 + 2), a(r0 + 2, c0), a(r0 + 2, c0 + 1), a(r0 + 2, c0 + 2));
}

class LighterThanAirDynamics final : public System,
                                     public ISystemConfigure,
                                     public ISystemPreUpdate {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "LighterThanAirDynamics");
    link_ = find_link(r, model_, config.get<std::string>("link_name"), config, "link_name");
    rho_ = get_positive(config, "air_density");
    force_inviscid_ = get_finite(config, "force_inviscid_coeff");
    force_viscous_ = get_finite(config, "force_viscous_coeff");
    moment_inviscid_ = get_finite(config, "moment_inviscid_coeff");
    moment_viscous_ = get_finite(config, "moment_viscous_coeff");
    axial_drag_ = get_finite(config, "axial_drag_coeff");
    eps_v_ = get_finite(config, "eps_v");
    reject_unknown_parameters(config, "LighterThanAirDynamics",
                              "link_name, air_density, force_inviscid_coeff, force_viscous_coeff, "
                              "moment_inviscid_coeff, moment_viscous_coeff, axial_drag_coeff, "
                              "eps_v");
    const auto* added = r.try_get<c::FluidAddedMass>(link_);
    if (!added) {
      throw Error(config.where(),
                  "LighterThanAirDynamics: link '" + r.scoped_name(link_) +
                      "' has no <fluid_added_mass> in its <inertial> (Gazebo's system reads it "
                      "and stops without it)");
    }
    m11_ = block(*added, 0, 0);
    m12_ = block(*added, 0, 3);
    m21_ = block(*added, 3, 0);
    m22_ = block(*added, 3, 3);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    const auto* X = r.try_get<c::WorldPose>(link_);
    const auto* vw = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* ww = r.try_get<c::WorldAngularVelocity>(link_);
    if (!X || !vw || !ww) return;
    const auto& q = X->value.Rot();
    const Vector3d v = q.RotateVectorReverse(vw->value);
    const Vector3d w = q.RotateVectorReverse(ww->value);

    // The flow at eps_v ahead of the origin along the hull's axis.
    const Vector3d ve = v + w.Cross(Vector3d(-eps_v_, 0, 0));
    const double q_e = 0.5 * rho_ * ve.SquaredLength();
    const double cross = std::sqrt(ve.Y() * ve.Y() + ve.Z() * ve.Z());
    const double gamma = std::atan2(cross, ve.X());
    const double s = std::sin(gamma), s2 = std::sin(2 * gamma);
    const double force_mag = q_e * (-force_inviscid_ * s2 + force_viscous_ * s * s);
    const double moment_mag = q_e * (-moment_inviscid_ * s2 + moment_viscous_ * s * s);
    double ny = 0, nz = 0;
    if (cross > std::numeric_limits<double>::epsilon()) {
      ny = ve.Y() / cross;
      nz = ve.Z() / cross;
    }
    const Vector3d force_visc = force_mag * Vector3d(0, -ny, -nz);
    const Vector3d moment_visc = moment_mag * Vector3d(0, nz, -ny);

    // The added mass's Coriolis terms as Gazebo writes them (its torque leaves out v × M11·v).
    const Vector3d force_added = -w.Cross(m11_ * v + m12_ * w);
    const Vector3d moment_added = -(v.Cross(m12_ * w) + w.Cross(m21_ * v + m22_ * w));

    // Axial drag, with the angle of attack in the x-z plane.
    const double q0 = 0.5 * rho_ * v.SquaredLength();
    const double aoa = std::atan2(v.Z(), v.X());
    const Vector3d force_axial(-q0 * axial_drag_ * std::cos(aoa) * std::cos(aoa), 0, 0);

    auto& wrench = r.get<c::ExternalWorldWrenchCmd>(link_);
    wrench.force += q.RotateVector(force_added + force_visc + force_axial);
    wrench.torque += q.RotateVector(moment_added + moment_visc);
  }

 private:
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  double rho_ = 0, force_inviscid_ = 0, force_viscous_ = 0, moment_inviscid_ = 0,
         moment_viscous_ = 0, axial_drag_ = 0, eps_v_ = 0;
  Matrix3d m11_, m12_, m21_, m22_;
};

}  // namespace

std::unique_ptr<System> make_lighter_than_air_dynamics() {
  return std::make_unique<LighterThanAirDynamics>();
}

}  // namespace kestrel::systems
