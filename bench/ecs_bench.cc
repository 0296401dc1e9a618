// Registry benchmarks (issue 2). Run: build/bench/kestrel_ecs_bench
// Figures and how to reproduce them: docs/performance.md.
#include <benchmark/benchmark.h>

#include "kestrel/ecs/registry.h"
#include "sensors/noise/noise.h"

namespace {

using kestrel::ecs::Entity;
using kestrel::ecs::Registry;

struct Position {
  double x = 0, y = 0, z = 0;
};
struct Velocity {
  double x = 0, y = 0, z = 0;
};
struct Mass {
  double kg = 1;
};
struct Tag {
  int v = 0;
};
struct Label {
  std::string s = "link";
};

constexpr int kMillion = 1'000'000;

void BM_CreateRemove1M(benchmark::State& state) {
  Registry r;
  std::vector<Entity> es(kMillion);
  for (auto _ : state) {
    for (auto& e : es) {
      e = r.create();
      r.add<Position>(e);
    }
    for (Entity e : es) r.request_remove(e, false);
    r.end_step();
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kMillion);
}
BENCHMARK(BM_CreateRemove1M)->Unit(benchmark::kMillisecond);

void BM_EachTwoComponents1M(benchmark::State& state) {
  Registry r;
  for (int i = 0; i < kMillion; ++i) {
    const Entity e = r.create();
    r.add<Position>(e);
    r.add<Velocity>(e, 1.0, 2.0, 3.0);
  }
  for (auto _ : state) {
    r.each<Position, const Velocity>([](Entity, Position& p, const Velocity& v) {
      p.x += v.x * 1e-3;
      p.y += v.y * 1e-3;
      p.z += v.z * 1e-3;
    });
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kMillion);
  state.counters["ns_per_entity"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kMillion,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EachTwoComponents1M)->Unit(benchmark::kMillisecond);

// Reference: the same loop over two plain arrays, measured in the same run.
void BM_PlainArrays1M(benchmark::State& state) {
  std::vector<Position> ps(kMillion);
  std::vector<Velocity> vs(kMillion, Velocity{1, 2, 3});
  for (auto _ : state) {
    for (int i = 0; i < kMillion; ++i) {
      ps[i].x += vs[i].x * 1e-3;
      ps[i].y += vs[i].y * 1e-3;
      ps[i].z += vs[i].z * 1e-3;
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kMillion);
  state.counters["ns_per_entity"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kMillion,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PlainArrays1M)->Unit(benchmark::kMillisecond);

void BM_RandomGet(benchmark::State& state) {
  Registry r;
  std::vector<Entity> es;
  for (int i = 0; i < kMillion; ++i) {
    es.push_back(r.create());
    r.add<Position>(es.back());
  }
  // Fisher–Yates with the project's one random scheme (src/sensors/noise).
  kestrel::sensors::Rng rng(1);
  for (std::size_t k = es.size() - 1; k > 0; --k) std::swap(es[k], es[rng.next() % (k + 1)]);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(r.get<Position>(es[i]).x);
    if (++i == es.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RandomGet);

void BM_SnapshotRestore100k(benchmark::State& state) {
  Registry r;
  for (int i = 0; i < 100'000; ++i) {
    const Entity e = r.create();
    r.add<Position>(e);
    r.add<Velocity>(e);
    r.add<Mass>(e);
    r.add<Tag>(e, i);
    r.add<Label>(e);
  }
  r.end_step();
  const auto snap = r.snapshot();
  for (auto _ : state) {
    r.restore(snap);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * 100'000);
}
BENCHMARK(BM_SnapshotRestore100k)->Unit(benchmark::kMillisecond);

void BM_Snapshot100k(benchmark::State& state) {
  Registry r;
  for (int i = 0; i < 100'000; ++i) {
    const Entity e = r.create();
    r.add<Position>(e);
    r.add<Velocity>(e);
    r.add<Mass>(e);
    r.add<Tag>(e, i);
    r.add<Label>(e);
  }
  r.end_step();
  for (auto _ : state) benchmark::DoNotOptimize(r.snapshot());
  state.SetItemsProcessed(state.iterations() * 100'000);
}
BENCHMARK(BM_Snapshot100k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
