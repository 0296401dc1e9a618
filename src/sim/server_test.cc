#include "kestrel/sim/server.h"

#include <gtest/gtest.h>

#include <csignal>

#include "kestrel/core/interrupt.h"

namespace kestrel::sim {
namespace {

class Boom : public System, public ISystemUpdate {
 public:
  void update(const UpdateInfo& info, ecs::Registry&) override {
    if (info.iterations == 50) throw Error("boom at 50");
  }
};

std::unique_ptr<Runner> make(std::string name, double rtf = 0) {
  Runner::Options o;
  o.world_name = std::move(name);
  o.real_time_factor = rtf;
  auto r = std::make_unique<Runner>(o);
  return r;
}

TEST(Server, RunsSeveralWorldsOnTheirOwnThreads) {
  Server s;
  s.add(make("a")).configure();
  s.add(make("b")).configure();
  Server::Limits lim;
  lim.max_iterations = 1000;
  s.run(lim);
  EXPECT_EQ(s.world(0).info().iterations, 1000u);
  EXPECT_EQ(s.world(1).info().iterations, 1000u);
  EXPECT_FALSE(s.running());
}

TEST(Server, OneWorldFailingStopsTheOthersAndRethrows) {
  Server s;
  auto bad = make("bad");
  bad->add_system(std::make_unique<Boom>(), 0, nullptr, "boom", "test");
  bad->configure();
  s.add(std::move(bad));
  s.add(make("good", 1.0)).configure();  // real time: would run forever without the stop
  EXPECT_THROW(s.run(), Error);
  EXPECT_FALSE(s.running());
}

TEST(Server, NonBlockingStartAndStop) {
  Server s;
  s.add(make("w", 1.0)).configure();
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(s.running());
  s.stop();
  s.wait();
  EXPECT_FALSE(s.running());
  EXPECT_GT(s.world(0).info().iterations, 0u);
}

TEST(Server, SigtermStopsCleanly) {
  Server s;
  s.add(make("w", 1.0)).configure();
  s.install_signal_stop();
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(getpid(), SIGTERM);
  });
  s.run();  // returns only because of the signal
  killer.join();
  EXPECT_EQ(s.signal_received(), SIGTERM);
  EXPECT_GT(s.world(0).info().iterations, 0u);
}

// A signal while a world loads: recorded process-wide, so the load stops at its next check
// (kestrel::Interrupted); if it is inside a call that never checks, the watcher ends the process
// after the grace period with 128 + the signal.
TEST(ServerDeathTest, ASignalDuringALoadStopsItAtItsNextCheckOrEndsTheProcess) {
  EXPECT_EXIT(
      {
        Server s;
        s.install_signal_stop();
        s.set_loading(true, std::chrono::milliseconds(200));
        kill(getpid(), SIGINT);
        for (int i = 0; i < 500 && interrupt_signal() == 0; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        try {
          throw_if_interrupted("loading the test world");
        } catch (const Interrupted& e) {
          std::fprintf(stderr, "%s\n", e.what());
        }
        std::this_thread::sleep_for(std::chrono::seconds(30));  // a library call that never checks
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(130),
      "interrupted by SIGINT while loading the test world(.|\n)*interrupted by SIGINT while "
      "loading the world \\(inside a library call that cannot be interrupted\\)");
}

}  // namespace
}  // namespace kestrel::sim
