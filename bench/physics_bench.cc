// Physics step cost: Kestrel (Runner + Physics system + MuJoCo, state written to components)
// versus raw MuJoCo stepping the MJCF Kestrel exports for the same world, in the same run.
// Benchmarks (this file and physics_step_count.cc) are the only places besides src/physics/mujoco
// that include MuJoCo: it is the reference.

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "bench/physics_worlds.h"
#include "bench/raw_mujoco.h"
#include "kestrel/components/detachable_joint.h"
#include "kestrel/components/physics.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"

namespace {

using kestrel::bench::kWorldNames;
using kestrel::bench::make_world;
using kestrel::physics::testing::TestWorld;

const char* const* kNames = kWorldNames;

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
  std::unique_ptr<kestrel::bench::RawMuJoCo> raw;
  try {
    raw = kestrel::bench::load_raw_mujoco(xml);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  mjModel* m = raw->m;
  mjData* d = raw->d;
  for (int i = 0; i < 500; ++i) mj_step(m, d);
  for (auto _ : state) mj_step(m, d);
  state.SetLabel(kNames[state.range(0)]);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Interleaved per world so both sides see the same machine state.
// Detachable joints (src/physics/README.md, "Detachable joints"): gz-sim's detachable_joint.sdf
// (vehicle_blue holding B1, B2, B3 through three DetachableJoints) stepped by the engine alone;
// range(0): 0 steps only, 1 detaches or re-attaches B1 at every step (the weld switched), 2
// rebuilds the engine at every step (what a detach as a model rebuild would cost).
void BM_Detachable(benchmark::State& state) {
  namespace c = kestrel::components;
  const auto file =
      std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz" / "detachable_joint.sdf";
  if (!std::filesystem::exists(file)) {
    state.SkipWithError("corpus world not found");
    return;
  }
  TestWorld w;
  kestrel::sdf::load_world_file(file, w.r(), w.world());
  auto& r = w.r();
  const auto link = [&](const char* model, const char* name) {
    return r.child_by_name(r.child_by_name(w.world(), model), name);
  };
  const auto vehicle = r.child_by_name(w.world(), "vehicle_blue");
  std::vector<kestrel::ecs::Entity> joints;
  for (const char* b : {"B1", "B2", "B3"}) {
    joints.push_back(r.create(vehicle));
    r.add<c::DetachableJoint>(joints.back(), [&] {
      c::DetachableJoint dj;
      dj.parent_link = link("vehicle_blue", "chassis");
      dj.child_link = link(b, "body");
      return dj;
    }());
  }
  auto engine = kestrel::physics::make_mujoco_engine();
  engine->build(r, w.world());
  const kestrel::Duration dt{1'000'000};
  for (int i = 0; i < 500; ++i) engine->step(dt, r);
  const int mode = static_cast<int>(state.range(0));
  for (auto _ : state) {
    if (mode == 1) {
      auto& dj = r.get<c::DetachableJoint>(joints[0]);
      dj.attached = !dj.attached;
    }
    if (mode == 2) engine->build(r, w.world());
    engine->step(dt, r);
  }
  state.SetLabel(mode == 0 ? "steps" : mode == 1 ? "steps + weld switched" : "steps + rebuild");
}

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

BENCHMARK(BM_Detachable)->Arg(0)->Arg(1)->Arg(2);

BENCHMARK_MAIN();
