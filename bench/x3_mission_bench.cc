// The X3 mission world (worlds/x3_mission.sdf) at 1 ms steps as fast as possible, against raw
// MuJoCo stepping the MJCF that Kestrel exports for the same world, in the same run
// (docs/performance.md, "Whole program: the X3 mission demo").
//
//   kestrel_x3_mission_bench [WORLD] [--rounds=N] [--steps=N]
//
// Per round, alternating so every phase sees the same machine state:
//   kestrel   load the world (not timed), then Runner::step_once until the mission is over or
//             --steps (every system and sensor of the world runs; no transport: the bench links
//             no transport, see transport_bench.sh for its cost)
//   raw       mj_step on the exported MJCF for the same number of steps, as exported (the
//             vehicle rests on the ground: one box-plane contact every step)
//   raw_fly   the same model, lifted to 5 m with gravity cancelled by xfrc_applied on every
//             body and the rotors spinning at hover speed: free flight, no contact, as during
//             most of the mission
//   mix       the reference for the whole mission: raw for the steps on which the vehicle touches
//             the ground in Kestrel's run (counted in one extra, untimed run; the run is
//             deterministic) and raw_fly for the others, time-weighted
// Prints steps/s of each (CPU time of this thread, best of the rounds) and the ratios.
// Like physics_bench.cc, benchmarks are the only places besides src/physics/mujoco that include
// MuJoCo: it is the reference.

#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/error.h"
#include "kestrel/physics/physics.h"
#include "kestrel/world/setup.h"
#include "kestrel/sim/runner.h"
#include "bench/raw_mujoco.h"

namespace {

namespace c = kestrel::components;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::unique_ptr<kestrel::sim::Runner> load(const std::filesystem::path& world) {
  auto runner = std::make_unique<kestrel::sim::Runner>(kestrel::sim::Runner::Options{});
  kestrel::world::load_world_into_runner(world, *runner);
  runner->configure();
  return runner;
}

bool missions_over(const kestrel::ecs::Registry& r) {
  bool over = true, any = false;
  r.each<c::MissionState>([&](kestrel::ecs::Entity, const c::MissionState& s) {
    any = true;
    over = over && (s.phase == c::MissionPhase::kCompleted || s.phase == c::MissionPhase::kFailed);
  });
  return any && over;
}

struct KestrelRun {
  long steps = 0;
  double cpu = 0;
  std::string outcome;
};

KestrelRun run_kestrel(const std::filesystem::path& world, long max_steps) {
  auto runner = load(world);
  KestrelRun out;
  const double t0 = thread_cpu_seconds();
  while (out.steps < max_steps && !missions_over(runner->registry())) {
    runner->step_once();
    ++out.steps;
  }
  out.cpu = thread_cpu_seconds() - t0;
  runner->registry().each<c::MissionState>([&](kestrel::ecs::Entity, const c::MissionState& s) {
    out.outcome += fmt::format("{}{} (max tracking error {:.3f} m)", out.outcome.empty() ? "" : ", ",
                               c::mission_phase_name(s.phase), s.max_tracking_error);
  });
  return out;
}

// Steps of the same (deterministic) run on which some collision is in contact: the vehicle on
// the ground before take-off and after landing.
long contact_steps(const std::filesystem::path& world, long steps) {
  auto runner = load(world);
  long n = 0;
  for (long i = 0; i < steps; ++i) {
    runner->step_once();
    bool touching = false;
    runner->registry().each<c::Contacts>([&](kestrel::ecs::Entity, const c::Contacts& cs) {
      touching = touching || !cs.points.empty();
    });
    n += touching ? 1 : 0;
  }
  return n;
}

double run_raw(const std::string& xml, long steps, bool flying) {
  auto mj = kestrel::bench::load_raw_mujoco(xml);
  if (flying) kestrel::bench::make_flying(mj->m, mj->d);
  const double t0 = thread_cpu_seconds();
  for (long i = 0; i < steps; ++i) mj_step(mj->m, mj->d);
  return thread_cpu_seconds() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path world = std::filesystem::path(KESTREL_SOURCE_DIR) / "worlds" /
                                "x3_mission.sdf";
  int rounds = 3;
  long max_steps = 200'000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--rounds=", 0) == 0) {
      rounds = std::stoi(a.substr(9));
    } else if (a.rfind("--steps=", 0) == 0) {
      max_steps = std::stol(a.substr(8));
    } else if (a.rfind("--", 0) == 0) {
      fmt::print(stderr, "usage: {} [WORLD] [--rounds=N] [--steps=N]\n", argv[0]);
      return 2;
    } else {
      world = a;
    }
  }
  try {
    std::string xml;
    {
      auto r = load(world);
      xml = kestrel::physics::export_mjcf(r->registry(), r->world());
    }
    double best_k = 1e300, best_raw = 1e300, best_fly = 1e300;
    long steps = 0;
    for (int round = 0; round < rounds; ++round) {
      const KestrelRun k = run_kestrel(world, max_steps);
      steps = k.steps;
      const double raw = run_raw(xml, steps, false);
      const double fly = run_raw(xml, steps, true);
      fmt::print("round {}: {} steps; kestrel {:.3f} s ({}), raw {:.3f} s, raw_fly {:.3f} s\n",
                 round, steps, k.cpu, k.outcome, raw, fly);
      best_k = std::min(best_k, k.cpu);
      best_raw = std::min(best_raw, raw);
      best_fly = std::min(best_fly, fly);
    }
    const long on_ground = contact_steps(world, steps);
    const double f = static_cast<double>(on_ground) / static_cast<double>(steps);
    const double best_mix = f * best_raw + (1 - f) * best_fly;
    const auto rate = [&](double s) { return static_cast<double>(steps) / s; };
    fmt::print("{}: {} steps of 1 ms, best of {} rounds (thread CPU time)\n", world.string(), steps,
               rounds);
    fmt::print("  kestrel  {:9.0f} steps/s  {:6.2f} us/step\n", rate(best_k), 1e6 / rate(best_k));
    fmt::print("  raw      {:9.0f} steps/s  {:6.2f} us/step  kestrel/raw     {:.3f}\n",
               rate(best_raw), 1e6 / rate(best_raw), best_k / best_raw);
    fmt::print("  raw_fly  {:9.0f} steps/s  {:6.2f} us/step  kestrel/raw_fly {:.3f}\n",
               rate(best_fly), 1e6 / rate(best_fly), best_k / best_fly);
    fmt::print("  mix      {:9.0f} steps/s  {:6.2f} us/step  kestrel/mix     {:.3f}  "
               "({} of {} steps in contact with the ground)\n",
               rate(best_mix), 1e6 / rate(best_mix), best_k / best_mix, on_ground, steps);
  } catch (const std::exception& e) {
    fmt::print(stderr, "x3_mission_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
