// Physics step cost: Kestrel (Runner + Physics system + MuJoCo, state written to components)
// versus raw MuJoCo stepping the MJCF Kestrel exports for the same world, in the same run.
// The one place besides src/physics/mujoco that includes MuJoCo: it is the reference.

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <filesystem>
#include <memory>

#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "physics/test_worlds.h"

namespace {

using ignition::math::Vector3d;
using kestrel::physics::testing::TestWorld;

std::unique_ptr<TestWorld> make_world(int which) {
  auto w = std::make_unique<TestWorld>();
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
      kestrel::sdf::load_world_file(file, w->r(), w->world());
      break;
    }
  }
  return w;
}

const char* kNames[] = {"free_box", "box_on_ground", "100_boxes", "quadcopter"};

void settle(TestWorld& w) { w.step(500); }

void BM_Kestrel(benchmark::State& state) {
  auto w = make_world(static_cast<int>(state.range(0)));
  if (!w) {
    state.SkipWithError("corpus world not found");
    return;
  }
  w->start();
  settle(*w);
  for (auto _ : state) w->runner->step_once();
  state.SetLabel(kNames[state.range(0)]);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The engine alone (no Runner): apply commands, step, write every state component.
void BM_KestrelEngine(benchmark::State& state) {
  auto w = make_world(static_cast<int>(state.range(0)));
  if (!w) {
    state.SkipWithError("corpus world not found");
    return;
  }
  auto engine = kestrel::physics::make_mujoco_engine();
  engine->build(w->r(), w->world());
  const kestrel::Duration dt{1'000'000};
  for (int i = 0; i < 500; ++i) engine->step(dt, w->r());
  for (auto _ : state) engine->step(dt, w->r());
  state.SetLabel(kNames[state.range(0)]);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_RawMuJoCo(benchmark::State& state) {
  auto w = make_world(static_cast<int>(state.range(0)));
  if (!w) {
    state.SkipWithError("corpus world not found");
    return;
  }
  const std::string xml = kestrel::physics::export_mjcf(w->r(), w->world());
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  mj_makeEmptyFileVFS(vfs.get(), "m.xml", static_cast<int>(xml.size()));
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "m.xml")], xml.data(), xml.size());
  char err[1000] = "";
  mjModel* m = mj_loadXML("m.xml", vfs.get(), err, sizeof(err));
  mj_deleteVFS(vfs.get());
  if (!m) {
    state.SkipWithError(err);
    return;
  }
  mjData* d = mj_makeData(m);
  for (int i = 0; i < 500; ++i) mj_step(m, d);
  for (auto _ : state) mj_step(m, d);
  state.SetLabel(kNames[state.range(0)]);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  mj_deleteData(d);
  mj_deleteModel(m);
}

// Interleaved per world so both sides see the same machine state.
BENCHMARK(BM_RawMuJoCo)->Arg(0);
BENCHMARK(BM_Kestrel)->Arg(0);
BENCHMARK(BM_KestrelEngine)->Arg(0);
BENCHMARK(BM_RawMuJoCo)->Arg(1);
BENCHMARK(BM_Kestrel)->Arg(1);
BENCHMARK(BM_KestrelEngine)->Arg(1);
BENCHMARK(BM_RawMuJoCo)->Arg(2);
BENCHMARK(BM_Kestrel)->Arg(2);
BENCHMARK(BM_KestrelEngine)->Arg(2);
BENCHMARK(BM_RawMuJoCo)->Arg(3);
BENCHMARK(BM_Kestrel)->Arg(3);
BENCHMARK(BM_KestrelEngine)->Arg(3);

}  // namespace

BENCHMARK_MAIN();
