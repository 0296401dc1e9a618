// Physics step cost: Kestrel (Runner + Physics system + MuJoCo, state written to components)
// versus raw MuJoCo stepping the MJCF Kestrel exports for the same world, in the same run.
// Benchmarks (this file and physics_step_count.cc) are the only places besides src/physics/mujoco
// that include MuJoCo: it is the reference.

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <memory>

#include "bench/physics_worlds.h"
#include "bench/raw_mujoco.h"
#include "kestrel/physics/physics.h"

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
