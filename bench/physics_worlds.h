#pragma once
// The four worlds of issue 4's physics benchmark, shared by kestrel_physics_bench (wall clock)
// and kestrel_physics_step_count (instruction counts under callgrind).

#include <filesystem>
#include <memory>
#include <string>

#include "kestrel/sdf/world_loader.h"
#include "physics/test_worlds.h"

namespace kestrel::bench {

inline constexpr int kWorldCount = 4;
inline constexpr const char* kWorldNames[kWorldCount] = {"free_box", "box_on_ground", "100_boxes",
                                                         "quadcopter"};

/// World `which` (0..3) in a fresh TestWorld (not started), or nullptr when the corpus world
/// (../shared/worlds/gz/test_quadcopter.sdf) is absent.
inline std::unique_ptr<physics::testing::TestWorld> make_world(int which) {
  auto w = std::make_unique<physics::testing::TestWorld>();
  switch (which) {
    case 0:  // one free box (falling, no ground)
      w->box("box", {0, 0, 1e6}, {0.2, 0.2, 0.2}, 1.0);
      break;
    case 1:  // one box resting on the ground
      w->ground();
      w->box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, 1.0);
      break;
    case 2:  // 100 boxes resting on the ground, 10 x 10
      w->ground();
      for (int i = 0; i < 100; ++i) {
        w->box("box" + std::to_string(i), {0.5 * (i % 10), 0.5 * (i / 10), 0.1}, {0.2, 0.2, 0.2},
               1.0);
      }
      break;
    case 3: {  // the quadcopter world of the Gazebo corpus
      const auto file =
          std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz" / "test_quadcopter.sdf";
      if (!std::filesystem::exists(file)) return nullptr;
      sdf::load_world_file(file, w->r(), w->world());
      break;
    }
  }
  return w;
}

}  // namespace kestrel::bench
