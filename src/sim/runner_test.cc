#include "kestrel/sim/runner.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "kestrel/components/pacing.h"
#include "kestrel/components/world.h"
#include "sensors/noise/noise.h"

namespace kestrel::sim {
namespace {

using ::testing::ElementsAre;

struct Trace {
  std::vector<std::string> calls;
};

// Records every phase call as "<name>:<phase>".
class Recorder : public System,
                 public ISystemConfigure,
                 public ISystemPreUpdate,
                 public ISystemUpdate,
                 public ISystemPostUpdate {
 public:
  Recorder(Trace& t, std::string name, int prio) : t_(t), name_(std::move(name)), prio_(prio) {}
  int priority() const override { return prio_; }
  void configure(ecs::Entity, const Element&, ecs::Registry&, EventBus&) override {
    t_.calls.push_back(name_ + ":configure");
  }
  void pre_update(const UpdateInfo&, ecs::Registry&) override {
    t_.calls.push_back(name_ + ":pre");
  }
  void update(const UpdateInfo&, ecs::Registry&) override { t_.calls.push_back(name_ + ":update"); }
  void post_update(const UpdateInfo&, const ecs::Registry&) override {
    t_.calls.push_back(name_ + ":post");
  }

 private:
  Trace& t_;
  std::string name_;
  int prio_;
};

Runner::Options fast() {
  Runner::Options o;
  o.real_time_factor = 0;
  return o;
}

TEST(Runner, PhasesRunInPriorityOrderWithTiesInLoadOrder) {
  Trace t;
  Runner r(fast());
  r.add_system(std::make_unique<Recorder>(t, "b0", 0), 0, nullptr, "b0", "test");
  r.add_system(std::make_unique<Recorder>(t, "phys", priority::kPhysics), 0, nullptr, "phys",
               "test");
  r.add_system(std::make_unique<Recorder>(t, "a0", 0), 0, nullptr, "a0", "test");
  r.add_system(std::make_unique<Recorder>(t, "uc", priority::kUserCommands), 0, nullptr, "uc", "t");
  // A plugin element can override the priority, as <gz:system_priority> does in Gazebo.
  r.add_system(std::make_unique<Recorder>(t, "over", 0), 0,
               Element::parse("<plugin><gz:system_priority>-100</gz:system_priority></plugin>"),
               "over", "test");
  // A near miss (as in Gazebo's sensors.sdf) is ignored, as Gazebo ignores it (with a warning).
  r.add_system(std::make_unique<Recorder>(t, "miss", 0), 0,
               Element::parse("<plugin><gz::system_priority>-200</gz::system_priority></plugin>"),
               "miss", "test");
  r.configure();
  EXPECT_THAT(t.calls, ElementsAre("uc:configure", "over:configure", "phys:configure",
                                   "b0:configure", "a0:configure", "miss:configure"));
  t.calls.clear();
  r.step_once();
  EXPECT_THAT(t.calls, ElementsAre("uc:pre", "over:pre", "phys:pre", "b0:pre", "a0:pre", "miss:pre",
                                   "uc:update", "over:update", "phys:update", "b0:update",
                                   "a0:update", "miss:update", "uc:post", "over:post", "phys:post",
                                   "b0:post", "a0:post", "miss:post"));
}

// A toy dynamics system: integrates a random-walk velocity into a position component, with an
// RNG seeded from the world seed; resets itself to its configured state.
struct Body {
  double x = 0, v = 0;
};
class Walker : public System, public ISystemConfigure, public ISystemUpdate, public ISystemReset {
 public:
  void configure(ecs::Entity, const Element&, ecs::Registry& reg, EventBus&) override {
    body_ = reg.create();
    reg.add<Body>(body_, 0.0, 1.0);
    rng_ = sensors::Rng(42);
  }
  void update(const UpdateInfo& info, ecs::Registry& reg) override {
    auto& b = reg.get<Body>(body_);
    b.v += rng_.normal() * to_seconds(info.dt);
    b.x += b.v * to_seconds(info.dt);
    // Spawn and remove entities now and then so reset must undo structural changes.
    if (info.iterations % 10 == 5) spawned_.push_back(reg.create());
    if (info.iterations % 10 == 8 && !spawned_.empty()) {
      reg.request_remove(spawned_.back());
      spawned_.pop_back();
    }
  }
  void reset(const UpdateInfo&, ecs::Registry&) override {
    rng_ = sensors::Rng(42);
    spawned_.clear();
  }
  ecs::Entity body_ = ecs::kNullEntity;

 private:
  sensors::Rng rng_{42};
  std::vector<ecs::Entity> spawned_;
};

std::vector<double> trajectory(Runner& r, Walker& w, int n) {
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) {
    r.step_once();
    xs.push_back(r.registry().get<Body>(w.body_).x);
  }
  return xs;
}

TEST(Runner, SimTimeIsIntegerStepCount) {
  auto o = fast();
  o.step_size = Duration{333'333};
  Runner r(o);
  r.configure();
  r.run(3000);
  EXPECT_EQ(r.info().iterations, 3000u);
  EXPECT_EQ(r.info().sim_time, Duration{333'333 * 3000LL});
}

TEST(Runner, PauseStepNAndRunToTime) {
  auto o = fast();
  o.paused = true;
  Runner r(o);
  r.configure();
  EXPECT_FALSE(r.step_once());
  EXPECT_EQ(r.info().iterations, 0u);
  r.step_n(3);
  for (int i = 0; i < 10; ++i) r.step_once();
  EXPECT_EQ(r.info().iterations, 3u);
  r.run_to(Duration{20'000'000});  // 20 ms = 20 steps of 1 ms
  for (int i = 0; i < 100; ++i) r.step_once();
  EXPECT_EQ(r.info().sim_time, Duration{20'000'000});
  EXPECT_TRUE(r.info().paused);
  r.set_paused(false);
  r.step_once();
  EXPECT_EQ(r.info().iterations, 21u);
}

TEST(Runner, ResetReproducesAFreshRunBitForBit) {
  Runner fresh(fast());
  auto w1 = std::make_unique<Walker>();
  Walker& walker1 = *w1;
  fresh.add_system(std::move(w1), 0, nullptr, "walker", "test");
  fresh.configure();
  const auto first = trajectory(fresh, walker1, 200);
  const auto entities_after = fresh.registry().entities();

  fresh.reset_now();
  EXPECT_EQ(fresh.info().iterations, 0u);
  EXPECT_EQ(fresh.info().sim_time, Duration{0});
  const auto second = trajectory(fresh, walker1, 200);
  EXPECT_EQ(first, second);  // exact equality, not near

  // And a second, independent runner gives the same numbers (determinism).
  Runner other(fast());
  auto w2 = std::make_unique<Walker>();
  Walker& walker2 = *w2;
  other.add_system(std::move(w2), 0, nullptr, "walker", "test");
  other.configure();
  EXPECT_EQ(trajectory(other, walker2, 200), first);
  EXPECT_EQ(entities_after.size(), fresh.registry().entities().size());
}

TEST(Runner, ResetThroughControlQueueAndTimeOnly) {
  Runner r(fast());
  auto w = std::make_unique<Walker>();
  Walker& walker = *w;
  r.add_system(std::move(w), 0, nullptr, "walker", "test");
  r.configure();
  trajectory(r, walker, 50);
  const double x50 = r.registry().get<Body>(walker.body_).x;
  r.request_reset(/*time_only=*/true);
  r.step_once();
  EXPECT_EQ(r.info().iterations, 1u);
  EXPECT_NE(r.registry().get<Body>(walker.body_).x, 0.0);
  EXPECT_NE(r.registry().get<Body>(walker.body_).x, x50);  // state kept, one more step taken
  r.request_reset();
  r.step_once();
  EXPECT_EQ(r.info().iterations, 1u);
}

// A request made of several changes posts them from one posted function: they all apply before
// the next step (a reset then a pause leaves the paused world at iteration 0).
TEST(Runner, WhatAPostedFunctionPostsAppliesAtTheSameBoundary) {
  Runner r(fast());
  r.configure();
  r.step_once();
  r.post([](Runner& run) {
    run.request_reset();
    run.set_paused(true);
  });
  EXPECT_FALSE(r.step_once()) << "a step ran between the reset and the pause";
  EXPECT_EQ(r.info().iterations, 0u);
}

// What other threads post while a boundary's functions run waits for the next boundary, after
// a step: a client that keeps posting cannot hold the world at one boundary.
TEST(Runner, WhatOtherThreadsPostMeanwhileWaitsForTheNextBoundary) {
  Runner r(fast());
  r.configure();
  bool ran = false;
  std::uint64_t at = 99;
  r.post([&](Runner& run) {
    std::thread([&] {
      run.post([&](Runner& rr) {
        ran = true;
        at = rr.info().iterations;
      });
    }).join();
  });
  EXPECT_TRUE(r.step_once());
  EXPECT_FALSE(ran);
  r.step_once();
  EXPECT_TRUE(ran);
  EXPECT_EQ(at, 1u);
}

TEST(Runner, StepDoneEventAndStop) {
  Runner r(fast());
  r.configure();
  int n = 0;
  auto sub = r.events().subscribe<StepDone>([&](const StepDone& e) {
    ++n;
    if (e.info.iterations == 9) r.stop();
  });
  r.run();
  EXPECT_EQ(n, 10);
  EXPECT_EQ(r.info().iterations, 10u);
}

TEST(Runner, RejectsBadOptionsLoudly) {
  auto o = fast();
  o.step_size = Duration{0};
  EXPECT_THROW(Runner{o}, Error);
  o = fast();
  o.real_time_factor = -1;
  EXPECT_THROW(Runner{o}, Error);
}

// Two systems whose PostUpdate runs on the pool see the same read-only registry.
class Reader : public System, public ISystemPostUpdate {
 public:
  explicit Reader(std::atomic<int>& n) : n_(n) {}
  void post_update(const UpdateInfo&, const ecs::Registry& r) override {
    r.each<components::World>([&](ecs::Entity, const components::World&) { ++n_; });
  }

 private:
  std::atomic<int>& n_;
};

TEST(Runner, ParallelPostUpdateRunsEverySystem) {
  auto o = fast();
  o.post_update_threads = 2;
  Runner r(o);
  std::atomic<int> n{0};
  for (int i = 0; i < 4; ++i) r.add_system(std::make_unique<Reader>(n), 0, nullptr, "reader", "t");
  r.configure();
  r.run(100);
  EXPECT_EQ(n.load(), 400);
}

// A model-local system: each step folds its own constant into its model's Chain (x ← x·1.01 + k:
// the result depends on the order of a model's systems); `throw_at` throws at that step.
struct Chain {
  double x = 1;
};
class Folder : public System,
               public ISystemConfigure,
               public ISystemPreUpdate,
               public ISystemModelLocal {
 public:
  Folder(int prio, double k, std::uint64_t throw_at = 0)
      : prio_(prio), k_(k), throw_at_(throw_at) {}
  int priority() const override { return prio_; }
  void configure(ecs::Entity e, const Element&, ecs::Registry& r, EventBus&) override {
    model_ = e;
    if (!r.has<Chain>(e)) r.add<Chain>(e);
  }
  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.iterations + 1 == throw_at_)
      throw Error(r.describe(model_), fmt::format("k = {}", k_));
    auto& c = r.get<Chain>(model_);
    c.x = c.x * 1.01 + k_;
    if (on_run) on_run();
  }
  std::function<void()> on_run;

 private:
  int prio_;
  double k_;
  std::uint64_t throw_at_;
  ecs::Entity model_ = ecs::kNullEntity;
};

// `models` models, each with two Folders (priorities -2 and -1); the Chains after `steps`.
std::vector<double> folded(unsigned threads, int models, int steps) {
  auto o = fast();
  o.model_threads = threads;
  Runner r(o);
  std::vector<ecs::Entity> m;
  for (int i = 0; i < models; ++i) m.push_back(r.registry().create(r.world()));
  for (int i = 0; i < models; ++i) {
    r.add_system(std::make_unique<Folder>(-2, i + 0.5), m[i], nullptr, "a", "t");
    r.add_system(std::make_unique<Folder>(-1, -i * 0.25), m[i], nullptr, "b", "t");
  }
  r.configure();
  r.run(steps);
  std::vector<double> out;
  for (ecs::Entity e : m) out.push_back(r.registry().get<Chain>(e).x);
  return out;
}

TEST(Runner, ModelLocalPreUpdatesGiveTheSerialResultsOnAnyThreadCount) {
  const auto serial = folded(1, 40, 50);
  EXPECT_EQ(folded(2, 40, 50), serial);  // exact: the same operations in the same order
  EXPECT_EQ(folded(3, 40, 50), serial);
  // The same fold by hand for model 7: a then b, every step.
  double x = 1;
  for (int s = 0; s < 50; ++s) x = (x * 1.01 + 7.5) * 1.01 - 7 * 0.25;
  EXPECT_EQ(serial[7], x);
}

// They do run concurrently: model 0's system waits for model 1's to have started, which only
// another thread can do while it waits.
TEST(Runner, ModelLocalPreUpdatesOfDifferentModelsRunConcurrently) {
  auto o = fast();
  o.model_threads = 2;
  Runner r(o);
  std::atomic<bool> started{false}, met{false};
  for (std::size_t i = 0; i < Runner::kMinParallelModels; ++i) {
    const ecs::Entity m = r.registry().create(r.world());
    auto f = std::make_unique<Folder>(0, 1.0);
    if (i == 0) {
      f->on_run = [&] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!started && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        met = started.load();
      };
    } else if (i == 1) {
      f->on_run = [&] { started = true; };
    }
    r.add_system(std::move(f), m, nullptr, "f", "t");
  }
  r.configure();
  r.step_once();
  EXPECT_TRUE(met) << "model 1's PreUpdate did not run while model 0's waited";
}

// Below kMinParallelModels models, or on one thread, every PreUpdate runs on the stepping thread.
TEST(Runner, FewModelsOrOneThreadRunOnTheSteppingThread) {
  for (const auto& [threads, models] : {std::pair{2u, Runner::kMinParallelModels - 1},
                                        std::pair{1u, Runner::kMinParallelModels * 2}}) {
    auto o = fast();
    o.model_threads = threads;
    Runner r(o);
    std::atomic<int> elsewhere{0};
    const auto me = std::this_thread::get_id();
    for (std::size_t i = 0; i < models; ++i) {
      auto f = std::make_unique<Folder>(0, 1.0);
      // Each takes 1 ms: long enough that a pool's worker, were one used, would take some.
      f->on_run = [&] {
        elsewhere += std::this_thread::get_id() != me;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
        while (std::chrono::steady_clock::now() < until) {
        }
      };
      r.add_system(std::move(f), r.registry().create(r.world()), nullptr, "f", "t");
    }
    r.configure();
    r.run(20);
    EXPECT_EQ(elsewhere.load(), 0) << threads << " thread(s), " << models << " models";
  }
}

// A failing run reports the error the serial order meets first: every "a" runs before every
// "b", so model 30's "a" before model 3's "b", though model 3's systems are an earlier group.
TEST(Runner, AFailingModelLocalRunReportsTheSerialOrdersFirstError) {
  for (unsigned threads : {1u, 2u, 3u}) {
    auto o = fast();
    o.model_threads = threads;
    Runner r(o);
    for (int i = 0; i < 40; ++i) {
      const ecs::Entity m = r.registry().create(r.world());
      r.registry().add<components::Name>(m, fmt::format("m{}", i));
      r.add_system(std::make_unique<Folder>(-2, 100 + i, i == 30 ? 5 : 0), m, nullptr, "a", "t");
      r.add_system(std::make_unique<Folder>(-1, 200 + i, i == 3 ? 5 : 0), m, nullptr, "b", "t");
    }
    r.configure();
    try {
      r.run(10);
      ADD_FAILURE() << "no error on " << threads << " thread(s)";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("k = 130")) << threads << " thread(s)";
    }
    EXPECT_EQ(r.info().iterations, 4u);
  }
}

// Pacing: generous tolerance here; the precise figure is in bench/ and docs/performance.md.
// At RTF 1 the world never runs ahead of the wall clock. Only this bound is asserted: a loaded
// machine may run it slower than real time (how close to 1 it stays is a benchmark's business).
TEST(Runner, PacesToRealTimeFactorOne) {
  Runner::Options o;
  o.real_time_factor = 1.0;
  Runner r(o);
  r.configure();
  const auto t0 = std::chrono::steady_clock::now();
  r.run(std::nullopt, Duration{500'000'000});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.info().sim_time, Duration{500'000'000});
  EXPECT_GE(wall, 0.499) << "ran ahead of real time (by more than the first step)";
}

// Asks for real time (components::RealTimePacing on the world) for the steps before `until`.
class RealTimeUntil : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  explicit RealTimeUntil(Duration until) : until_(until) {}
  void configure(ecs::Entity e, const Element&, ecs::Registry& reg, EventBus&) override {
    entity_ = e;
    reg.add<components::RealTimePacing>(e, components::RealTimePacing{true});
  }
  void pre_update(const UpdateInfo& info, ecs::Registry& reg) override {
    reg.get<components::RealTimePacing>(entity_).active = info.sim_time + info.dt < until_;
  }

 private:
  Duration until_;
  ecs::Entity entity_ = ecs::kNullEntity;
};

// A world at RTF 0 (as fast as possible) runs at real time while a system asks for it, then
// as fast as possible again. Only a lower bound on wall time is asserted (a loaded machine is
// only slower).
TEST(Runner, RealTimePacingOverridesTheFactorWhileActive) {
  Runner::Options o;
  o.real_time_factor = 0;
  Runner r(o);
  r.add_system(std::make_unique<RealTimeUntil>(Duration{300'000'000}), r.world(), nullptr,
               "real-time", "test");
  r.configure();
  const auto t0 = std::chrono::steady_clock::now();
  r.run(std::nullopt, Duration{300'000'000});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(wall, 0.29) << "0.3 s of sim time at real time";
  // After it: 10 s of sim time as fast as possible.
  r.run(std::nullopt, Duration{10'300'000'000});
  EXPECT_EQ(r.paced_real_time_factor(), 0.0);
  EXPECT_EQ(r.info().sim_time.count(), 10'300'000'000);
}

// A system blocked on the stop signal (as a SITL bridge waiting for its autopilot) is woken by
// stop() from another thread; run() abandons that step and returns.
class BlocksUntilStopped : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  void configure(ecs::Entity, const Element&, ecs::Registry&, EventBus& events) override {
    events.publish(StopSignalRequest{&signal_});
  }
  void pre_update(const UpdateInfo& info, ecs::Registry&) override {
    if (info.iterations < 3) return;
    ASSERT_NE(signal_, nullptr);
    while (!signal_->raised()) std::this_thread::yield();
    throw StepInterrupted();
  }
  const StopSignal* signal_ = nullptr;
};

TEST(Runner, StopWakesASystemBlockedOnTheStopSignal) {
  Runner r(Runner::Options{});
  r.add_system(std::make_unique<BlocksUntilStopped>(), r.world(), nullptr, "blocks", "test");
  r.configure();
  std::thread t([&] { r.run(); });
  r.stop();
  t.join();
  EXPECT_LE(r.info().iterations, 3u);
}

}  // namespace
}  // namespace kestrel::sim

namespace kestrel::sim {
namespace {

// Throws from configure (a plugin with a bad parameter).
class Refuses : public System, public ISystemConfigure, public ISystemUpdate {
 public:
  void configure(ecs::Entity, const Element&, ecs::Registry&, EventBus&) override {
    throw Error("bad parameter");
  }
  void update(const UpdateInfo&, ecs::Registry&) override { ADD_FAILURE() << "must not run"; }
};

NewSystem recorder(Trace& t, const std::string& name, int prio, ecs::Entity e) {
  return {std::make_unique<Recorder>(t, name, prio), e, nullptr, name, "test"};
}

TEST(Runner, SystemsAddedAtRunTimeJoinInPriorityOrderAndLeaveWithTheirEntity) {
  Trace t;
  Runner r(fast());
  const ecs::Entity model = r.registry().create(r.world());
  const ecs::Entity link = r.registry().create(model);
  r.add_system(std::make_unique<Recorder>(t, "uc", priority::kUserCommands), 0, nullptr, "uc", "");
  r.add_system(std::make_unique<Recorder>(t, "phys", priority::kPhysics), 0, nullptr, "phys", "");
  r.add_system(std::make_unique<Recorder>(t, "d0", 0), 0, nullptr, "d0", "");
  r.configure();
  r.step_once();

  // A spawned model with two plugins: configured now in priority order, then run in order.
  const ecs::Entity spawned = r.registry().create(r.world());
  t.calls.clear();
  r.post([&](Runner& run) {
    std::vector<NewSystem> add;
    add.push_back(recorder(t, "late0", 0, spawned));  // after d0 (equal priority, added later)
    add.push_back(recorder(t, "pre", priority::kPrePhysics, spawned));
    run.add_systems_now(std::move(add));
  });
  r.step_once();
  EXPECT_THAT(t.calls, ElementsAre("pre:configure", "late0:configure", "uc:pre", "pre:pre",
                                   "phys:pre", "d0:pre", "late0:pre", "uc:update", "pre:update",
                                   "phys:update", "d0:update", "late0:update", "uc:post",
                                   "pre:post", "phys:post", "d0:post", "late0:post"));

  // A configure that throws adds none of the batch.
  r.post([&](Runner& run) {
    std::vector<NewSystem> add;
    add.push_back(recorder(t, "ok", 0, spawned));
    add.push_back({std::make_unique<Refuses>(), spawned, nullptr, "refuses", "test"});
    EXPECT_THROW(run.add_systems_now(std::move(add)), Error);
  });
  r.step_once();
  EXPECT_EQ(r.systems().size(), 5u);

  // Removing the spawned model destroys its systems; so does removing a model whose link a
  // run-time system is attached to.
  r.post([&](Runner& run) {
    EXPECT_EQ(run.remove_systems_of(spawned), 2u);
    std::vector<NewSystem> add;
    add.push_back(recorder(t, "linked", 0, link));
    run.add_systems_now(std::move(add));
  });
  r.step_once();
  r.post([&](Runner& run) { EXPECT_EQ(run.remove_systems_of(model), 1u); });
  r.step_once();
  t.calls.clear();
  r.step_once();
  EXPECT_THAT(t.calls, ElementsAre("uc:pre", "phys:pre", "d0:pre", "uc:update", "phys:update",
                                   "d0:update", "uc:post", "phys:post", "d0:post"));
  EXPECT_EQ(r.systems().size(), 3u);
}

TEST(Runner, ResetDropsRunTimeSystemsAndRestoresRemovedOnes) {
  Trace t;
  Runner r(fast());
  const ecs::Entity model = r.registry().create(r.world());
  r.add_system(std::make_unique<Recorder>(t, "own", 0), model, nullptr, "own", "");
  r.configure();
  r.post([&](Runner& run) {
    EXPECT_EQ(run.remove_systems_of(model), 1u);
    std::vector<NewSystem> add;
    add.push_back(recorder(t, "late", 0, run.world()));
    run.add_systems_now(std::move(add));
  });
  r.step_once();
  ASSERT_EQ(r.systems().size(), 2u);
  EXPECT_FALSE(r.systems()[0].active);
  r.reset_now();
  t.calls.clear();
  r.step_once();
  EXPECT_THAT(t.calls, ElementsAre("own:pre", "own:update", "own:post"));
  ASSERT_EQ(r.systems().size(), 1u);
  EXPECT_TRUE(r.systems()[0].active);
}

}  // namespace
}  // namespace kestrel::sim
