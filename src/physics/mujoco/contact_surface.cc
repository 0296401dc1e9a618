#include "physics/mujoco/contact_surface.h"

#include <algorithm>
#include <cmath>

namespace kestrel::physics::mujoco {
namespace {

void cross(const double* a, const double* b, double* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}
double dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// The geom's first friction direction in the world: R · fdir, R the geom's or the body's
// orientation (MuJoCo's row-major xmat: world = R · local). False when it has none.
bool world_direction(const GeomSurface& s, int g, const mjData* d, double* out) {
  if (s.fdir[0] == 0 && s.fdir[1] == 0 && s.fdir[2] == 0) return false;
  const mjtNum* R = s.fdir_body >= 0 ? d->xmat + 9 * s.fdir_body : d->geom_xmat + 9 * g;
  for (int i = 0; i < 3; ++i) out[i] = dot(R + 3 * i, s.fdir);
  return true;
}

// Adds `by` to row i's entry on the diagonal of efc_AR (dense or MuJoCo's sparse layout).
void add_to_ar_diagonal(const mjModel* m, mjData* d, int i, double by) {
  if (!mj_isSparse(m)) {
    d->efc_AR[i * d->nefc + i] += by;
    return;
  }
  const int adr = d->efc_AR_rowadr[i];
  for (int j = 0; j < d->efc_AR_rownnz[i]; ++j) {
    if (d->efc_AR_colind[adr + j] == i) {
      d->efc_AR[adr + j] += by;
      return;
    }
  }
}

// Row i's regularisation becomes r (the force it needs per unit of its acceleration error).
void set_regularisation(const mjModel* m, mjData* d, int i, double r) {
  add_to_ar_diagonal(m, d, i, r - d->efc_R[i]);
  d->efc_R[i] = r;
  d->efc_D[i] = 1 / r;
}

}  // namespace

void ContactSurfaces::refresh() {
  active_ = any_slip_ = false;
  for (const GeomSurface& s : geoms) {
    active_ = active_ || s.custom;
    // A surface without friction (PX4's lawnmower casters: μ 0 with slip 1) slips on nothing.
    any_slip_ = any_slip_ || ((s.slip1 > 0 || s.slip2 > 0) && (s.mu > 0 || s.mu2 > 0));
  }
}

void ContactSurfaces::shape(const mjModel*, mjData* d) const {
  for (int i = 0; i < d->ncon; ++i) {
    mjContact& con = d->contact[i];
    if (con.dim < 3) continue;  // frictionless
    const GeomSurface& a = geoms[con.geom1];
    const GeomSurface& b = geoms[con.geom2];
    if (!a.custom && !b.custom) continue;
    // DART: each direction's coefficient is the smaller of the two surfaces'; gz-sim main's
    // WheelSlip sets a wheel's contacts' coefficients outright (ContactFrictionCmd). Never
    // below MuJoCo's mjMINMU, as its own collision clamps them (a zero μ makes a zero
    // regularisation, hence an infinite D, in its constraint rows).
    if (a.friction_cmd || b.friction_cmd) {
      const GeomSurface& c = a.friction_cmd ? a : b;
      con.friction[0] = c.mu;
      con.friction[1] = c.mu2;
    } else {
      con.friction[0] = std::min(a.mu, b.mu);
      con.friction[1] = std::min(a.mu2, b.mu2);
    }
    con.friction[0] = std::max(con.friction[0], mjMINMU);
    con.friction[1] = std::max(con.friction[1], mjMINMU);
    // DART's first direction: the fdir of the surface with the smaller first coefficient when
    // both give one, else the one given, else the world's z axis; its tangent basis is
    // t = unit(n × fdir) (n × x, n × y, n × z where that vanishes), the first direction n × t
    // (fdir projected onto the contact plane, up to its sign), the second t.
    double fa[3], fb[3], f[3] = {0, 0, 1};
    const bool has_a = world_direction(a, con.geom1, d, fa);
    const bool has_b = world_direction(b, con.geom2, d, fb);
    if (has_a && (!has_b || a.mu <= b.mu)) {
      std::copy_n(fa, 3, f);
    } else if (has_b) {
      std::copy_n(fb, 3, f);
    }
    const double* n = con.frame;
    double t[3];
    cross(n, f, t);
    static constexpr double kAxes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int k = 0; k < 3 && dot(t, t) < 1e-12; ++k) cross(n, kAxes[k], t);
    const double len = std::sqrt(dot(t, t));
    for (double& x : t) x /= len;
    // MuJoCo's frame rows: n, the first direction, the second (kept right-handed: n × first,
    // which is −t: a direction's sign changes nothing in friction).
    cross(n, t, con.frame + 3);
    cross(n, con.frame + 3, con.frame + 6);
  }
}

void ContactSurfaces::slip(const mjModel* m, mjData* d) const {
  if (!any_slip_) return;
  for (int i = 0; i < d->ncon; ++i) {
    const mjContact& con = d->contact[i];
    if (con.exclude != 0 || con.efc_address < 0 || con.dim < 3) continue;
    const GeomSurface& a = geoms[con.geom1];
    const GeomSurface& b = geoms[con.geom2];
    const double s[2] = {a.slip1 + b.slip1, a.slip2 + b.slip2};  // DART adds them
    // Rows J_n, J_1, J_2 (elliptic cone): in a steady slide along k the row's force is
    // −B·v_k / R_k, so a slip s_k makes it R_k + B·s_k. (DART adds s_k / dt to its impulse
    // row's diagonal: the same slip, v_k = s_k × the force.)
    for (int k = 0; k < 2; ++k) {
      if (s[k] <= 0) continue;
      const int row = con.efc_address + 1 + k;
      set_regularisation(m, d, row, d->efc_R[row] + d->efc_KBIP[4 * row + 1] * s[k]);
    }
  }
}

}  // namespace kestrel::physics::mujoco
