// Raw MuJoCo 2.2 on the models of physics islands: COPIES copies of each MJCF given (each its
// own mjModel and mjData, as Kestrel's islands are), every step mj_step of every copy in turn;
// prints the best of 3 runs of 100 steps (after 200 settling steps) in ms per step (wall time).
// The reference for bench/shapes_bench.sh and bench/swarm_islands_bench.sh (docs/performance.md,
// "Large worlds").
//   usage: kestrel_raw_islands_bench [--fly] [--servos] [--threads=T] COPIES MODEL.xml...
//   --fly        every copy in free flight (bench/raw_mujoco.h, make_flying): no contact
//   --servos     every hinge held by a friction-loss row, as Kestrel's joint velocity servos
//                hold a velocity-commanded joint (src/physics/README.md): the rotors' rows
//   --threads=T  the copies split into T contiguous shares, each stepped by its own thread with
//                no synchronisation between them (independent models need none): what T
//                perfectly used cores give, the bound for Kestrel's parallel islands
// (the MJCF of one island: `kestrel export-mjcf` of a world holding only that island's models)

#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/raw_mujoco.h"

int main(int argc, char** argv) {
  bool fly = false, servos = false;
  int threads = 1;
  int a = 1;
  for (; a < argc && std::strncmp(argv[a], "--", 2) == 0; ++a) {
    const std::string arg = argv[a];
    if (arg == "--fly") {
      fly = true;
    } else if (arg == "--servos") {
      servos = true;
    } else if (arg.rfind("--threads=", 0) == 0) {
      threads = std::atoi(arg.c_str() + 10);
      if (threads < 1 || threads > 256) {
        std::fprintf(stderr, "--threads must be 1..256, found '%s'\n", arg.c_str() + 10);
        return 2;
      }
    } else {
      std::fprintf(stderr, "unknown option '%s'\n", argv[a]);
      return 2;
    }
  }
  if (argc - a < 2) {
    std::fprintf(stderr, "usage: %s [--fly] [--servos] [--threads=T] COPIES MODEL.xml...\n",
                 argv[0]);
    return 2;
  }
  const int copies = std::atoi(argv[a]);
  if (copies < 1) {
    std::fprintf(stderr, "COPIES must be a whole number >= 1, found '%s'\n", argv[a]);
    return 2;
  }
  std::vector<mjModel*> models;
  std::vector<mjData*> data;
  for (int i = a + 1; i < argc; ++i) {
    char err[1000] = "";
    mjModel* m0 = mj_loadXML(argv[i], nullptr, err, sizeof err);
    if (!m0) {
      std::fprintf(stderr, "%s: %s\n", argv[i], err);
      return 1;
    }
    for (int k = 0; k < copies; ++k) models.push_back(mj_copyModel(nullptr, m0));
    mj_deleteModel(m0);
  }
  // Interleaved as the islands of a world are (copy k of every model, then copy k + 1).
  std::vector<std::size_t> order;
  const std::size_t kinds = static_cast<std::size_t>(argc - a - 1);
  for (int k = 0; k < copies; ++k) {
    for (std::size_t j = 0; j < kinds; ++j) order.push_back(j * copies + k);
  }
  for (mjModel* m : models) {
    if (servos) kestrel::bench::hold_hinges(m);
    data.push_back(mj_makeData(m));
    if (fly) kestrel::bench::make_flying(m, data.back());
  }
  // Thread t steps order[share(t) .. share(t + 1)) for `steps` steps.
  auto share = [&](int t) { return order.size() * static_cast<std::size_t>(t) / threads; };
  auto run = [&](int steps) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int s = 0; s < steps; ++s) {
          for (std::size_t i = share(t); i < share(t + 1); ++i) {
            mj_step(models[order[i]], data[order[i]]);
          }
        }
      });
    }
    for (auto& th : pool) th.join();
  };
  run(200);
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run(100);
    const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / 100);
  }
  std::printf("%zu models%s%s, %d thread%s: %.2f ms per step\n", models.size(),
              fly ? " flying" : "", servos ? " with servo rows" : "", threads,
              threads == 1 ? "" : "s", best);
  for (std::size_t i = 0; i < models.size(); ++i) {
    mj_deleteData(data[i]);
    mj_deleteModel(models[i]);
  }
  return 0;
}
