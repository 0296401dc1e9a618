#pragma once
// Friction directions, anisotropic friction and force-dependent slip of contacts, as DART (gz-sim's
// engine) computes them, on MuJoCo 2.2's contacts (private to src/physics/mujoco;
// src/physics/README.md, "Friction directions and slip").
//
// MuJoCo 2.2 gives each contact an arbitrary pair of tangent directions and one sliding friction
// coefficient. Gazebo's surfaces can say more: a first friction direction (<fdir1>), a second
// coefficient (<mu2>) and a slip compliance per direction (<slip1>, <slip2>, and WheelSlip's
// SlipComplianceCmd). For a contact touching such a surface, between MuJoCo's collision and its
// constraint rows (shape), the tangents become DART's and the friction coefficients the pair's;
// after the rows exist and before the solve (slip), a direction's slip s becomes part of its
// rows' regularisation, so that the contact slides at s × its friction force there (which
// needs MuJoCo's elliptic cone and PGS solver: see slip()).
//
// Only plain arrays of MuJoCo's mjData are touched; the one MuJoCo function called (mj_isSparse)
// reads an option and cannot fail.

#include <mujoco/mujoco.h>

#include <vector>

namespace kestrel::physics::mujoco {

/// What one MuJoCo geom's surface changes in its contacts.
struct GeomSurface {
  double mu = 1.0, mu2 = 1.0;  ///< friction along the first and second direction
  bool friction_cmd = false;   ///< mu, mu2 replace the pair's (ContactFrictionCmd)
  double slip1 = 0.0, slip2 = 0.0;  ///< force-dependent slip [m/s/N]
  double fdir[3] = {0, 0, 0};  ///< first friction direction (unit; zero: unset)
  int fdir_body = -1;          ///< MuJoCo body fdir is expressed in; -1: the geom's frame
  bool custom = false;         ///< differs from MuJoCo's own contact in some way above
};

/// The surfaces of a model's geoms (by geom id) and the two passes that apply them.
class ContactSurfaces {
 public:
  std::vector<GeomSurface> geoms;

  /// Some geom is custom: the position pass must call shape() between collision and rows.
  bool active() const { return active_; }
  /// Recomputes active() after `geoms` changed.
  void refresh();

  /// After mj_collision, before mj_makeConstraint: every contact touching a custom geom gets
  /// DART's tangents (the first along the chosen fdir projected onto the contact plane, or
  /// DART's default) and the pair's coefficients (the smaller of the two surfaces' in each
  /// direction, or a ContactFrictionCmd's).
  void shape(const mjModel* m, mjData* d) const;

  /// Some geom with friction has slip compliance: the model must use the elliptic cone and PGS
  /// solver (see slip()).
  bool any_slip() const { return any_slip_; }

  /// After the position pass, before the constraint solve, on a model with the elliptic cone
  /// and the PGS solver: each contact's slip per direction (the sum of its two surfaces', as
  /// DART) added to its friction rows' regularisation (efc_R, efc_D, efc_AR's diagonal).
  /// Friction in the pyramidal cone mixes the normal into every row, so a row's regularisation
  /// cannot soften only its friction there; MuJoCo's Newton and CG solvers need R·μ² alike in
  /// both directions (their cone is the regularised one), PGS takes any R (its cone is the
  /// physical one, its problem min ½ fᵀ(A + R) f + fᵀ b over the friction cone).
  void slip(const mjModel* m, mjData* d) const;

 private:
  bool active_ = false;
  bool any_slip_ = false;
};

}  // namespace kestrel::physics::mujoco
