// What the physics door refuses, and how: MuJoCo's errors as Errors (never its "Press Enter"
// prompt or exit), mesh files checked before MuJoCo reads them, a stack sized for many bodies,
// memory estimated before allocating, a world that cannot step refused where it is built, a
// change checked at a step boundary (sim::CheckPhysics) leaving the model as it was, and the
// time of a failing step.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kestrel/physics/physics.h"
#include "kestrel/sim/events.h"
#include "physics/mujoco/guard.h"
#include "physics/mujoco/mesh_file.h"
#include "physics/mujoco/mjcf_builder.h"
#include "physics/test_worlds.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Pose3d;
using testing::TestWorld;
using ::testing::ThrowsMessage;

std::string messages(const mujoco::MjcfModel& m) {
  std::string s;
  for (const auto& i : m.issues) s += format_issue(i) + "\n";
  return s;
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / (std::to_string(getpid()) + "_" + name);
}

// A binary STL of one triangle (84-byte header + 50 bytes).
void write_stl(const fs::path& p, std::uint32_t declared_triangles, std::size_t triangles) {
  std::ofstream f(p, std::ios::binary);
  std::string header(80, ' ');
  f.write(header.data(), 80);
  f.write(reinterpret_cast<const char*>(&declared_triangles), 4);
  const float tri[12] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
  for (std::size_t i = 0; i < triangles; ++i) {
    f.write(reinterpret_cast<const char*>(tri), sizeof tri);
    f.write("\0\0", 2);
  }
}

TEST(MujocoGuard, AnErrorInsideACallIsAnExceptionAndTheNextCallWorks) {
  EXPECT_THAT([] { mujoco::call(mju_error, "boom"); },
              ThrowsMessage<mujoco::MujocoError>(HasSubstr("MuJoCo: boom")));
  // Nested calls unwind to the innermost one; afterwards MuJoCo is usable again.
  mjModel* m = mujoco::call(mj_loadXML, static_cast<const char*>(nullptr),
                            static_cast<const mjVFS*>(nullptr), static_cast<char*>(nullptr), 0);
  EXPECT_EQ(m, nullptr);
  EXPECT_THAT([] { mujoco::call(mju_error, "again"); },
              ThrowsMessage<mujoco::MujocoError>(HasSubstr("again")));
}

TEST(MujocoGuard, WarningsAreCollectedNotPrinted) {
  mujoco::install_handlers();
  (void)mujoco::take_warnings();
  mju_warning("first");
  mju_warning("second");
  EXPECT_EQ(mujoco::take_warnings(), "first; second");
  EXPECT_EQ(mujoco::take_warnings(), "");
}

// The outside-a-call path: one line and exit status 1, never a prompt or a read from stdin.
TEST(MujocoGuardDeathTest, AnErrorOutsideAnyCallExitsWithOneLine) {
  EXPECT_EXIT(
      {
        mujoco::install_handlers();
        mju_error("stray");
      },
      ::testing::ExitedWithCode(1), "kestrel: error: MuJoCo: stray \\(outside a guarded call");
}

TEST(MeshFile, WhatMujocoWouldRefuseIsNamedBeforeItReadsIt) {
  const auto empty = temp("empty.stl");
  std::ofstream(empty).close();
  EXPECT_THAT(mujoco::mesh_file_problem(empty.string()), HasSubstr("empty (0 bytes)"));

  const auto huge = temp("huge.stl");  // sparse: no disk used
  { std::ofstream(huge).close(); }
  fs::resize_file(huge, 4294967380ull);
  EXPECT_THAT(mujoco::mesh_file_problem(huge.string()), HasSubstr("4294967380 bytes"));
  EXPECT_THAT([&] { mujoco::read_mesh_file(huge.string()); },
              ThrowsMessage<Error>(HasSubstr("up to 64 MiB")));

  const auto fifo = temp("fifo.stl");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(mujoco::mesh_file_problem(fifo.string()), HasSubstr("is a FIFO"));  // no wait
  EXPECT_THAT(mujoco::mesh_file_problem("/dev/zero"), HasSubstr("character device"));
  EXPECT_THAT(mujoco::mesh_file_problem("/nonexistent.stl"), HasSubstr("No such file"));

  const auto ascii = temp("ascii.stl");
  std::ofstream(ascii) << "solid cube\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n";
  EXPECT_THAT(mujoco::mesh_file_problem(ascii.string()), HasSubstr("ASCII"));

  const auto wrong = temp("wrong.stl");
  write_stl(wrong, 5, 1);
  EXPECT_THAT(mujoco::mesh_file_problem(wrong.string()), HasSubstr("says 5 triangles"));
  const auto good = temp("good.stl");
  write_stl(good, 1, 1);
  EXPECT_EQ(mujoco::mesh_file_problem(good.string()), "");
  EXPECT_EQ(mujoco::read_mesh_file(good.string()).size(), 134u);
  for (const auto& p : {empty, huge, fifo, ascii, wrong, good}) fs::remove(p);
}

TEST(MeshFile, ABadMeshIsAnErrorOnItsCollision) {
  const auto empty = temp("col_empty.stl");
  std::ofstream(empty).close();
  TestWorld w;
  const auto box = w.box("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  c::MeshShape me;
  me.uri = "empty.stl";
  me.path = empty.string();
  w.collision(testing::link_of(w.r(), box), "mesh", c::Geometry{me});
  EXPECT_THAT(messages(mujoco::build_mjcf(w.r(), w.world())),
              HasSubstr("test::box::link::mesh: mesh 'empty.stl' (" + empty.string() +
                        "): the mesh file is empty (0 bytes)"));
  // The run never reaches MuJoCo with it.
  EXPECT_THAT([&] { w.start(); }, ThrowsMessage<Error>(HasSubstr("empty (0 bytes)")));
  fs::remove(empty);
}

TEST(EngineLimits, SizesAndPositionsPhysicsCannotBoundAreErrors) {
  TestWorld w;
  const auto m = w.model("big", Pose3d::Zero);
  const auto l = w.link(m, "l", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
  w.collision(l, "c", c::Geometry{c::BoxShape{{1e308, 1, 1}}});
  const auto far = w.model("far", Pose3d(1e300, 0, 0, 0, 0, 0));
  w.link(far, "l", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
  const auto text = messages(mujoco::build_mjcf(w.r(), w.world()));
  EXPECT_THAT(text, HasSubstr("test::big::l::c: box size 1e+308 m is larger than physics can "
                              "bound"));
  EXPECT_THAT(text, HasSubstr("test::far::l: link at (1e+300, 0, 0) m in the world"));
}

// 400 static spheres are 400 bodies welded to the world: MuJoCo's own stack size has no room for
// their broadphase pairs ("Stack overflow"); Kestrel's does.
TEST(EngineLimits, FourHundredStaticBodiesBuildAndStep) {
  TestWorld w;
  for (int i = 0; i < 400; ++i) {
    const auto m = w.model("s" + std::to_string(i), Pose3d(i, 5, 0.5, 0, 0, 0), true);
    const auto l = w.link(m, "l", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
    w.collision(l, "c", c::Geometry{c::SphereShape{0.2}});
  }
  w.box("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  ASSERT_NO_THROW(w.start());
  EXPECT_NO_THROW(w.step(10));
}

// A body MuJoCo cannot step (a mass of 1e308) is refused where it is built — here at configure,
// which `kestrel check` runs too — not at the first step.
TEST(EngineLimits, AWorldThatCannotStepIsRefusedAtBuild) {
  TestWorld w;
  const auto m = w.model("heavy", Pose3d(0, 0, 3, 0, 0, 0));
  w.link(m, "l", Pose3d::Zero, 1e308, {0.1, 0.1, 0.1});
  EXPECT_THAT([&] { w.start(); },
              ThrowsMessage<Error>(HasSubstr("its first step (tried before the world runs)")));
}

// The buffers are sized from the contacts that can occur (mjcf_builder.cc): 60 boxes in a row,
// each touching its neighbours, need room for 940 (8 per pair of boxes whose bounding spheres
// come within 0.1 m: neighbours and next neighbours, + 4) and do not fit 64 MiB.
TEST(EngineLimits, MemoryIsEstimatedAndRefusedBeforeItIsAllocated) {
  TestWorld w;
  for (int i = 0; i < 60; ++i) w.box("b" + std::to_string(i), {0.1 * i, 0, 1}, {0.1, 0.1, 0.1}, 1);
  setenv("KESTREL_MEMORY_LIMIT", "64M", 1);
  EXPECT_THAT([&] { w.start(); },
              ThrowsMessage<Error>(::testing::AllOf(
                  HasSubstr("not enough memory for this world's physics"),
                  HasSubstr("940 contacts"), HasSubstr("KESTREL_MEMORY_LIMIT=64M"))));
  unsetenv("KESTREL_MEMORY_LIMIT");
}

// sim::CheckPhysics at a step boundary: a model physics cannot take is reported and the engine
// keeps the model it had; taken out again, the world steps on without a rebuild.
TEST(EngineLimits, CheckPhysicsReportsAndLeavesTheModelAsItWas) {
  TestWorld w;
  w.ground();
  const auto box = w.box("box", {0, 0, 2}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  w.step(100);
  const auto link = testing::link_of(w.r(), box);
  const double z = w.r().get<c::WorldPose>(link).value.Pos().Z();
  const auto heavy = w.model("heavy", Pose3d(5, 0, 3, 0, 0, 0));
  w.link(heavy, "l", Pose3d::Zero, 1e308, {0.1, 0.1, 0.1});
  sim::CheckPhysics::Result result;
  w.runner->events().publish(sim::CheckPhysics{&w.r(), &result});
  EXPECT_TRUE(result.handled);
  EXPECT_THAT(result.error, HasSubstr("its first step"));
  w.r().remove_now(heavy);
  EXPECT_EQ(w.r().get<c::WorldPose>(link).value.Pos().Z(), z);
  w.step(1);
  EXPECT_LT(w.r().get<c::WorldPose>(link).value.Pos().Z(), z);  // still falling

  // A good model is built at the boundary and not again at the next step.
  w.box("light", {5, 0, 3}, {0.1, 0.1, 0.1}, 1.0);
  sim::CheckPhysics::Result ok;
  w.runner->events().publish(sim::CheckPhysics{&w.r(), &ok});
  EXPECT_EQ(ok.error, "");
  EXPECT_NO_THROW(w.step(10));
}

// A failing step says when: the Runner's time, not the engine's (which restarts at 0 with every
// rebuild).
TEST(EngineLimits, AFailingStepNamesTheSimTime) {
  TestWorld w;
  const auto box = w.box("box", {0, 0, 2}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  w.step(100);
  w.box("spawned", {5, 0, 3}, {0.1, 0.1, 0.1}, 1.0);  // a rebuild: MuJoCo's clock restarts
  w.step(150);
  w.r().set<c::ExternalWorldWrenchCmd>(testing::link_of(w.r(), box),
                                       {{std::nan(""), 0, 0}, {0, 0, 0}});
  EXPECT_THAT([&] { w.step(1); },
              ThrowsMessage<Error>(HasSubstr("physics stopped at t = 0.25 s: test::box")));
}

}  // namespace
}  // namespace kestrel::physics
