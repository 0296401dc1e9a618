#include "physics/test_worlds.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "kestrel/physics/physics.h"
#include "physics/pose_math.h"

namespace kestrel::physics::testing {

namespace c = kestrel::components;

TestWorld::TestWorld(Duration dt, Vector3d gravity) {
  sim::Runner::Options o;
  o.world_name = "test";
  o.step_size = dt;
  o.real_time_factor = 0;
  runner = std::make_unique<sim::Runner>(o);
  auto& reg = r();
  c::PhysicsParams p;
  p.max_step_size = dt;
  reg.set(world(), p);
  reg.set(world(), c::Gravity{gravity});
}

ecs::Entity TestWorld::model(const std::string& name, const Pose3d& X_WM, bool is_static,
                             ecs::Entity parent) {
  auto& reg = r();
  const ecs::Entity p = parent == ecs::kNullEntity ? world() : parent;
  const ecs::Entity e = reg.create(p);
  reg.add<c::Model>(e);
  reg.add<c::Name>(e, name);
  const Pose3d X_WP = reg.has<c::WorldPose>(p) ? reg.get<c::WorldPose>(p).value : Pose3d::Zero;
  reg.add<c::Pose>(e, p == world() ? X_WM : compose(inverse(X_WP), X_WM));
  reg.add<c::WorldPose>(e, X_WM);
  reg.add<c::Static>(e, is_static);
  return e;
}

ecs::Entity TestWorld::link(ecs::Entity model, const std::string& name, const Pose3d& X_ML,
                            double mass, const Vector3d& inertia, const Pose3d& com) {
  auto& reg = r();
  const ecs::Entity e = reg.create(model);
  reg.add<c::Link>(e);
  reg.add<c::Name>(e, name);
  reg.add<c::Pose>(e, X_ML);
  reg.add<c::WorldPose>(e, compose(reg.get<c::WorldPose>(model).value, X_ML));
  ignition::math::MassMatrix3d mm(mass, inertia, Vector3d::Zero);
  reg.add<c::Inertial>(e, ignition::math::Inertiald(mm, com));
  return e;
}

ecs::Entity TestWorld::collision(ecs::Entity link, const std::string& name, c::Geometry g,
                                 const Pose3d& X_LC, const c::Surface& s) {
  auto& reg = r();
  const ecs::Entity e = reg.create(link);
  reg.add<c::Collision>(e);
  reg.add<c::Name>(e, name);
  reg.add<c::Pose>(e, X_LC);
  reg.add<c::WorldPose>(e, compose(reg.get<c::WorldPose>(link).value, X_LC));
  reg.add<c::Geometry>(e, std::move(g));
  reg.add<c::Surface>(e, s);
  return e;
}

ecs::Entity TestWorld::joint(ecs::Entity model, const std::string& name, c::JointType type,
                             ecs::Entity parent_link, ecs::Entity child_link, const Pose3d& X_WJ,
                             const c::JointAxisData& axis) {
  auto& reg = r();
  const ecs::Entity e = reg.create(model);
  reg.add<c::Joint>(e);
  reg.add<c::Name>(e, name);
  const Pose3d X_WC = reg.get<c::WorldPose>(child_link).value;
  reg.add<c::Pose>(e, compose(inverse(X_WC), X_WJ));
  reg.add<c::WorldPose>(e, X_WJ);
  c::JointData jd;
  jd.type = type;
  jd.parent = parent_link;
  jd.child = child_link;
  jd.parent_name = parent_link == ecs::kNullEntity ? "world" : reg.get<c::Name>(parent_link).value;
  jd.child_name = reg.get<c::Name>(child_link).value;
  jd.axis = axis;
  if (type == c::JointType::kUniversal) {
    jd.axis2 = c::JointAxisData{};
    jd.axis2->xyz = {0, 1, 0};
  }
  reg.add<c::JointData>(e, jd);
  return e;
}

ecs::Entity TestWorld::ground(const c::Surface& s) {
  const ecs::Entity m = model("ground", Pose3d::Zero, true);
  const ecs::Entity l = link(m, "link", Pose3d::Zero, 1, {1, 1, 1});
  collision(l, "collision", c::Geometry{c::PlaneShape{}}, Pose3d::Zero, s);
  return m;
}

ecs::Entity TestWorld::box(const std::string& name, const Vector3d& pos, const Vector3d& size,
                           double mass, const c::Surface& s) {
  const ecs::Entity m = model(name, Pose3d(pos, ignition::math::Quaterniond::Identity));
  const double x = size.X(), y = size.Y(), z = size.Z();
  const ecs::Entity l =
      link(m, "link", Pose3d::Zero, mass,
           {mass / 12 * (y * y + z * z), mass / 12 * (x * x + z * z), mass / 12 * (x * x + y * y)});
  collision(l, "collision", c::Geometry{c::BoxShape{size}}, Pose3d::Zero, s);
  return m;
}

void TestWorld::start(const std::string& plugin_xml) {
  runner->add_system(make_physics_system(), world(),
                     plugin_xml.empty() ? Element::empty("plugin") : Element::parse(plugin_xml),
                     "kestrel::systems::Physics", "test");
  runner->configure();
}

void TestWorld::step(int n) {
  for (int i = 0; i < n; ++i) runner->step_once();
}

ecs::Entity link_of(ecs::Registry& r, ecs::Entity model) {
  const ecs::Entity l = r.child_by_name(model, "link");
  KESTREL_DEMAND(l != ecs::kNullEntity);
  return l;
}

std::string millimetre_cube_ply() {
  // One file per test process, removed when the process ends (not left in the temp folder).
  struct File {
    std::string path;
    ~File() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const File file{(std::filesystem::temp_directory_path() /
                          ("kestrel_cube_mm_" + std::to_string(::getpid()) + ".ply"))
                             .string()};
  const std::string& path = file.path;
  std::ofstream out(path);
  out << "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n"
         "property float z\nelement face 6\nproperty list uchar int vertex_indices\n"
         "end_header\n";
  for (int i = 0; i < 8; ++i) {
    out << ((i & 1) ? 100 : -100) << ' ' << ((i & 2) ? 100 : -100) << ' ' << ((i & 4) ? 100 : -100)
        << '\n';
  }
  out << "4 0 2 3 1\n4 4 5 7 6\n4 0 1 5 4\n4 2 6 7 3\n4 0 4 6 2\n4 1 3 7 5\n";
  return path;
}

}  // namespace kestrel::physics::testing
