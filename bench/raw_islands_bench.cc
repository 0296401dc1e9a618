// Raw MuJoCo 2.2 on the models of physics islands: COPIES copies of each MJCF given (each its
// own mjModel and mjData, as Kestrel's islands are), every step mj_step of every copy in turn;
// prints the best of 3 runs of 100 steps (after 200 settling steps) in ms per step. The
// reference for bench/shapes_bench.sh (docs/performance.md, "Large worlds").
//   usage: kestrel_raw_islands_bench COPIES MODEL.xml...
// (the MJCF of one island: `kestrel export-mjcf` of a world holding only that island's models)

#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s COPIES MODEL.xml...\n", argv[0]);
    return 2;
  }
  const int copies = std::atoi(argv[1]);
  if (copies < 1) {
    std::fprintf(stderr, "COPIES must be a whole number >= 1, found '%s'\n", argv[1]);
    return 2;
  }
  std::vector<mjModel*> models;
  std::vector<mjData*> data;
  for (int i = 2; i < argc; ++i) {
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
  const std::size_t kinds = static_cast<std::size_t>(argc - 2);
  for (int k = 0; k < copies; ++k) {
    for (std::size_t j = 0; j < kinds; ++j) order.push_back(j * copies + k);
  }
  for (mjModel* m : models) data.push_back(mj_makeData(m));
  auto step_all = [&] {
    for (std::size_t i : order) mj_step(models[i], data[i]);
  };
  for (int s = 0; s < 200; ++s) step_all();
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < 100; ++s) step_all();
    const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / 100);
  }
  std::printf("%zu models: %.2f ms per step\n", models.size(), best);
  for (std::size_t i = 0; i < models.size(); ++i) {
    mj_deleteData(data[i]);
    mj_deleteModel(models[i]);
  }
  return 0;
}
