#pragma once
// Test support: a Runner with a world loaded from SDF text (or a file), Physics, and chosen
// sensor systems, stepped in sim time.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string_view>

#include "kestrel/components/world.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/sim/runner.h"

namespace kestrel::sensors::testing {

struct TestWorld {
  explicit TestWorld(std::string_view sdf, std::uint64_t seed = 0) {
    runner = std::make_unique<sim::Runner>(options(seed));
    desc = sdf::load_world_string(sdf, runner->registry(), runner->world());
    check_findings();
  }
  struct FromFile {};
  TestWorld(FromFile, const std::filesystem::path& file, std::uint64_t seed) {
    runner = std::make_unique<sim::Runner>(options(seed));
    desc = sdf::load_world_file(file, runner->registry(), runner->world());
    check_findings();
  }
  static sim::Runner::Options options(std::uint64_t seed) {
    sim::Runner::Options o;
    o.real_time_factor = 0;
    o.seed = seed;
    return o;
  }
  void check_findings() {
    for (const auto& f : desc.findings.items()) {
      if (f.severity == sdf::Severity::kError) ADD_FAILURE() << f.message;
    }
  }
  /// Adds Physics plus `system` (call several times for several systems), then configure().
  void add(std::unique_ptr<System> system, const char* name = "sensor") {
    runner->add_system(std::move(system), runner->world(), Element::empty("plugin"), name, "test");
  }
  void start(bool physics = true) {
    const auto& params = r().get<components::PhysicsParams>(runner->world());
    runner->set_step_size(params.max_step_size);
    if (physics) add(physics::make_physics_system(), "kestrel::systems::Physics");
    runner->configure();
  }
  void step(std::uint64_t n = 1) {
    for (std::uint64_t i = 0; i < n; ++i) runner->step_once();
  }
  ecs::Registry& r() { return runner->registry(); }
  ecs::Entity find(std::string_view scoped) {
    const ecs::Entity e = r().find_scoped(scoped);
    EXPECT_NE(e, ecs::kNullEntity) << "no entity " << scoped;
    return e;
  }
  std::unique_ptr<sim::Runner> runner;
  sdf::WorldDescription desc;
};

}  // namespace kestrel::sensors::testing
