// Instructions per physics step, raw MuJoCo versus Kestrel, counted by callgrind (machine load
// cannot change an instruction count). For each world of issue 4, in one process:
//   raw      mj_step on the MJCF that export_mjcf writes for the world
//   kestrel  Runner::step_once with the Physics system (what BM_Kestrel times)
//   engine   PhysicsEngine::step alone, no Runner (what BM_KestrelEngine times)
// each after the same 500 settling steps, each phase counted separately through callgrind's
// client requests (the settling runs uninstrumented). Run it through bench/physics_step_count.sh,
// which starts valgrind and prints the table; see docs/performance.md.
//
// Without valgrind the client requests are no-ops and the program prints, per world, a digest of
// every physics state component after the steps (bit-identity checks across code changes) and
// checks that Kestrel's link poses equal raw MuJoCo's bit for bit (the same computation).
//
// Usage: kestrel_physics_step_count [--steps=N] [--request-wrenches] [--phases=raw,kestrel,...]
//   --steps=N            steps per counted phase for every world (default 2000; 100 boxes: 200)
//   --request-wrenches   add JointTransmittedWrench to every joint before starting (what a
//                        force_torque sensor does), so Physics computes transmitted wrenches

#include <mujoco/mujoco.h>
#include <valgrind/callgrind.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "bench/physics_worlds.h"
#include "bench/raw_mujoco.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/physics/physics.h"

namespace {

namespace c = kestrel::components;
using kestrel::ecs::Entity;
using kestrel::ecs::Registry;

constexpr int kSettle = 500;

// FNV-1a over raw bytes: a digest of doubles that changes with any bit.
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void v(const ignition::math::Vector3d& x) {
    const double a[3] = {x.X(), x.Y(), x.Z()};
    bytes(a, sizeof a);
  }
  void pose(const ignition::math::Pose3d& X) {
    v(X.Pos());
    const double q[4] = {X.Rot().W(), X.Rot().X(), X.Rot().Y(), X.Rot().Z()};
    bytes(q, sizeof q);
  }
  void vec(const std::vector<double>& d) { bytes(d.data(), d.size() * sizeof(double)); }
  void id(Entity e) { bytes(&e, sizeof e); }
};

template <class... Ts>
void vec3_digest(Registry& r, Digest& d) {
  (r.each<Ts>([&](Entity e, Ts& x) { d.id(e), d.v(x.value); }), ...);
}

// Every state component Physics writes (and Pose/WorldPose of links and models).
std::uint64_t state_digest(Registry& r) {
  Digest d;
  r.each<c::Link, c::WorldPose, c::Pose>(
      [&](Entity e, auto&, auto& wp, auto& p) { d.id(e), d.pose(wp.value), d.pose(p.value); });
  r.each<c::Model, c::WorldPose, c::Pose>(
      [&](Entity e, auto&, auto& wp, auto& p) { d.id(e), d.pose(wp.value), d.pose(p.value); });
  vec3_digest<c::LinearVelocity, c::AngularVelocity, c::WorldLinearVelocity,
              c::WorldAngularVelocity, c::LinearAcceleration, c::WorldLinearAcceleration,
              c::AngularAcceleration, c::WorldAngularAcceleration>(r, d);
  r.each<c::JointPosition>([&](Entity e, auto& x) { d.id(e), d.vec(x.data); });
  r.each<c::JointVelocity>([&](Entity e, auto& x) { d.id(e), d.vec(x.data); });
  r.each<c::JointForce>([&](Entity e, auto& x) { d.id(e), d.vec(x.data); });
  r.each<c::JointTransmittedWrench>(
      [&](Entity e, auto& w) { d.id(e), d.v(w.force), d.v(w.torque); });
  r.each<c::Contacts>([&](Entity e, c::Contacts& cs) {
    d.id(e);
    for (const auto& p : cs.points) {
      d.id(p.other), d.v(p.position), d.v(p.normal), d.bytes(&p.depth, sizeof p.depth),
          d.v(p.force);
    }
  });
  return d.h;
}

using Raw = kestrel::bench::RawMuJoCo;

std::unique_ptr<Raw> load_raw(const std::string& xml) {
  try {
    return kestrel::bench::load_raw_mujoco(xml);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(1);
  }
}

std::uint64_t raw_digest(const Raw& raw) {
  Digest d;
  d.bytes(raw.d->qpos, sizeof(mjtNum) * raw.m->nq);
  d.bytes(raw.d->qvel, sizeof(mjtNum) * raw.m->nv);
  return d.h;
}

// Link poses that differ (in any bit) between Kestrel's WorldPose and raw MuJoCo's body pose.
// mj_step leaves xpos/xquat at the start of the step (kinematics run before integration); Kestrel
// reports the state after it, so the raw kinematics are brought up to date first.
int pose_mismatches(Registry& r, const Raw& raw) {
  mj_kinematics(raw.m, raw.d);
  int bad = 0;
  r.each<c::Link, c::WorldPose>([&](Entity e, auto&, c::WorldPose& wp) {
    const int id = mj_name2id(raw.m, mjOBJ_BODY, r.scoped_name(e).c_str());
    if (id < 0) return;
    const mjtNum* p = raw.d->xpos + 3 * id;
    const mjtNum* q = raw.d->xquat + 4 * id;
    const auto& X = wp.value;
    if (X.Pos().X() != p[0] || X.Pos().Y() != p[1] || X.Pos().Z() != p[2] || X.Rot().W() != q[0] ||
        X.Rot().X() != q[1] || X.Rot().Y() != q[2] || X.Rot().Z() != q[3]) {
      ++bad;
      if (std::getenv("KESTREL_DEBUG_POSES")) {
        std::fprintf(stderr, "%s: kestrel %.17g %.17g %.17g %.17g raw %.17g %.17g %.17g %.17g\n",
                     r.scoped_name(e).c_str(), X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(),
                     p[0], p[1], p[2], q[0]);
      }
    }
  });
  return bad;
}

// One counted phase: callgrind counts only between START and DUMP; the dump is named
// "PHASE WORLD STEPS" (bench/physics_step_count.sh reads it back).
template <class Fn>
double phase(const char* name, const char* world, int steps, Fn&& step) {
  char label[128];
  std::snprintf(label, sizeof label, "%s %s %d", name, world, steps);
  const auto t0 = std::chrono::steady_clock::now();
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < steps; ++i) step();
  CALLGRIND_DUMP_STATS_AT(label);
  CALLGRIND_STOP_INSTRUMENTATION;
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / steps;
}

void request_wrenches(Registry& r) {
  r.each<c::Joint>([&](Entity e, const c::Joint&) {
    if (!r.has<c::JointTransmittedWrench>(e)) r.add<c::JointTransmittedWrench>(e);
  });
}

bool wants(std::string_view phases, std::string_view p) {
  return phases.empty() || phases.find(p) != std::string_view::npos;
}

}  // namespace

int main(int argc, char** argv) {
  int steps_override = 0;
  bool wrenches = false;
  std::string phases;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--steps=")) {
      steps_override = std::stoi(std::string(a.substr(8)));
    } else if (a == "--request-wrenches") {
      wrenches = true;
    } else if (a.starts_with("--phases=")) {
      phases = a.substr(9);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--steps=N] [--request-wrenches] [--phases=raw,kestrel,engine]\n",
                   argv[0]);
      return 2;
    }
  }
  const bool under_valgrind = RUNNING_ON_VALGRIND;
  std::printf("%-14s %6s %9s %18s %18s %18s %s\n", "world", "steps", "phase", "us/step(wall)",
              "kestrel digest", "raw digest", "poses==raw");
  for (int wi = 0; wi < kestrel::bench::kWorldCount; ++wi) {
    const char* name = kestrel::bench::kWorldNames[wi];
    const int steps = steps_override > 0 ? steps_override : (wi == 2 ? 200 : 2000);
    auto w = kestrel::bench::make_world(wi);
    if (!w) {
      std::printf("%-14s skipped: ../shared/worlds/gz/test_quadcopter.sdf not found\n", name);
      continue;
    }
    // raw MuJoCo
    auto raw = load_raw(kestrel::physics::export_mjcf(w->r(), w->world()));
    if (wants(phases, "raw")) {
      for (int i = 0; i < kSettle; ++i) mj_step(raw->m, raw->d);
      const double us = phase("raw", name, steps, [&] { mj_step(raw->m, raw->d); });
      std::printf("%-14s %6d %9s %18.3f %18s %016" PRIx64 "\n", name, steps, "raw", us, "",
                  raw_digest(*raw));
    }
    // Kestrel: Runner + Physics
    if (wants(phases, "kestrel")) {
      if (wrenches) request_wrenches(w->r());
      w->start();
      w->step(kSettle);
      const double us = phase("kestrel", name, steps, [&] { w->runner->step_once(); });
      std::printf("%-14s %6d %9s %18.3f %016" PRIx64 " %18s %s\n", name, steps, "kestrel", us,
                  state_digest(w->r()), "",
                  wants(phases, "raw") ? (pose_mismatches(w->r(), *raw) == 0 ? "yes" : "NO") : "-");
    }
    // the engine alone
    if (wants(phases, "engine")) {
      auto we = kestrel::bench::make_world(wi);
      if (wrenches) request_wrenches(we->r());
      auto engine = kestrel::physics::make_mujoco_engine();
      engine->build(we->r(), we->world());
      const kestrel::Duration dt{1'000'000};
      for (int i = 0; i < kSettle; ++i) engine->step(dt, we->r());
      const double us = phase("engine", name, steps, [&] { engine->step(dt, we->r()); });
      std::printf(
          "%-14s %6d %9s %18.3f %016" PRIx64 " %18s %s\n", name, steps, "engine", us,
          state_digest(we->r()), "",
          wants(phases, "raw") ? (pose_mismatches(we->r(), *raw) == 0 ? "yes" : "NO") : "-");
    }
    std::fflush(stdout);
  }
  if (under_valgrind) std::printf("(under valgrind: wall times are meaningless)\n");
  return 0;
}
