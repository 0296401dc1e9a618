#include "physics/mujoco/mjcf_builder.h"

#include <fmt/format.h>
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_set>

#include "kestrel/components/detachable_joint.h"
#include "kestrel/components/fluid.h"
#include "kestrel/components/joint_mimic.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "mesh/mesh.h"
#include "physics/mujoco/mesh_file.h"
#include "physics/pose_math.h"

namespace kestrel::physics::mujoco {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using Severity = PhysicsIssue::Severity;

// [kg/m³] a link's mass over its collision mesh's box below this is reported (air: 1.2).
constexpr double kMinPlausibleDensity = 1e-3;

// Shortest round-trip decimal: MuJoCo's strtod reads back exactly the double we hold.
std::string num(double v) { return fmt::format("{}", v); }
std::string vec3(const Vector3d& v) { return fmt::format("{} {} {}", v.X(), v.Y(), v.Z()); }
std::string quat4(const Quaterniond& q) {
  return fmt::format("{} {} {} {}", q.W(), q.X(), q.Y(), q.Z());
}

bool finite(const Vector3d& v) {
  return std::isfinite(v.X()) && std::isfinite(v.Y()) && std::isfinite(v.Z());
}

// Rotation taking +z onto n (for planes, whose MuJoCo normal is the geom's z axis).
Quaterniond z_onto(Vector3d n) {
  n.Normalize();
  const Vector3d z(0, 0, 1);
  const double d = z.Dot(n);
  if (d > 1 - 1e-12) return Quaterniond::Identity;
  if (d < -1 + 1e-12) return Quaterniond(1, 0, 0, 0) * Quaterniond(0, 1, 0, 0);  // 180° about x
  Vector3d axis = z.Cross(n);
  axis.Normalize();
  return Quaterniond(axis, std::acos(std::clamp(d, -1.0, 1.0)));
}

// MuJoCo 2.2's stack (mjData.stack, in mjtNum) for a model of nbody bodies (the world
// included), ngeom geoms, nv degrees of freedom and njmax constraint rows: the sum of what its
// engine functions take from it (every mj_stackAlloc of MuJoCo 2.2), nested or not, so
// that no step can overflow it:
//   collision broadphase   nbody(nbody-1)/2 body pairs, 6 nbody AABBs, 4 nbody sort buffers
//   constraint projection  4 njmax·nv (efc_AR = J M⁻¹ Jᵀ: dense and sparse copies of J M⁻¹)
//   Newton solver          3 nv² (Hessian, its cone part, sparse indices), dense M nv² twice
//   everything else        vectors of nv, njmax, nbody, ngeom (a generous multiple of each)
// MuJoCo's own default, 5 (njmax + nv)², has no body-pair term: 400 static spheres, each a
// body welded to the world, overflow it in the broadphase ("Stack overflow"); and its njmax²
// term (efc_AR is in mjData's buffer, not on the stack) makes large swarms need gigabytes.
}  // namespace

std::int64_t stack_size(std::int64_t nbody, std::int64_t ngeom, std::int64_t nv,
                        std::int64_t njmax) {
  return nbody * (nbody - 1) / 2 + 16 * nbody + 4 * njmax * nv + 8 * njmax + 5 * nv * nv + 64 * nv +
         32 * njmax + 64 * nbody + 20 * ngeom + 4096;
}

namespace {

struct LinkInfo {
  ecs::Entity link = ecs::kNullEntity;
  ecs::Entity top_model = ecs::kNullEntity;
  ecs::Entity parent_link = ecs::kNullEntity;  // kNullEntity: the world
  ecs::Entity joint = ecs::kNullEntity;        // joint whose child this link is
  bool is_static = false;
  bool self_collide = false;
  bool dynamic = false;
  bool has_geoms = false;
  std::vector<std::size_t> children;  // indices into links_
  Pose3d X_WL;                        // reference world pose
};

class Builder {
 public:
  Builder(const ecs::Registry& r, ecs::Entity world, const BuildOptions& o)
      : r_(r), world_(world), options_(o) {}

  MjcfModel run() {
    collect();
    resolve_tree();
    emit();
    return std::move(out_);
  }

 private:
  void issue(Severity s, ecs::Entity e, std::string message) {
    PhysicsIssue i;
    i.severity = s;
    i.entity = e;
    i.scoped_name = e == ecs::kNullEntity ? std::string() : r_.scoped_name(e);
    if (auto* loc = e == ecs::kNullEntity ? nullptr : r_.try_get<c::SourceLocation>(e)) {
      i.file = loc->file;
      i.line = loc->line;
    }
    i.message = std::move(message);
    out_.issues.push_back(std::move(i));
  }

  // ---- gather links, joints and models ----------------------------------------------------

  // The outermost model holding `e` and whether some model on the way is static.
  std::pair<ecs::Entity, bool> top_model_of(ecs::Entity e) const {
    ecs::Entity top = ecs::kNullEntity;
    bool is_static = false;
    for (ecs::Entity p = r_.parent(e); p != ecs::kNullEntity && p != world_; p = r_.parent(p)) {
      if (!r_.has<c::Model>(p)) continue;
      top = p;
      if (auto* s = r_.try_get<c::Static>(p); s && s->value) is_static = true;
    }
    return {top, is_static};
  }

  // With an island, only that top-level model's moving parts and every static one.
  bool in_island(ecs::Entity top, bool is_static) const {
    return !options_.island || is_static ||
           std::binary_search(options_.island->begin(), options_.island->end(), top);
  }

  void collect() {
    for (ecs::Entity e : r_.descendants(world_)) {
      if (r_.removal_pending(e)) continue;  // leaves at the end of this step
      if (r_.has<c::Link>(e)) {
        LinkInfo li;
        li.link = e;
        std::tie(li.top_model, li.is_static) = top_model_of(e);
        if (!in_island(li.top_model, li.is_static)) continue;
        const ecs::Entity nearest = r_.parent(e);
        if (auto* sc = r_.try_get<c::SelfCollide>(nearest)) li.self_collide = sc->value;
        auto ref = options_.reference_poses ? options_.reference_poses->find(e)
                                            : decltype(options_.reference_poses->end()){};
        li.X_WL = options_.reference_poses && ref != options_.reference_poses->end()
                      ? ref->second
                      : world_pose_of(r_, e);
        const auto& p = li.X_WL.Pos();
        if (!finite(p) || std::max({std::abs(p.X()), std::abs(p.Y()), std::abs(p.Z())}) >
                              c::kMaxWorldCoordinate) {
          issue(Severity::kError, e,
                fmt::format("link at ({}, {}, {}) m in the world: every coordinate must be "
                            "finite and within ±{} m",
                            p.X(), p.Y(), p.Z(), c::kMaxWorldCoordinate));
          continue;
        }
        link_index_[e] = links_.size();
        links_.push_back(std::move(li));
      } else if (r_.has<c::Joint>(e)) {
        auto [top, st] = top_model_of(e);
        if (const auto* jd = r_.try_get<c::JointData>(e); jd && top == ecs::kNullEntity) {
          std::tie(top, st) = top_model_of(jd->child);  // a joint of the world
        }
        if (!in_island(top, st)) continue;
        if (!r_.has<c::JointData>(e)) {
          issue(Severity::kError, e, "joint has no JointData (type, parent, child)");
          continue;
        }
        joints_.push_back(e);
      } else if (r_.has<c::Model>(e)) {
        auto [top, st] = top_model_of(e);
        if (top == ecs::kNullEntity) top = e;  // a top-level model is its own top
        if (auto* s = r_.try_get<c::Static>(e); s && s->value) st = true;
        if (!in_island(top, st)) continue;
        models_.push_back(e);
      } else if (r_.has<c::DetachableJoint>(e)) {
        detachable_.push_back(e);
      }
    }
  }

  void resolve_tree() {
    for (ecs::Entity j : joints_) {
      const auto& jd = r_.get<c::JointData>(j);
      auto child = link_index_.find(jd.child);
      if (child == link_index_.end()) {
        issue(Severity::kError, j,
              fmt::format("child link '{}' is not a simulated link", jd.child_name));
        continue;
      }
      if (jd.parent != ecs::kNullEntity && !link_index_.count(jd.parent)) {
        issue(Severity::kError, j,
              fmt::format("parent link '{}' is not a simulated link", jd.parent_name));
        continue;
      }
      LinkInfo& cl = links_[child->second];
      if (cl.joint != ecs::kNullEntity) {
        issue(Severity::kError, j,
              fmt::format("link '{}' is already the child of joint '{}': closed kinematic loops "
                          "are not supported by Kestrel's MuJoCo backend",
                          jd.child_name, r_.scoped_name(cl.joint)));
        continue;
      }
      if (jd.parent == jd.child) {
        issue(Severity::kError, j, "joint connects a link to itself");
        continue;
      }
      // Reject cycles: walk up from the parent; we must not meet the child.
      bool cycle = false;
      for (ecs::Entity p = jd.parent; p != ecs::kNullEntity;
           p = links_[link_index_[p]].parent_link) {
        if (p == jd.child) {
          cycle = true;
          break;
        }
      }
      if (cycle) {
        issue(Severity::kError, j, "joint closes a kinematic loop (MuJoCo needs a tree)");
        continue;
      }
      cl.joint = j;
      cl.parent_link = jd.parent;
    }
    // Static links are welded to the world whatever their joints say.
    for (auto& li : links_) {
      if (li.is_static) {
        li.parent_link = ecs::kNullEntity;
        li.joint = ecs::kNullEntity;
      }
    }
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].parent_link != ecs::kNullEntity) {
        links_[link_index_[links_[i].parent_link]].children.push_back(i);
      }
    }
  }

  bool joint_moves(ecs::Entity j) const {
    return j != ecs::kNullEntity && r_.get<c::JointData>(j).type != c::JointType::kFixed;
  }

  // ---- MJCF --------------------------------------------------------------------------------

  void emit() {
    using tinyxml2::XMLElement;
    auto* root = doc_.NewElement("mujoco");
    root->SetAttribute("model", r_.scoped_name(world_).c_str());
    doc_.InsertEndChild(root);

    auto* compiler = root->InsertNewChildElement("compiler");
    compiler->SetAttribute("angle", "radian");
    compiler->SetAttribute("coordinate", "local");
    compiler->SetAttribute("inertiafromgeom", "false");

    const c::PhysicsParams physics =
        r_.has<c::PhysicsParams>(world_) ? r_.get<c::PhysicsParams>(world_) : c::PhysicsParams{};
    const c::Gravity gravity =
        r_.has<c::Gravity>(world_) ? r_.get<c::Gravity>(world_) : c::Gravity{};
    dt_ = to_seconds(physics.max_step_size);
    if (!(dt_ > 0)) {
      issue(Severity::kError, world_, "physics max_step_size must be positive");
      dt_ = 1e-3;
    }
    auto* option = root->InsertNewChildElement("option");
    option->SetAttribute("timestep", num(dt_).c_str());
    option->SetAttribute("gravity", vec3(gravity.value).c_str());
    option->SetAttribute("integrator", "Euler");
    // Frictional constraints 10x stiffer than normal ones: without it MuJoCo's soft contacts
    // let a box on a slope below the friction angle creep (~2 mm/s at tan θ = 0.8 μ).
    option->SetAttribute("impratio", 10);
    size_el_ = root->InsertNewChildElement("size");
    assets_ = root->InsertNewChildElement("asset");
    auto* worldbody = root->InsertNewChildElement("worldbody");

    // Which links move: free roots, links with a moving joint, and everything welded below.
    for (auto& li : links_) {
      if (li.is_static) continue;
      if (li.parent_link == ecs::kNullEntity)
        li.dynamic = li.joint == ecs::kNullEntity || joint_moves(li.joint);
    }
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].parent_link == ecs::kNullEntity) propagate_dynamic(i, links_[i].dynamic);
    }
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].parent_link == ecs::kNullEntity) emit_body(worldbody, i, Pose3d::Zero);
    }
    if (assets_->NoChildren()) root->DeleteChild(assets_);

    emit_excludes(root);
    emit_welds(root);
    emit_mimics(root);

    // MuJoCo's pyramidal friction cone softens the normal direction as μ grows: a body on a
    // plane with μ = 10 sinks 2.5 cm, with μ = 20 it falls through. A contact's μ is the
    // smaller of its two geoms' (below), so when two geoms above kEllipticMu may touch, the
    // elliptic cone is used (the exact cone, no sinking).
    if (std::count_if(geom_mu_.begin(), geom_mu_.end(),
                      [](const auto& g) { return g.second > kEllipticMu; }) >= 2) {
      option->SetAttribute("cone", "elliptic");
    }
    combine_friction_as_gazebo();

    // Contact buffers: room for the contacts that can occur at the current state (pairs of
    // geoms whose bounding spheres, grown by kPairMargin, overlap, or that reach a plane; 8
    // contacts for two boxes, 1 when a sphere or an ellipsoid is involved, 4 otherwise), rows
    // per contact from the friction pyramid; memory grows with njmax² (see README). The engine
    // doubles them when a step fills them (mujoco_engine.cc, grow()), so the room beyond what
    // can occur only spares growths: 4 contacts (16 made gz-sim's 3k_shapes, 3,003 one-shape
    // islands, take 1.74 GB instead of 1.02; docs/performance.md).
    constexpr int kContactRoom = 4;
    const int nconmax = contacts_that_can_occur() + kContactRoom + options_.extra_contacts;
    const int rows = torsional_ ? 6 : 4;
    const int njmax = nconmax * rows + constraint_rows_ + 16;
    out_.rows_per_contact = rows;
    out_.extra_rows = constraint_rows_ + 16;
    size_el_->SetAttribute("nconmax", nconmax);
    size_el_->SetAttribute("njmax", njmax);
    out_.nconmax = nconmax;
    out_.njmax = njmax;
    out_.moving_geoms = moving_geoms_;
    out_.nstack = stack_size(static_cast<std::int64_t>(out_.bodies.size()) + 1,
                             static_cast<std::int64_t>(out_.geoms.size()), out_.dofs, njmax);
    if (out_.nstack <= std::numeric_limits<int>::max()) {
      size_el_->SetAttribute("nstack", static_cast<int>(out_.nstack));
    }

    tinyxml2::XMLPrinter printer;
    doc_.Print(&printer);
    out_.xml = printer.CStr();

    for (ecs::Entity m : models_) emit_model_record(m);
  }

  void propagate_dynamic(std::size_t i, bool parent_dynamic) {
    LinkInfo& li = links_[i];
    if (li.parent_link != ecs::kNullEntity) li.dynamic = parent_dynamic || joint_moves(li.joint);
    for (std::size_t ch : li.children) propagate_dynamic(ch, li.dynamic);
  }

  void emit_body(tinyxml2::XMLElement* parent_el, std::size_t i, const Pose3d& X_WP) {
    LinkInfo& li = links_[i];
    const std::string name = r_.scoped_name(li.link);
    auto* body = parent_el->InsertNewChildElement("body");
    body->SetAttribute("name", name.c_str());
    const Pose3d X_PB = compose(inverse(X_WP), li.X_WL);
    body->SetAttribute("pos", vec3(X_PB.Pos()).c_str());
    body->SetAttribute("quat", quat4(X_PB.Rot()).c_str());

    BodyRecord rec;
    rec.link = li.link;
    rec.name = name;
    rec.dynamic = li.dynamic;
    rec.X_WL = li.X_WL;
    if (auto* g = r_.try_get<c::LinkGravity>(li.link)) rec.gravity = g->value;
    if (auto* k = r_.try_get<c::Kinematic>(li.link); k && k->value) {
      issue(
          Severity::kWarning, li.link,
          "<kinematic> is not supported by the MuJoCo backend; the link is simulated dynamically");
    }

    const bool own_dofs =
        li.dynamic &&
        (li.parent_link == ecs::kNullEntity ? li.joint == ecs::kNullEntity : joint_moves(li.joint));
    if (li.dynamic && li.parent_link == ecs::kNullEntity && li.joint == ecs::kNullEntity) {
      rec.free_joint = name + "::free";
      auto* fj = body->InsertNewChildElement("freejoint");
      out_.dofs += 6;
      fj->SetAttribute("name", rec.free_joint.c_str());
    }
    if (li.dynamic && rec.free_joint.empty() && r_.has<c::FluidAddedMass>(li.link)) {
      issue(Severity::kError, li.link,
            "<fluid_added_mass> is supported on a link that moves freely (no joint to a parent "
            "link), not on one attached by a joint: the MuJoCo backend adds it to a free body's "
            "six degrees of freedom only");
    }
    if (li.dynamic) emit_inertial(body, li.link, own_dofs, rec);
    if (li.joint != ecs::kNullEntity) emit_joint(body, li);

    emit_geoms(body, li);
    const std::size_t record_at = out_.bodies.size();
    out_.bodies.push_back(std::move(rec));
    (void)record_at;
    for (std::size_t ch : li.children) emit_body(body, ch, li.X_WL);
  }

  void emit_inertial(tinyxml2::XMLElement* body, ecs::Entity link, bool own_dofs, BodyRecord& rec) {
    const auto* in = r_.try_get<c::Inertial>(link);
    if (!in) {
      if (own_dofs) issue(Severity::kError, link, "moving link has no Inertial (mass, inertia)");
      return;
    }
    const double mass = in->value.MassMatrix().Mass();
    if (!std::isfinite(mass) || mass < 0 || (own_dofs && mass <= 0)) {
      issue(Severity::kError, link,
            fmt::format("mass must be positive and finite for a moving link, found {}", mass));
      return;
    }
    if (mass == 0) return;             // massless link welded to a moving parent: no contribution
    const auto moi = in->value.Moi();  // about the CoM, in the link frame
    const double ixx = moi(0, 0), iyy = moi(1, 1), izz = moi(2, 2);
    const double ixy = moi(0, 1), ixz = moi(0, 2), iyz = moi(1, 2);
    const auto principal = in->value.MassMatrix().PrincipalMoments();
    const bool ok = std::isfinite(ixx) && std::isfinite(iyy) && std::isfinite(izz) &&
                    std::isfinite(ixy) && std::isfinite(ixz) && std::isfinite(iyz) &&
                    principal.X() > 0 && principal.Y() > 0 && principal.Z() > 0 &&
                    principal.X() + principal.Y() >= principal.Z() * (1 - 1e-9) &&
                    principal.Y() + principal.Z() >= principal.X() * (1 - 1e-9) &&
                    principal.X() + principal.Z() >= principal.Y() * (1 - 1e-9);
    if (!ok) {
      issue(Severity::kError, link,
            fmt::format("inertia must be finite, positive definite and satisfy the triangle "
                        "inequality; found ixx={} iyy={} izz={} ixy={} ixz={} iyz={}",
                        ixx, iyy, izz, ixy, ixz, iyz));
      return;
    }
    auto* el = body->InsertNewChildElement("inertial");
    el->SetAttribute("pos", vec3(in->value.Pose().Pos()).c_str());
    el->SetAttribute("mass", num(mass).c_str());
    el->SetAttribute("fullinertia",
                     fmt::format("{} {} {} {} {} {}", ixx, iyy, izz, ixy, ixz, iyz).c_str());
    rec.mass = mass;
  }

  void emit_joint(tinyxml2::XMLElement* body, const LinkInfo& li) {
    const auto& jd = r_.get<c::JointData>(li.joint);
    JointRecord rec;
    rec.joint = li.joint;
    rec.type = jd.type;
    rec.child = li.link;
    rec.X_WJ = joint_world_pose(li);
    rec.X_CJ = compose(inverse(li.X_WL), rec.X_WJ);
    const std::string name = r_.scoped_name(li.joint);

    auto axis_joint = [&](const c::JointAxisData& ax, const char* type, const std::string& jname,
                          bool limits) {
      Vector3d a = rec.X_CJ.Rot().RotateVector(ax.xyz);
      if (!finite(a) || a.Length() < 1e-12) {
        issue(Severity::kError, li.joint, "joint axis must be a finite non-zero vector");
        a = Vector3d(0, 0, 1);
      }
      a.Normalize();
      auto* el = body->InsertNewChildElement("joint");
      ++out_.dofs;
      el->SetAttribute("name", jname.c_str());
      el->SetAttribute("type", type);
      el->SetAttribute("pos", vec3(rec.X_CJ.Pos()).c_str());
      el->SetAttribute("axis", vec3(a).c_str());
      const bool limited = limits && ax.lower > -1e15 && ax.upper < 1e15;
      if (limited) {
        if (!(ax.lower <= ax.upper)) {
          issue(Severity::kError, li.joint,
                fmt::format("joint limits need lower <= upper, found {} > {}", ax.lower, ax.upper));
        }
        el->SetAttribute("limited", "true");
        // lower == upper holds the joint at that position (Gazebo's worlds use [0, 0] for
        // joints they lock, e.g. tracked_vehicle_simple.sdf's flippers); MuJoCo wants
        // range[0] < range[1], so the range is the adjacent doubles around it.
        const double lo = ax.lower < ax.upper ? ax.lower : std::nextafter(ax.lower, -1e300);
        const double hi = ax.lower < ax.upper ? ax.upper : std::nextafter(ax.upper, 1e300);
        el->SetAttribute("range", fmt::format("{} {}", lo, hi).c_str());
        // As stiff as MuJoCo allows (two steps, as the welds): DART and ODE hold limits as
        // hard constraints, and MuJoCo's default (0.02 s) let a PID-driven steering joint of
        // PX4's rover_ackermann swing 2 rad past its 0.52 rad limit.
        el->SetAttribute("solreflimit", fmt::format("{} 1", num(2 * dt_)).c_str());
        constraint_rows_ += 2;
      }
      if (ax.damping != 0) el->SetAttribute("damping", num(ax.damping).c_str());
      if (ax.friction != 0) el->SetAttribute("frictionloss", num(ax.friction).c_str());
      constraint_rows_ += 1;  // its friction loss, or the servo of a velocity command
      if (ax.spring_stiffness != 0) {
        el->SetAttribute("stiffness", num(ax.spring_stiffness).c_str());
        el->SetAttribute("springref", num(ax.spring_reference).c_str());
      }
      if (ax.damping < 0 || ax.friction < 0 || ax.spring_stiffness < 0) {
        issue(Severity::kError, li.joint, "joint damping, friction and stiffness must be >= 0");
      }
      if (ax.velocity >= 0 && std::isfinite(ax.velocity)) {  // sdformat: inf = none
        issue(Severity::kWarning, li.joint,
              "joint velocity limit: MuJoCo has none; Kestrel clamps JointVelocityCmd to it but "
              "does not limit the passive motion");
      }
      rec.names.push_back(jname);
      rec.effort.push_back(ax.effort);
      rec.velocity.push_back(ax.velocity);
    };

    switch (jd.type) {
      case c::JointType::kFixed:
        break;
      case c::JointType::kRevolute:
        axis_joint(jd.axis, "hinge", name, true);
        break;
      case c::JointType::kContinuous:
        axis_joint(jd.axis, "hinge", name, false);
        break;
      case c::JointType::kPrismatic:
        axis_joint(jd.axis, "slide", name, true);
        break;
      case c::JointType::kBall: {
        auto* el = body->InsertNewChildElement("joint");
        out_.dofs += 3;
        el->SetAttribute("name", name.c_str());
        el->SetAttribute("type", "ball");
        el->SetAttribute("pos", vec3(rec.X_CJ.Pos()).c_str());
        if (jd.axis.damping > 0) el->SetAttribute("damping", num(jd.axis.damping).c_str());
        rec.names.push_back(name);
        rec.effort.push_back(-1);
        rec.velocity.push_back(-1);
        break;
      }
      case c::JointType::kUniversal:
      case c::JointType::kRevolute2:
        if (!jd.axis2) {
          issue(Severity::kError, li.joint, "universal/revolute2 joint needs <axis2>");
          break;
        }
        axis_joint(jd.axis, "hinge", name, true);
        axis_joint(*jd.axis2, "hinge", name + "::axis2", true);
        break;
      case c::JointType::kScrew:
      case c::JointType::kGearbox:
        issue(Severity::kError, li.joint,
              fmt::format("joint type '{}' is not supported by the MuJoCo backend",
                          jd.type == c::JointType::kScrew ? "screw" : "gearbox"));
        break;
    }
    out_.joints.push_back(std::move(rec));
  }

  Pose3d joint_world_pose(const LinkInfo& li) const {
    if (options_.reference_poses) {
      if (auto it = options_.reference_poses->find(li.joint);
          it != options_.reference_poses->end()) {
        return it->second;
      }
    }
    if (auto* wp = r_.try_get<c::WorldPose>(li.joint)) return wp->value;
    // Without a world pose, a joint's Pose is relative to its child link (SDF's default).
    if (auto* p = r_.try_get<c::Pose>(li.joint)) return compose(li.X_WL, p->value);
    return li.X_WL;
  }

  void emit_geoms(tinyxml2::XMLElement* body, LinkInfo& li) {
    for (ecs::Entity g : r_.children(li.link)) {
      if (!r_.has<c::Collision>(g)) continue;
      const auto* geo = r_.try_get<c::Geometry>(g);
      if (!geo || std::holds_alternative<std::monostate>(geo->shape)) {
        issue(Severity::kWarning, g, "collision has no geometry; ignored");
        continue;
      }
      Pose3d X_LG;
      if (auto* p = r_.try_get<c::Pose>(g)) {
        X_LG = p->value;
      } else {
        X_LG = compose(inverse(li.X_WL), world_pose_of(r_, g));
      }
      const std::string name = r_.scoped_name(g);
      auto* el = doc_.NewElement("geom");
      el->SetAttribute("name", name.c_str());
      if (!shape(el, g, geo->shape, li, X_LG)) {
        doc_.DeleteNode(el);
        continue;
      }
      body->InsertEndChild(el);
      surface(el, g, li);
      li.has_geoms = true;
      if (li.dynamic) ++moving_geoms_;
      out_.geoms.push_back(g);
      note_bound(g, geo->shape, li, X_LG);
    }
  }

  // Where a geom is now (its link's current world pose) and how far it reaches, for the
  // contact estimate: a bounding sphere, or a plane's point and normal.
  void note_bound(ecs::Entity g, const decltype(c::Geometry::shape)& s, const LinkInfo& li,
                  const Pose3d& X_LG) {
    GeomBound b;
    b.top = li.top_model;
    b.link = li.link;
    b.dynamic = li.dynamic;
    b.self_collide = li.self_collide;
    const auto* surf = r_.try_get<c::Surface>(g);
    if (surf && surf->collide_bitmask == 0) return;  // collides with nothing
    const Pose3d X_WG = compose(world_pose_of(r_, li.link), X_LG);
    b.c = X_WG.Pos();
    if (auto* bx = std::get_if<c::BoxShape>(&s)) {
      b.r = 0.5 * bx->size.Length();
      b.box = true;
    } else if (auto* sp = std::get_if<c::SphereShape>(&s)) {
      b.r = sp->radius;
      b.round = true;
    } else if (auto* cy = std::get_if<c::CylinderShape>(&s)) {
      b.r = std::hypot(cy->radius, cy->length / 2);
    } else if (auto* ca = std::get_if<c::CapsuleShape>(&s)) {
      b.r = ca->radius + ca->length / 2;
    } else if (auto* e = std::get_if<c::EllipsoidShape>(&s)) {
      b.r = std::max({e->radii.X(), e->radii.Y(), e->radii.Z()});
      b.round = true;
    } else if (auto* pl = std::get_if<c::PlaneShape>(&s)) {
      b.plane = true;
      b.n = X_WG.Rot().RotateVector(pl->normal.Normalized());
    } else if (auto* me = std::get_if<c::MeshShape>(&s)) {
      b.r = mesh_radius_.count(g) ? mesh_radius_[g] : 1e300;
      (void)me;
    }
    bounds_.push_back(b);
  }

  // Contacts MuJoCo can find at the current state (see emit): every pair of geoms of which one
  // moves, that MuJoCo does not exclude (same link; links of one model unless both
  // self-collide), whose bounding spheres grown by kPairMargin overlap or that reach a plane.
  int contacts_that_can_occur() const {
    auto per_pair = [](const GeomBound& a, const GeomBound& b) {
      return a.box && b.box ? 8 : a.round || b.round ? 1 : 4;
    };
    auto excluded = [](const GeomBound& a, const GeomBound& b) {
      return a.link == b.link || (!a.dynamic && !b.dynamic) ||
             (a.top == b.top && a.top != ecs::kNullEntity && !(a.self_collide && b.self_collide));
    };
    std::int64_t n = 0;
    std::vector<const GeomBound*> solids;
    for (const auto& b : bounds_) {
      if (!b.plane) solids.push_back(&b);
    }
    for (const auto& p : bounds_) {
      if (!p.plane) continue;
      for (const GeomBound* s : solids) {
        if (!excluded(p, *s) && (s->c - p.c).Dot(p.n) <= s->r + kPairMargin) n += per_pair(p, *s);
      }
    }
    std::sort(solids.begin(), solids.end(), [](const GeomBound* a, const GeomBound* b) {
      return a->c.X() - a->r < b->c.X() - b->r;
    });
    for (std::size_t i = 0; i < solids.size(); ++i) {
      const GeomBound& a = *solids[i];
      for (std::size_t j = i + 1; j < solids.size(); ++j) {
        const GeomBound& b = *solids[j];
        if (b.c.X() - b.r > a.c.X() + a.r + 2 * kPairMargin) break;
        if (!excluded(a, b) && (a.c - b.c).Length() <= a.r + b.r + 2 * kPairMargin) {
          n += per_pair(a, b);
        }
      }
    }
    return static_cast<int>(std::min<std::int64_t>(n, std::numeric_limits<int>::max() / 64));
  }

  // Sets type, size, pos, quat. Returns false when the shape cannot be simulated.
  bool shape(tinyxml2::XMLElement* el, ecs::Entity g, const decltype(c::Geometry::shape)& s,
             const LinkInfo& li, Pose3d X_LG) {
    // Sizes MuJoCo can bound: its bounding spheres and boxes (half-diagonals, squared extents)
    // overflow long before 1e308, and a run then fails steps later with NaN contacts.
    auto positive = [&](std::initializer_list<double> v, const char* what) {
      for (double x : v) {
        if (!(x > 0) || !std::isfinite(x)) {
          issue(Severity::kError, g,
                fmt::format("{} must be positive and finite, found {}", what, x));
          return false;
        }
        if (x > 2 * c::kMaxWorldCoordinate) {
          issue(Severity::kError, g,
                fmt::format("{} {} m is larger than physics can bound (at most {} m: twice the "
                            "largest world coordinate Kestrel accepts)",
                            what, x, 2 * c::kMaxWorldCoordinate));
          return false;
        }
      }
      return true;
    };
    bool ok = true;
    if (auto* b = std::get_if<c::BoxShape>(&s)) {
      ok = positive({b->size.X(), b->size.Y(), b->size.Z()}, "box size");
      el->SetAttribute("type", "box");
      el->SetAttribute("size", vec3(b->size * 0.5).c_str());
    } else if (auto* sp = std::get_if<c::SphereShape>(&s)) {
      ok = positive({sp->radius}, "sphere radius");
      el->SetAttribute("type", "sphere");
      el->SetAttribute("size", num(sp->radius).c_str());
    } else if (auto* cy = std::get_if<c::CylinderShape>(&s)) {
      ok = positive({cy->radius, cy->length}, "cylinder radius and length");
      el->SetAttribute("type", "cylinder");
      el->SetAttribute("size", fmt::format("{} {}", cy->radius, cy->length / 2).c_str());
    } else if (auto* ca = std::get_if<c::CapsuleShape>(&s)) {
      ok = positive({ca->radius, ca->length}, "capsule radius and length");
      el->SetAttribute("type", "capsule");
      el->SetAttribute("size", fmt::format("{} {}", ca->radius, ca->length / 2).c_str());
    } else if (auto* el2 = std::get_if<c::EllipsoidShape>(&s)) {
      ok = positive({el2->radii.X(), el2->radii.Y(), el2->radii.Z()}, "ellipsoid radii");
      el->SetAttribute("type", "ellipsoid");
      el->SetAttribute("size", vec3(el2->radii).c_str());
    } else if (auto* pl = std::get_if<c::PlaneShape>(&s)) {
      if (li.dynamic) {
        issue(Severity::kError, g,
              "plane collision on a moving link: MuJoCo planes must be static (use a box)");
        return false;
      }
      if (!finite(pl->normal) || pl->normal.Length() < 1e-12) {
        issue(Severity::kError, g, "plane normal must be a finite non-zero vector");
        return false;
      }
      el->SetAttribute("type", "plane");
      el->SetAttribute("size", "0 0 1");  // infinite
      X_LG = Pose3d(X_LG.Pos(), X_LG.Rot() * z_onto(pl->normal));
    } else if (auto* me = std::get_if<c::MeshShape>(&s)) {
      if (!mesh(el, g, *me, li)) return false;
    } else if (std::holds_alternative<c::HeightmapShape>(s)) {
      issue(Severity::kError, g, "heightmap collisions are not supported by the MuJoCo backend");
      return false;
    }
    if (!ok) return false;
    el->SetAttribute("pos", vec3(X_LG.Pos()).c_str());
    el->SetAttribute("quat", quat4(X_LG.Rot()).c_str());
    return true;
  }

  bool mesh(tinyxml2::XMLElement* el, ecs::Entity g, const c::MeshShape& me, const LinkInfo& li) {
    if (me.path.empty()) {
      issue(Severity::kError, g, fmt::format("mesh '{}' could not be resolved to a file", me.uri));
      return false;
    }
    std::string ext = std::filesystem::path(me.path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    for (double k : {me.scale.X(), me.scale.Y(), me.scale.Z()}) {
      if (!std::isfinite(k) || k == 0 || std::abs(k) > 2 * c::kMaxWorldCoordinate) {
        issue(Severity::kError, g,
              fmt::format("mesh '{}': scale ({}, {}, {}) must be finite, non-zero and within "
                          "±{}",
                          me.uri, me.scale.X(), me.scale.Y(), me.scale.Z(),
                          2 * c::kMaxWorldCoordinate));
        return false;
      }
    }
    // Before MuJoCo sees it: a FIFO, a device, an empty or huge file, an STL MuJoCo refuses.
    if (const std::string problem = mesh_file_problem(me.path); !problem.empty()) {
      issue(Severity::kError, g, fmt::format("mesh '{}' ({}): {}", me.uri, me.path, problem));
      return false;
    }
    // MuJoCo reads STL and OBJ itself (whole file, SDF <scale> as its scale); every other format,
    // and a submesh, comes through the mesh door as triangles in metres, scaled, as MSH.
    const bool native = (ext == ".stl" || ext == ".obj") && me.submesh.empty();
    mesh::TriMesh tri;
    const std::string why = mesh::load(me, me.scale, tri);
    if (!why.empty()) {
      issue(native ? Severity::kWarning : Severity::kError, g, why);
      if (!native) return false;
    } else {
      plausible_extent(g, mesh::bounds(tri), li);
      const auto mb = mesh::bounds(tri);
      mesh_radius_[g] = std::max(mb.min.Length(), mb.max.Length());
    }
    issue(Severity::kWarning, g,
          "mesh collision uses the mesh's convex hull (MuJoCo collides convex meshes only)");
    const std::string mesh_name = fmt::format("mesh{}", out_.meshes.size());
    MeshFile mf{mesh_name + (native ? ext : ".msh"), me.path, {}, g};
    if (!native) mf.data = mesh::to_msh(tri);
    auto* asset = assets_->InsertNewChildElement("mesh");
    asset->SetAttribute("name", mesh_name.c_str());
    if (options_.absolute_mesh_paths && !native) {
      issue(Severity::kWarning, g,
            fmt::format("mesh '{}' ({}) is converted in memory when Kestrel runs; the exported "
                        "MJCF names the original file, which MuJoCo cannot read",
                        me.uri, ext));
    }
    asset->SetAttribute("file",
                        options_.absolute_mesh_paths ? me.path.c_str() : mf.vfs_name.c_str());
    if (native) asset->SetAttribute("scale", vec3(me.scale).c_str());
    out_.meshes.push_back(std::move(mf));
    el->SetAttribute("type", "mesh");
    el->SetAttribute("mesh", mesh_name.c_str());
    return true;
  }

  // A mesh authored in millimetres (or centimetres) and loaded as metres is 1000× (100×) too
  // big for its link: the link's mass spread over the mesh's box would be lighter than
  // 1/1000 of air (1.2 kg/m³), which no solid is. Moving links only (a static link's mass is
  // not simulated).
  void plausible_extent(ecs::Entity g, const mesh::Bounds& b, const LinkInfo& li) {
    if (!li.dynamic) return;
    const auto* in = r_.try_get<c::Inertial>(li.link);
    if (!in) return;
    const double m = in->value.MassMatrix().Mass();
    const Vector3d size = b.size();
    const double volume = size.X() * size.Y() * size.Z();
    if (!(m > 0) || !(volume > 0) || m / volume >= kMinPlausibleDensity) return;
    const Vector3d I = in->value.MassMatrix().PrincipalMoments();
    const double gyration = std::sqrt((I.X() + I.Y() + I.Z()) / (2 * m));
    issue(Severity::kWarning, g,
          fmt::format("collision mesh is {:.4g} x {:.4g} x {:.4g} m for a link of {:.4g} kg "
                      "(radius of gyration {:.3g} m): {:.3g} kg/m³ over its box is implausible "
                      "(below {} kg/m³); was it authored in millimetres or centimetres? Set "
                      "<scale> (0.001 for millimetres) or the file's <unit meter>",
                      size.X(), size.Y(), size.Z(), m, gyration, m / volume, kMinPlausibleDensity));
  }

  // Gazebo's engines (ODE, DART) give a contact the smaller μ of its two surfaces; MuJoCo the
  // larger, unless the geoms' priorities differ, when the higher-priority geom's parameters
  // are used. Ranking the geoms by μ (the smallest μ highest) makes MuJoCo take the smaller.
  void combine_friction_as_gazebo() {
    std::vector<double> mus;
    for (const auto& [el, mu] : geom_mu_) mus.push_back(mu);
    std::sort(mus.begin(), mus.end(), std::greater<>());
    mus.erase(std::unique(mus.begin(), mus.end()), mus.end());
    if (mus.size() < 2) return;
    for (const auto& [el, mu] : geom_mu_) {
      const auto rank = std::find(mus.begin(), mus.end(), mu) - mus.begin();
      if (rank > 0) el->SetAttribute("priority", static_cast<int>(rank));
    }
  }

  void surface(tinyxml2::XMLElement* el, ecs::Entity g, const LinkInfo& li) {
    const c::Surface s = r_.has<c::Surface>(g) ? r_.get<c::Surface>(g) : c::Surface{};
    if (!(s.mu >= 0) || !(s.mu2 >= 0) || !(s.mu_torsional >= 0) || !(s.patch_radius >= 0)) {
      issue(Severity::kError, g, "friction coefficients must be >= 0");
    }
    if (s.restitution > 0) {
      issue(Severity::kWarning, g, "restitution (bounce) is not supported by the MuJoCo backend");
    }
    // MuJoCo torsional friction is a length: torque = coef · normal force.
    const double torsional = s.mu_torsional * s.patch_radius;
    geom_mu_.emplace_back(el, s.mu);
    el->SetAttribute("friction", fmt::format("{} {} 0.0001", s.mu, torsional).c_str());
    if (torsional > 0) {
      el->SetAttribute("condim", 4);
      if (li.dynamic) torsional_ = true;
    }
    const int mask = static_cast<int>(s.collide_bitmask);
    el->SetAttribute("contype", mask);
    el->SetAttribute("conaffinity", mask);
    if (s.kp || s.kd) {
      // Direct stiffness/damping (negative solref) per unit mass of the link: MuJoCo's
      // reference acceleration is −b·v − k·r, so k = kp/m, b = kd/m. Stiffness is capped so
      // the contact's time constant stays above two steps (MuJoCo's stability rule); a capped
      // contact is damped at least critically (b = 2·√k, MuJoCo's dampratio 1), which makes it
      // MuJoCo's solref "2·dt 1": a spring stiffer than the step resolves does not ring under
      // ODE's implicit step, and the damping is also what removes slip in MuJoCo's friction
      // rows (src/physics/README.md, "Contact stiffness and damping").
      const double m = link_mass(li.link);
      if (m <= 0) {
        issue(Severity::kWarning, g,
              "contact kp/kd on a link without mass (static): MuJoCo's default contact is used");
        return;
      }
      double k = s.kp.value_or(0) / m;
      double b = s.kd.value_or(0) / m;
      const double k_max = 1.0 / (4 * dt_ * dt_);
      if (k > k_max) {
        k = k_max;
        b = std::max(b, 2 * std::sqrt(k));
      }
      el->SetAttribute("solref", fmt::format("{} {}", -k, -b).c_str());
    }
  }

  double link_mass(ecs::Entity link) const {
    if (auto* in = r_.try_get<c::Inertial>(link)) return in->value.MassMatrix().Mass();
    return 0;
  }

  // Detachable joints: a weld equality constraint each, between links this model simulates of
  // which one moves (src/physics/README.md, "Detachable joints"). Active from the build only
  // when attached with its relative pose known; otherwise the engine switches it on at the
  // step it attaches, with the links' relative pose of that step.
  void emit_welds(tinyxml2::XMLElement* root) {
    tinyxml2::XMLElement* equality = nullptr;
    for (ecs::Entity e : detachable_) {
      const auto& dj = r_.get<c::DetachableJoint>(e);
      const auto p = link_index_.find(dj.parent_link), ch = link_index_.find(dj.child_link);
      if (p == link_index_.end() || ch == link_index_.end() || dj.parent_link == dj.child_link)
        continue;
      if (!links_[p->second].dynamic && !links_[ch->second].dynamic) continue;
      if (!equality) equality = root->InsertNewChildElement("equality");
      auto* weld = equality->InsertNewChildElement("weld");
      WeldRecord rec{e, fmt::format("kestrel_detachable_{}", e)};
      weld->SetAttribute("name", rec.name.c_str());
      weld->SetAttribute("body1", r_.scoped_name(dj.parent_link).c_str());
      weld->SetAttribute("body2", r_.scoped_name(dj.child_link).c_str());
      const bool active = dj.attached && dj.pose_set;
      const Pose3d X = active ? dj.X_PC : Pose3d::Zero;
      const auto& q = X.Rot();
      weld->SetAttribute("relpose", fmt::format("{} {} {} {} {} {} {}", X.Pos().X(), X.Pos().Y(),
                                                X.Pos().Z(), q.W(), q.X(), q.Y(), q.Z())
                                        .c_str());
      weld->SetAttribute("active", active ? "true" : "false");
      // As stiff as MuJoCo allows (a time constant of two steps): a fixed joint, not a spring.
      weld->SetAttribute("solref", fmt::format("{} 1", num(2 * dt_)).c_str());
      constraint_rows_ += 6;
      out_.welds.push_back(std::move(rec));
    }
  }

  // Mimic constraints (components::JointMimics): a joint equality each, the follower's position
  // = c0 + c1 · the leader's with c1 = multiplier, c0 = offset − multiplier · reference (MuJoCo
  // measures both from qpos0, which is 0 for every hinge and slide Kestrel emits), as stiff as
  // the detachable welds. Only between axes this model simulates (a static model's joints are
  // not emitted).
  void emit_mimics(tinyxml2::XMLElement* root) {
    std::map<ecs::Entity, const JointRecord*> emitted;
    for (const auto& rec : out_.joints) emitted[rec.joint] = &rec;
    for (const auto& rec : out_.joints) {
      const auto* mimics = r_.try_get<c::JointMimics>(rec.joint);
      if (!mimics) continue;
      for (const c::JointMimic& m : mimics->data) {
        const auto leader = emitted.find(m.leader);
        if (m.axis >= rec.names.size() || leader == emitted.end() ||
            leader->second->names.size() <= m.leader_axis) {
          continue;
        }
        auto* equality = root->FirstChildElement("equality");
        if (!equality) equality = root->InsertNewChildElement("equality");
        auto* eq = equality->InsertNewChildElement("joint");
        eq->SetAttribute("joint1", rec.names[m.axis].c_str());
        eq->SetAttribute("joint2", leader->second->names[m.leader_axis].c_str());
        eq->SetAttribute("polycoef",
                         fmt::format("{} {} 0 0 0", num(m.offset - m.multiplier * m.reference),
                                     num(m.multiplier))
                             .c_str());
        eq->SetAttribute("solref", fmt::format("{} 1", num(2 * dt_)).c_str());
        eq->SetAttribute("solimp", "0.9999 0.9999 0.001 0.5 2");
        constraint_rows_ += 1;
      }
    }
  }

  void emit_excludes(tinyxml2::XMLElement* root) {
    tinyxml2::XMLElement* contact = nullptr;
    for (std::size_t a = 0; a < links_.size(); ++a) {
      const LinkInfo& la = links_[a];
      if (!la.has_geoms || la.top_model == ecs::kNullEntity) continue;
      for (std::size_t b = a + 1; b < links_.size(); ++b) {
        const LinkInfo& lb = links_[b];
        if (!lb.has_geoms || lb.top_model != la.top_model) continue;
        if (!la.dynamic && !lb.dynamic) continue;
        if (la.self_collide && lb.self_collide) continue;
        if (!contact) contact = root->InsertNewChildElement("contact");
        auto* ex = contact->InsertNewChildElement("exclude");
        ex->SetAttribute("body1", r_.scoped_name(la.link).c_str());
        ex->SetAttribute("body2", r_.scoped_name(lb.link).c_str());
      }
    }
  }

  void emit_model_record(ecs::Entity m) {
    ModelRecord rec;
    rec.model = m;
    const ecs::Entity p = r_.parent(m);
    if (p != world_ && r_.has<c::Model>(p)) rec.parent_model = p;
    // Canonical link: the first link found under the model (SDF's default canonical link).
    for (ecs::Entity d : r_.descendants(m)) {
      if (auto it = link_index_.find(d); it != link_index_.end()) {
        rec.canonical = d;
        const LinkInfo& li = links_[it->second];
        rec.dynamic = li.dynamic;
        // Both as they are now: li.X_WL is the link's reference pose, from the first build
        // when it is rebuilt (a model that moved since had its frame offset by the motion).
        const Pose3d X_WM = world_pose_of(r_, m);
        rec.X_LM = compose(inverse(world_pose_of(r_, d)), X_WM);
        break;
      }
    }
    out_.models.push_back(rec);
  }

  const ecs::Registry& r_;
  ecs::Entity world_;
  const BuildOptions& options_;
  MjcfModel out_;
  std::vector<LinkInfo> links_;
  std::unordered_map<ecs::Entity, std::size_t> link_index_;
  std::vector<ecs::Entity> joints_, models_, detachable_;
  tinyxml2::XMLDocument doc_;
  tinyxml2::XMLElement* size_el_ = nullptr;
  tinyxml2::XMLElement* assets_ = nullptr;
  double dt_ = 1e-3;
  int moving_geoms_ = 0;
  struct GeomBound {
    Vector3d c, n;  // centre (a plane: a point of it, and its normal)
    double r = 0;   // bounding radius
    bool plane = false, box = false, round = false, dynamic = false, self_collide = false;
    ecs::Entity top = ecs::kNullEntity, link = ecs::kNullEntity;
  };
  std::vector<GeomBound> bounds_;
  std::unordered_map<ecs::Entity, double> mesh_radius_;  // a mesh's reach from its origin [m]
  static constexpr double kPairMargin = 0.05;            // [m]
  int constraint_rows_ = 0;
  bool torsional_ = false;
  std::vector<std::pair<tinyxml2::XMLElement*, double>> geom_mu_;  // every geom and its μ
  static constexpr double kEllipticMu = 2;
};

}  // namespace

ignition::math::Pose3d world_pose_of(const ecs::Registry& registry, ecs::Entity e) {
  if (auto* wp = registry.try_get<components::WorldPose>(e)) return wp->value;
  Pose3d X = Pose3d::Zero;
  for (ecs::Entity x = e; x != ecs::kNullEntity; x = registry.parent(x)) {
    if (auto* wp = registry.try_get<components::WorldPose>(x)) return compose(wp->value, X);
    if (auto* p = registry.try_get<components::Pose>(x)) X = compose(p->value, X);
  }
  return X;
}

MjcfModel build_mjcf(const ecs::Registry& registry, ecs::Entity world,
                     const BuildOptions& options) {
  return Builder(registry, world, options).run();
}

void throw_on_errors(const std::vector<PhysicsIssue>& issues) {
  std::string msg;
  int n = 0;
  for (const auto& i : issues) {
    if (i.severity != PhysicsIssue::Severity::kError) continue;
    msg += (n++ ? "\n" : "") + format_issue(i);
  }
  if (n == 0) return;
  throw Error(n == 1 ? msg : fmt::format("{} physics errors:\n{}", n, msg));
}

}  // namespace kestrel::physics::mujoco

namespace kestrel::physics {
std::string format_issue(const PhysicsIssue& issue) {
  std::string out = issue.severity == PhysicsIssue::Severity::kError ? "error: " : "warning: ";
  if (!issue.file.empty()) {
    out += issue.file;
    if (issue.line > 0) out += ":" + std::to_string(issue.line);
    out += ": ";
  }
  if (!issue.scoped_name.empty()) out += issue.scoped_name + ": ";
  return out + issue.message;
}

}  // namespace kestrel::physics
