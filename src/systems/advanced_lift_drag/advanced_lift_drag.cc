// AdvancedLiftDrag: the aerodynamic forces and moments of a whole aircraft from AVL-style
// stability derivatives (α, β), rate derivatives (p, q, r), control derivatives per control
// surface joint and a blended post-stall flat-plate model, as gz-sim main's AdvancedLiftDrag
// computes them (Fortress has no such system). Forces in the stability frame, moments about the
// body axes (forward, upward and their normal); see README.md for the equations and for what
// Kestrel does differently on purpose.

#include "advanced_lift_drag/advanced_lift_drag.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "link_name, CL0, CD0, Cem0, CLa, CYa, Cella, Cema, Cena, CLb, CYb, Cellb, Cemb, Cenb, "
    "alpha_stall, Cema_stall, cp, CDp, CYp, CLp, Cellp, Cemp, Cenp, CDq, CYq, CLq, Cellq, Cemq, "
    "Cenq, CDr, CYr, CLr, Cellr, Cemr, Cenr, num_ctrl_surfaces, control_surface, AR, mac, eff, "
    "air_density, radial_symmetry, area, forward, upward, control_joint_rad_to_cl";
// Parameters PX4's models give that Gazebo's AdvancedLiftDrag never reads.
constexpr std::string_view kIgnored[] = {"a0", "CLa_stall", "CDa_stall", "cda", "ref_pt"};
// Gazebo's fixed constants of the stall blending and the flat-plate drag.
constexpr double kBlendM = 15.0;
constexpr double kFlatPlateK1 = -0.224, kFlatPlateK2 = -0.115;

struct Derivatives {  // one force or moment coefficient's derivatives
  double p = 0, q = 0, r = 0;
};

struct Surface {
  ecs::Entity joint = ecs::kNullEntity;
  double direction = 1, cd = 0, cy = 0, cl = 0, cell = 0, cem = 0, cen = 0;  // per degree
};

class AdvancedLiftDrag final : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::Model>(entity)) {
      throw Error(config.where(), "AdvancedLiftDrag must be declared inside a <model>");
    }
    auto get = [&](std::string_view n, double fallback = 0.0) {
      return get_finite_or(config, n, fallback);
    };
    CL0_ = get("CL0"), CD0_ = get("CD0");
    CLa_ = get("CLa"), CYa_ = get("CYa"), Cella_ = get("Cella"), Cena_ = get("Cena");
    CLb_ = get("CLb"), CYb_ = get("CYb"), Cellb_ = get("Cellb"), Cemb_ = get("Cemb"),
    Cenb_ = get("Cenb");
    alpha_stall_ = get("alpha_stall", M_PI / 2);
    // Read and checked as Gazebo reads them; its pitching moment then drops them (README).
    get("Cem0"), get("Cema"), get("Cema_stall");
    cp_ = get_finite_vector_or(config, "cp", Vector3d::Zero);
    auto rates = [&](const char* coefficient) {
      return Derivatives{get(fmt::format("{}p", coefficient)), get(fmt::format("{}q", coefficient)),
                         get(fmt::format("{}r", coefficient))};
    };
    D_ = rates("CD"), Y_ = rates("CY"), L_ = rates("CL"), ell_ = rates("Cell"), em_ = rates("Cem"),
    en_ = rates("Cen");
    const int declared = config.get_or<int>("num_ctrl_surfaces", 0);
    for (const Element* s : config.children("control_surface")) read_surface(r, entity, *s);
    if (declared != static_cast<int>(surfaces_.size())) {
      throw Error(config.child("num_ctrl_surfaces") ? config.child("num_ctrl_surfaces")->where()
                                                    : config.where(),
                  fmt::format("AdvancedLiftDrag: <num_ctrl_surfaces> is {} but {} "
                              "<control_surface> elements are given",
                              declared, surfaces_.size()));
    }
    AR_ = get_positive_or(config, "AR", 0.0, true);
    mac_ = get_positive_or(config, "mac", 0.0, true);
    eff_ = get_positive_or(config, "eff", 0.0, true);
    rho_ = get_positive_or(config, "air_density", 1.2041, true);
    area_ = get_positive_or(config, "area", 1.0, true);
    // Read as Gazebo does; it does not use them.
    config.get_or<bool>("radial_symmetry", false);
    get("control_joint_rad_to_cl", 4.0);
    forward_ = get_finite_vector_or(config, "forward", Vector3d::UnitX);
    upward_ = get_finite_vector_or(config, "upward", Vector3d::UnitZ);
    if (forward_.Length() < 1e-9 || upward_.Length() < 1e-9) {
      throw Error(config.where(), "AdvancedLiftDrag: <forward> and <upward> must not be zero");
    }
    forward_.Normalize();
    upward_.Normalize();
    if (forward_.Cross(upward_).Length() < 1e-9) {
      throw Error(config.where(), "AdvancedLiftDrag: <forward> and <upward> are parallel");
    }
    if (AR_ <= 0 || eff_ <= 0) {
      // CD = CD0 + CL²/(π·AR·eff): Gazebo divides by zero (NaN, then zeroed) without them.
      throw Error(config.where(),
                  fmt::format("AdvancedLiftDrag: <AR> ({}) and <eff> ({}) must be > 0: the "
                              "induced drag CL²/(π·AR·eff) needs them",
                              AR_, eff_));
    }
    span_ = std::sqrt(area_ * AR_);
    if (mac_ == 0.0) mac_ = area_ / span_;  // Gazebo's default chord
    if (!config.child("link_name")) {
      throw Error(config.where(), "AdvancedLiftDrag requires the <link_name> parameter");
    }
    link_ = find_link(r, entity, config.get<std::string>("link_name"), config, "link_name");
    for (auto name : kIgnored) {
      if (const Element* e = config.child(name)) {
        spdlog::warn(
            "{}: AdvancedLiftDrag: <{}> is not a parameter of Gazebo's AdvancedLiftDrag "
            "(it ignores it, and so does Kestrel)",
            e->where(), name);
      }
    }
    reject_unknown_parameters(config, "AdvancedLiftDrag", kParams);
    world_ = world_of(r, entity);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    const auto* v_W = r.try_get<c::WorldLinearVelocity>(link_);
    const auto* w_W = r.try_get<c::WorldAngularVelocity>(link_);
    const auto* w_L = r.try_get<c::AngularVelocity>(link_);
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (!v_W || !w_W || !w_L || !X_WL) return;
    const auto& rot = X_WL->value.Rot();
    const Vector3d cp_W = rot.RotateVector(cp_);
    const Vector3d air = v_W->value + w_W->value.Cross(cp_W) - air_velocity(r, world_);
    // Body axes in AVL's convention: x forward, z down (−upward), y = z × x (right).
    const Vector3d x_b = rot.RotateVector(forward_);
    const Vector3d z_b = -rot.RotateVector(upward_);
    const Vector3d y_b = z_b.Cross(x_b);
    const Vector3d vel_ld = air - y_b * air.Dot(y_b);
    const double speed_ld = vel_ld.Length();
    if (speed_ld <= 1e-9) return;
    // Stability axes: x along the inflow in the x-z plane.
    const Vector3d x_s = vel_ld / speed_ld;
    const Vector3d y_s = y_b;
    const Vector3d z_s = x_s.Cross(y_s);
    // Body rates in AVL's axes (FRD) from the link frame's (FLU): p, q = −ω_y, r = −ω_z.
    const double p = w_L->value.X(), q = -w_L->value.Y(), rr = -w_L->value.Z();
    const double alpha = std::atan2(x_s.Dot(z_b), x_s.Dot(x_b));
    const double beta = std::atan2(air.Dot(y_b), air.Dot(x_b));
    const double sa = std::sin(alpha), ca = std::cos(alpha);
    const double dyn = 0.5 * rho_ * speed_ld * speed_ld;
    const double half_rho_v = 0.5 * rho_ * speed_ld;
    // Rates in each coefficient's terms: p·b/2, q·c/2, r·b/2.
    const double pb = p * span_ / 2, qc = q * mac_ / 2, rb = rr * span_ / 2;
    auto rate_terms = [&](const Derivatives& d) {
      return (d.p * pb + d.q * qc + d.r * rb) * half_rho_v;
    };
    // Blending from the linear model to the flat plate about ±alpha_stall.
    const double ep = std::exp(-kBlendM * (alpha - alpha_stall_));
    const double em = std::exp(kBlendM * (alpha + alpha_stall_));
    const double sigma = (1 + ep + em) / ((1 + ep) * (1 + em));
    // sign(α): Gazebo's α/|α| is NaN at α = 0 (README: Differences).
    const double sign_alpha = (alpha > 0) - (alpha < 0);
    double CL = (1 - sigma) * (CL0_ + CLa_ * alpha) + sigma * (2 * sign_alpha * sa * sa * ca);
    CL += CLb_ * beta;
    double ctrl_L = 0, ctrl_D = 0, ctrl_Y = 0, ctrl_ell = 0, ctrl_em = 0, ctrl_en = 0;
    for (const auto& s : surfaces_) {
      double deg = 0;  // control derivatives are per degree of deflection
      if (const auto* qj = r.try_get<c::JointPosition>(s.joint); qj && !qj->data.empty()) {
        deg = qj->data[0] * 180 / M_PI;
      }
      const double k = deg * s.direction;
      ctrl_L += k * s.cl, ctrl_D += k * s.cd, ctrl_Y += k * s.cy;
      ctrl_ell += k * s.cell, ctrl_em += k * s.cem, ctrl_en += k * s.cen;
    }
    CL += ctrl_L;
    const Vector3d lift = -z_s * ((CL * dyn + rate_terms(L_)) * area_);
    const double CD_fp = 2 / (1 + std::exp(kFlatPlateK1 + kFlatPlateK2 * std::max(AR_, 1 / AR_)));
    double CD = (1 - sigma) * (CD0_ + CL * CL / (M_PI * AR_ * eff_)) +
                sigma * std::abs(CD_fp * (0.5 - 0.5 * std::cos(2 * alpha)));
    CD += ctrl_D;
    const Vector3d drag = -x_s * ((CD * dyn + rate_terms(D_)) * area_);
    const double CY = CYa_ * alpha + CYb_ * beta + ctrl_Y;
    const Vector3d side = y_s * ((CY * dyn + rate_terms(Y_)) * area_);
    // Pitching moment: Gazebo computes Cem0 + Cema·α (with its stall slope) and then overwrites
    // it with Cemb·β; Kestrel computes the same (README: Differences).
    const double Cem = Cemb_ * beta + ctrl_em;
    const Vector3d pm = y_b * ((Cem * dyn + rate_terms(em_)) * area_ * mac_);
    const double Cell = Cella_ * alpha + Cellb_ * beta + ctrl_ell;
    const Vector3d rm = x_b * ((Cell * dyn + rate_terms(ell_)) * area_ * span_);
    const double Cen = Cena_ * alpha + Cenb_ * beta + ctrl_en;
    const Vector3d ym = z_b * ((Cen * dyn + rate_terms(en_)) * area_ * span_);
    add_wrench_at(r, link_, lift + drag + side, pm + rm + ym, cp_W);
  }

 private:
  void read_surface(ecs::Registry& r, ecs::Entity model, const Element& s) {
    Surface out;
    out.joint = find_joint(r, model, s.get<std::string>("name"), s, "name");
    out.direction = get_finite(s, "direction");
    out.cd = get_finite(s, "CD_ctrl");
    out.cy = get_finite(s, "CY_ctrl");
    out.cl = get_finite(s, "CL_ctrl");
    out.cell = get_finite(s, "Cell_ctrl");
    out.cem = get_finite(s, "Cem_ctrl");
    out.cen = get_finite(s, "Cen_ctrl");
    if (const Element* i = s.child("index")) {
      spdlog::warn(
          "{}: AdvancedLiftDrag: <control_surface><index> is not read by Gazebo's "
          "AdvancedLiftDrag (surfaces are taken in order), nor by Kestrel",
          i->where());
    }
    reject_unknown_parameters(s, "AdvancedLiftDrag <control_surface>",
                              "name, direction, CD_ctrl, CY_ctrl, CL_ctrl, Cell_ctrl, Cem_ctrl, "
                              "Cen_ctrl, index");
    surfaces_.push_back(out);
  }

  ecs::Entity link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  double CL0_ = 0, CD0_ = 0, CLa_ = 0, CYa_ = 0, Cella_ = 0, Cena_ = 0, CLb_ = 0, CYb_ = 0,
         Cellb_ = 0, Cemb_ = 0, Cenb_ = 0, alpha_stall_ = 0;
  Derivatives D_, Y_, L_, ell_, em_, en_;
  std::vector<Surface> surfaces_;
  double AR_ = 0, mac_ = 0, eff_ = 0, rho_ = 0, area_ = 0, span_ = 0;
  Vector3d cp_, forward_, upward_;
};

}  // namespace

std::unique_ptr<System> make_advanced_lift_drag() { return std::make_unique<AdvancedLiftDrag>(); }

}  // namespace kestrel::systems
