#pragma once
// Hand-built worlds for physics tests (until then, and besides, SDF loading).

#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <memory>
#include <string>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/runner.h"

namespace kestrel::physics::testing {

using ignition::math::Pose3d;
using ignition::math::Vector3d;

struct TestWorld {
  explicit TestWorld(Duration dt = Duration{1'000'000}, Vector3d gravity = {0, 0, -9.8});

  ecs::Registry& r() { return runner->registry(); }
  ecs::Entity world() const { return runner->world(); }

  ecs::Entity model(const std::string& name, const Pose3d& X_WM, bool is_static = false,
                    ecs::Entity parent = ecs::kNullEntity);
  /// A link at X_ML in its model, mass [kg], principal inertia about the CoM at `com` (link frame).
  ecs::Entity link(ecs::Entity model, const std::string& name, const Pose3d& X_ML, double mass,
                   const Vector3d& inertia, const Pose3d& com = Pose3d::Zero);
  ecs::Entity collision(ecs::Entity link, const std::string& name, components::Geometry g,
                        const Pose3d& X_LC = Pose3d::Zero,
                        const components::Surface& s = components::Surface{});
  ecs::Entity joint(ecs::Entity model, const std::string& name, components::JointType type,
                    ecs::Entity parent_link, ecs::Entity child_link, const Pose3d& X_WJ,
                    const components::JointAxisData& axis = {});
  /// A static ground plane model "ground" at z = 0.
  ecs::Entity ground(const components::Surface& s = components::Surface{});
  /// A free box model `name` with one link "link" (collision "collision") at `pos`.
  ecs::Entity box(const std::string& name, const Vector3d& pos, const Vector3d& size, double mass,
                  const components::Surface& s = components::Surface{});

  /// Adds the Physics system (with this <plugin> element, if given) and configures the runner.
  void start(const std::string& plugin_xml = "");
  void step(int n = 1);

  std::unique_ptr<sim::Runner> runner;
};

/// A 200 mm cube authored in millimetres (±100 per axis) as an ASCII PLY file, a format MuJoCo
/// cannot read; returns its path (in the temporary folder; removed when the process ends).
std::string millimetre_cube_ply();

/// The link "link" of a box model.
ecs::Entity link_of(ecs::Registry& r, ecs::Entity model);

}  // namespace kestrel::physics::testing
