// Buoyancy: the upthrust of a fluid on every enabled link, from the volume of its collision
// shapes, as gz-sim's Buoyancy (Fortress) computes it: uniform density (the whole volume, always
// submerged), or graded density layers (each shape cut by horizontal planes). See README.md.

#include "buoyancy/buoyancy.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ignition/math/Capsule.hh>
#include <ignition/math/Cylinder.hh>
#include <ignition/math/Ellipsoid.hh>
#include <ignition/math/Sphere.hh>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "mesh/mesh.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

// Volume of a closed triangle mesh (divergence theorem), as gz-common's Mesh::Volume.
double mesh_volume(const mesh::TriMesh& m) {
  double v = 0;
  for (std::size_t t = 0; t + 2 < m.indices.size(); t += 3) {
    auto p = [&](std::size_t k) {
      const std::size_t i = 3 * m.indices[t + k];
      return Vector3d(m.vertices[i], m.vertices[i + 1], m.vertices[i + 2]);
    };
    v += p(0).Dot(p(1).Cross(p(2))) / 6.0;
  }
  return std::abs(v);
}

// A shape's cross-section along its own z as pieces A(z) = a + b·z + c·z² on [z0, z1]: what the
// slices between two horizontal planes (normal to the shape's z, as Gazebo cuts them) need.
struct Piece {
  double z0, z1, a, b, c;
};
using Profile = std::vector<Piece>;

Profile box_profile(const Vector3d& size) {
  return {{-size.Z() / 2, size.Z() / 2, size.X() * size.Y(), 0, 0}};
}
Profile ellipsoid_profile(double rx, double ry, double rz) {  // π·rx·ry·(1 − z²/rz²)
  return {{-rz, rz, M_PI * rx * ry, 0, -M_PI * rx * ry / (rz * rz)}};
}
Profile cylinder_profile(double r, double length) {
  return {{-length / 2, length / 2, M_PI * r * r, 0, 0}};
}
Profile capsule_profile(double r, double length) {
  const double h = length / 2;
  // π(r² − (z ± h)²) on the caps.
  return {{-h - r, -h, M_PI * (r * r - h * h), -2 * M_PI * h, -M_PI},
          {-h, h, M_PI * r * r, 0, 0},
          {h, h + r, M_PI * (r * r - h * h), 2 * M_PI * h, -M_PI}};
}

// Volume below z = t and its first moment ∫ z·A(z) dz.
void below(const Profile& p, double t, double& volume, double& moment) {
  volume = moment = 0;
  for (const Piece& k : p) {
    const double lo = k.z0, hi = std::min(t, k.z1);
    if (hi <= lo) continue;
    auto V = [&](double z) { return k.a * z + k.b * z * z / 2 + k.c * z * z * z / 3; };
    auto M = [&](double z) {
      return k.a * z * z / 2 + k.b * z * z * z / 3 + k.c * z * z * z * z / 4;
    };
    volume += V(hi) - V(lo);
    moment += M(hi) - M(lo);
  }
}

struct Shape {  // one collision of a link
  ecs::Entity collision = ecs::kNullEntity;
  Pose3d X_LC;      // collision in link
  Profile profile;  // empty: no graded buoyancy (meshes, planes)
  double volume = 0;
};

struct LinkVolume {
  double volume = 0;  // [m³]
  Vector3d cov_L;     // centre of volume in the link frame [m]
  std::vector<Shape> shapes;
};

class Buoyancy final : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::World>(entity)) {
      throw Error(config.where(), "Buoyancy must be declared inside the <world>, not a <model>");
    }
    world_ = entity;
    where_ = config.where();
    const Element* uniform = config.child("uniform_fluid_density");
    const Element* graded = config.child("graded_buoyancy");
    if (uniform) {
      density_ = get_positive(config, "uniform_fluid_density", true);
      if (graded) {
        spdlog::warn(
            "{}: Buoyancy: <graded_buoyancy> is ignored because "
            "<uniform_fluid_density> is given (as Gazebo)",
            graded->where());
      }
    } else if (graded) {
      graded_ = true;
      for (const auto& child : graded->children()) {
        if (child->name() == "default_density") {
          density_ = get_positive(*graded, "default_density", true);
        } else if (child->name() == "density_change") {
          const double depth = child->get<double>("above_depth");
          const double rho = child->get<double>("density");
          if (!std::isfinite(depth) || !std::isfinite(rho) || rho < 0) {
            throw Error(child->where(),
                        "Buoyancy: <density_change> needs a finite "
                        "<above_depth> [m] and a <density> >= 0 [kg/m³]");
          }
          layers_[depth] = rho;
          reject_unknown_parameters(*child, "Buoyancy <density_change>", "above_depth, density");
        } else {
          throw Error(child->where(),
                      fmt::format("Buoyancy: <graded_buoyancy> has no <{}> (expected "
                                  "<default_density>, <density_change>)",
                                  child->name()));
        }
      }
      graded->children("default_density");
      graded->children("density_change");
      if (layers_.empty()) {
        spdlog::warn("{}: Buoyancy: no <density_change> in <graded_buoyancy>: uniform density {}",
                     graded->where(), density_);
      }
    } else {
      spdlog::warn(
          "{}: Buoyancy: neither <graded_buoyancy> nor <uniform_fluid_density> given: "
          "uniform density 1000 kg/m³ (Gazebo's default)",
          where_);
    }
    for (const Element* e : config.children("enable")) {
      enabled_.insert(e->value<std::string>());
    }
    reject_unknown_parameters(config, "Buoyancy", "uniform_fluid_density, graded_buoyancy, enable");
    r.each<c::Link>([&](ecs::Entity link, const c::Link&) { add_link(r, link); });
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    // Links spawned since (a model created at run time).
    r.each_new<c::Link>([&](ecs::Entity link, const c::Link&) {
      if (!links_.count(link)) add_link(r, link);
    });
    if (info.paused) return;
    const auto* g = r.try_get<c::Gravity>(world_);
    if (!g) return;
    for (const ecs::Entity link : order_) {
      if (!r.alive(link)) continue;
      const auto* X = r.try_get<c::WorldPose>(link);
      if (!X) continue;
      const LinkVolume& lv = links_.at(link);
      Vector3d force, torque;
      if (!graded_ || layers_.empty()) {
        force = -density_ * lv.volume * g->value;
        torque = X->value.Rot().RotateVector(lv.cov_L).Cross(force);
      } else {
        for (const Shape& s : lv.shapes) graded_force(X->value, s, g->value, force, torque);
      }
      auto& w = r.get<c::ExternalWorldWrenchCmd>(link);
      w.force += force;
      w.torque += torque;
    }
  }

 private:
  // Gazebo's IsEnabled: every link when no <enable> is given, else a link whose scoped name
  // without the world's ("model::link"), or one of whose ancestors' (the model), is listed.
  bool enabled(const ecs::Registry& r, ecs::Entity link) const {
    if (enabled_.empty()) return true;
    const std::string prefix = r.scoped_name(world_) + "::";
    for (ecs::Entity e = link; e != ecs::kNullEntity && e != world_; e = r.parent(e)) {
      std::string name = r.scoped_name(e);
      if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
      if (enabled_.count(name)) return true;
    }
    return false;
  }

  static bool is_static(const ecs::Registry& r, ecs::Entity link) {
    for (ecs::Entity e = r.parent(link); e != ecs::kNullEntity; e = r.parent(e)) {
      if (const auto* s = r.try_get<c::Static>(e); s && s->value) return true;
    }
    return false;
  }

  // The volume and centre of volume of a link's collisions, as Gazebo sums them.
  void add_link(ecs::Registry& r, ecs::Entity link) {
    if (is_static(r, link) || !enabled(r, link)) return;
    LinkVolume lv;
    Vector3d weighted;
    for (ecs::Entity col : r.children(link)) {
      if (!r.has<c::Collision>(col)) continue;
      const auto* geom = r.try_get<c::Geometry>(col);
      if (!geom) continue;
      Shape s;
      s.collision = col;
      if (const auto* p = r.try_get<c::Pose>(col)) s.X_LC = p->value;
      double v = 0;
      const std::string name = r.scoped_name(col);
      if (const auto* b = std::get_if<c::BoxShape>(&geom->shape)) {
        s.profile = box_profile(b->size);
        v = b->size.X() * b->size.Y() * b->size.Z();
      } else if (const auto* sp = std::get_if<c::SphereShape>(&geom->shape)) {
        s.profile = ellipsoid_profile(sp->radius, sp->radius, sp->radius);
        v = ignition::math::Sphered(sp->radius).Volume();
      } else if (const auto* cy = std::get_if<c::CylinderShape>(&geom->shape)) {
        s.profile = cylinder_profile(cy->radius, cy->length);
        v = ignition::math::Cylinderd(cy->length, cy->radius).Volume();
      } else if (const auto* ca = std::get_if<c::CapsuleShape>(&geom->shape)) {
        s.profile = capsule_profile(ca->radius, ca->length);
        v = ignition::math::Capsuled(ca->length, ca->radius).Volume();
      } else if (const auto* el = std::get_if<c::EllipsoidShape>(&geom->shape)) {
        s.profile = ellipsoid_profile(el->radii.X(), el->radii.Y(), el->radii.Z());
        v = ignition::math::Ellipsoidd(el->radii).Volume();
      } else if (std::holds_alternative<c::PlaneShape>(geom->shape)) {
        v = 0;
      } else if (const auto* m = std::get_if<c::MeshShape>(&geom->shape)) {
        v = mesh_shape_volume(*m, name);
        if (graded_ && !layers_.empty()) {
          spdlog::warn("{}: Buoyancy: mesh collision '{}' gets no graded buoyancy (as Gazebo)",
                       where_, name);
        }
      } else {
        throw Error(where_, fmt::format("Buoyancy: collision '{}' has a shape whose volume "
                                        "Gazebo does not compute (heightmap or empty)",
                                        name));
      }
      s.volume = v;
      lv.volume += v;
      weighted += s.X_LC.Pos() * v;
      lv.shapes.push_back(s);
    }
    if (lv.volume <= 0) return;
    lv.cov_L = weighted / lv.volume;
    if (!r.has<c::ExternalWorldWrenchCmd>(link)) r.add<c::ExternalWorldWrenchCmd>(link);
    links_.emplace(link, std::move(lv));
    order_.push_back(link);
  }

  // Gazebo's MeshManager loads the file and its Volume() ignores <scale>: so does Kestrel.
  double mesh_shape_volume(const c::MeshShape& m, const std::string& name) const {
    mesh::TriMesh tri;
    const std::string why = mesh::load(m, Vector3d::One, tri);
    if (!why.empty()) {
      throw Error(where_, fmt::format("Buoyancy: volume of collision '{}': {}", name, why));
    }
    if (m.scale != Vector3d::One) {
      spdlog::warn(
          "{}: Buoyancy: the volume of mesh collision '{}' ignores its <scale> {} {} {} "
          "(as Gazebo's)",
          where_, name, m.scale.X(), m.scale.Y(), m.scale.Z());
    }
    return mesh_volume(tri);
  }

  // Gazebo's GradedFluidDensity for one shape at world pose X_WC: the shape's volume between
  // successive layer heights (planes normal to the shape's own z, as Gazebo cuts them) times
  // the density of that layer, at that slice's centre of volume; the rest above the last layer
  // with its density. Moments about the link origin.
  void graded_force(const Pose3d& X_WL, const Shape& s, const Vector3d& g, Vector3d& force,
                    Vector3d& torque) const {
    if (s.profile.empty()) return;
    const Pose3d X_WC = X_WL * s.X_LC;
    auto act = [&](double volume, double moment, double rho) {
      if (volume <= 1e-10) return;
      const Vector3d f = -volume * rho * g;
      const Vector3d p_W = X_WC.CoordPositionAdd(Vector3d(0, 0, moment / volume));
      force += f;
      torque += (p_W - X_WL.Pos()).Cross(f);
    };
    double rho_below = density_, prev_v = 0, prev_m = 0;
    for (const auto& [height, rho] : layers_) {
      double v = 0, m = 0;
      below(s.profile, height - X_WC.Pos().Z(), v, m);
      act(v - prev_v, m - prev_m, rho_below);
      prev_v = v, prev_m = m;
      rho_below = rho;
    }
    double v = 0, m = 0;
    below(s.profile, std::numeric_limits<double>::infinity(), v, m);
    act(v - prev_v, m - prev_m, rho_below);
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::string where_;
  double density_ = 1000;  // uniform, or below the lowest layer [kg/m³]
  bool graded_ = false;
  std::map<double, double> layers_;  // height [m] → density above it [kg/m³]
  std::unordered_set<std::string> enabled_;
  std::unordered_map<ecs::Entity, LinkVolume> links_;
  std::vector<ecs::Entity> order_;  // links in the order found (deterministic sums)
};

}  // namespace

std::unique_ptr<System> make_buoyancy() { return std::make_unique<Buoyancy>(); }

}  // namespace kestrel::systems
