// src/batch: plans (values, errors with file:line), drawn values applied to a registry, shards
// from the environment, the results database.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "kestrel/batch/apply.h"
#include "kestrel/batch/executor.h"
#include "kestrel/batch/plan.h"
#include "kestrel/batch/results.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/core/files.h"
#include "kestrel/core/time.h"
#include "kestrel/world/setup.h"

namespace kestrel::batch {
namespace {

using ::testing::HasSubstr;
using ::testing::AllOf;
namespace fs = std::filesystem;

const std::string kWorld = KESTREL_SOURCE_DIR "/worlds/x3_mission.sdf";

std::string plan_text(const std::string& vary) {
  return "world: " + kWorld + "\nruns: 8\nseed: 11\nvary:\n" + vary;
}

std::string error_of(const std::string& text) {
  try {
    parse_plan(text, "p.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Plan, ListsCycleRangesExpandDistributionsStayInRange) {
  const Plan p = parse_plan(plan_text("  wind_speed: [1, 2.5, 4]\n"
                                      "  wind_direction: {range: [0, 270, 90]}\n"
                                      "  mass/x3/base_link: {uniform: [1.4, 1.6]}\n"),
                            "p.yaml");
  ASSERT_EQ(p.runs, 8u);
  ASSERT_EQ(p.vary.size(), 3u);
  EXPECT_EQ(p.vary[0].where, "p.yaml:5:3");
  for (std::uint64_t k = 0; k < p.runs; ++k) {
    const RunSpec r = draw(p, k);
    ASSERT_EQ(r.values.size(), 3u);
    EXPECT_EQ(r.values[0].value, (std::vector<double>{1, 2.5, 4})[k % 3]);
    EXPECT_EQ(r.values[1].value, 90.0 * static_cast<double>(k % 4));
    EXPECT_GE(r.values[2].value, 1.4);
    EXPECT_LT(r.values[2].value, 1.6);
    EXPECT_LT(r.seed, std::uint64_t{1} << 63);
  }
}

TEST(Plan, RunKDependsOnlyOnThePlanAndK) {
  const Plan a = parse_plan(plan_text("  wind_speed: {normal: [2, 0.5]}\n"), "a.yaml");
  const Plan b = parse_plan(plan_text("  wind_speed: {normal: [2, 0.5]}\n"), "b.yaml");
  // Drawn in any order, the same values; different runs differ.
  const RunSpec a5 = draw(a, 5), a2 = draw(a, 2);
  const RunSpec b2 = draw(b, 2), b5 = draw(b, 5);
  EXPECT_EQ(a5.seed, b5.seed);
  EXPECT_EQ(a5.values[0].value, b5.values[0].value);
  EXPECT_EQ(params_json(a2), params_json(b2));
  EXPECT_NE(a5.seed, a2.seed);
  EXPECT_NE(a5.values[0].value, a2.values[0].value);
  // Another base seed, other values.
  Plan c = a;
  c.seed = 12;
  EXPECT_NE(draw(c, 5).values[0].value, a5.values[0].value);
}

TEST(Plan, NormalDrawsHaveTheirMeanAndStandardDeviation) {
  std::string text =
      "world: " + kWorld + "\nruns: 4000\nseed: 3\nvary:\n  wind_speed: {normal: [2, 0.5]}\n";
  const Plan p = parse_plan(text, "p.yaml");
  double sum = 0, sq = 0;
  for (std::uint64_t k = 0; k < p.runs; ++k) {
    const double v = draw(p, k).values[0].value;
    sum += v;
    sq += v * v;
  }
  const double n = static_cast<double>(p.runs), mean = sum / n;
  EXPECT_NEAR(mean, 2.0, 4 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(sq / n - mean * mean), 0.5, 0.03);
}

TEST(Plan, ParamsAreJsonInPlanOrderAndRoundTrip) {
  const Plan p =
      parse_plan(plan_text("  wind_speed: {uniform: [0, 4]}\n  wind_direction: [10]\n"), "p.yaml");
  const RunSpec r = draw(p, 3);
  const std::string j = params_json(r);
  EXPECT_THAT(j, ::testing::StartsWith("{\"wind_speed\":"));
  EXPECT_THAT(j, HasSubstr("\"wind_direction\":10"));
  // The printed number is the drawn one exactly (what a replay command is given).
  const std::string num = j.substr(j.find(':') + 1, j.find(',') - j.find(':') - 1);
  EXPECT_EQ(std::strtod(num.c_str(), nullptr), r.values[0].value);
}

TEST(Plan, BadPlansNameFileLineAndWhatWasExpected) {
  EXPECT_THAT(error_of("world: [a\n"), HasSubstr("p.yaml:"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nrun: 3\n"),
              HasSubstr("p.yaml:2:1: unknown key 'run' (did you mean 'runs'?)"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: 0\n"),
              HasSubstr("p.yaml:2:7: runs: expected an integer >= 1, found '0'"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: -2\n"), HasSubstr("p.yaml:2:7"));
  EXPECT_THAT(error_of("world: nowhere.sdf\nruns: 2\n"),
              HasSubstr("p.yaml:1:8: world: no file 'nowhere.sdf'"));
  EXPECT_THAT(error_of("runs: 2\n"), HasSubstr("p.yaml:1:1: missing 'world'"));
  EXPECT_THAT(error_of(plan_text("  wind_sped: [1]\n")),
              HasSubstr("p.yaml:5:3: unknown parameter 'wind_sped' (did you mean 'wind_speed'?)"));
  EXPECT_THAT(error_of(plan_text("  wind_speed: {uniform: [4, 0]}\n")),
              HasSubstr("p.yaml:5:25: wind_speed.uniform: a <= b needed"));
  EXPECT_THAT(
      error_of(plan_text("  wind_speed: {unifrom: [0, 4]}\n")),
      HasSubstr("p.yaml:5:16: wind_speed: unknown form 'unifrom' (did you mean 'uniform'?)"));
  EXPECT_THAT(error_of(plan_text("  wind_speed: {normal: [1, two]}\n")),
              HasSubstr("p.yaml:5:28: wind_speed.normal: expected a finite number, found 'two'"));
  EXPECT_THAT(error_of(plan_text("  wind_speed: []\n")),
              HasSubstr("p.yaml:5:15: wind_speed: the list is empty"));
  EXPECT_THAT(error_of(plan_text("  mass/x3: [1]\n")), HasSubstr("expected mass/MODEL/LINK"));
  EXPECT_THAT(error_of(plan_text("  wind_speed: [1]\n  wind_speed: [2]\n")),
              HasSubstr("p.yaml:6:3: 'wind_speed' given twice"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: 2\ntimeout: 0\n"),
              HasSubstr("p.yaml:3:10: timeout: expected a time from 1 ns"));
  // Times the clock cannot hold (kestrel run --duration refuses them too), not "no limit".
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: 2\nduration: 1e10\n"),
              HasSubstr("p.yaml:3:11: duration: expected a time from 1 ns to 9223372036"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: 2\nduration: 1e-10\n"),
              HasSubstr("p.yaml:3:11: duration: expected a time from 1 ns"));
  EXPECT_THAT(error_of("world: " + kWorld + "\nruns: 2\ntimeout: 1e10\n"),
              HasSubstr("p.yaml:3:10: timeout: expected a time"));
}

// The grid's cartesian product in the documented order (the last parameter fastest), k mod G;
// runs omitted: one per combination; vary beside it drawn per run; seeds still per run.
TEST(Plan, GridRunsEveryCombinationInOrder) {
  const std::string head = "world: " + kWorld + "\nseed: 11\n";
  const Plan one = parse_plan(head +
                                  "grid:\n  wind_speed: [0, 2]\n"
                                  "  mass/x3/base_link: {range: [1.4, 1.6, 0.1]}\n",
                              "p.yaml");
  EXPECT_EQ(one.combinations, 6u);
  EXPECT_EQ(one.runs, 6u);
  const std::vector<std::pair<double, double>> expected{{0, 1.4}, {0, 1.5}, {0, 1.6},
                                                        {2, 1.4}, {2, 1.5}, {2, 1.6}};
  for (std::uint64_t k = 0; k < 6; ++k) {
    const RunSpec r = draw(one, k);
    ASSERT_EQ(r.values.size(), 2u);
    EXPECT_EQ(r.values[0].key, "wind_speed");
    EXPECT_EQ(r.values[0].value, expected[k].first) << k;
    EXPECT_NEAR(r.values[1].value, expected[k].second, 1e-12) << k;
    EXPECT_EQ(r.values[1].where, "p.yaml:5:3");
  }
  // Twice the grid, with a drawn parameter: run k and k + 6 share their combination, not their
  // seed nor their draw; run k's values are those of the same k without the grid's repeat.
  const Plan two = parse_plan(head +
                                  "runs: 12\ngrid:\n  wind_speed: [0, 2]\n"
                                  "  mass/x3/base_link: {range: [1.4, 1.6, 0.1]}\n"
                                  "vary:\n  wind_direction: {uniform: [0, 360]}\n",
                              "p.yaml");
  for (std::uint64_t k = 0; k < 6; ++k) {
    const RunSpec a = draw(two, k), b = draw(two, k + 6);
    ASSERT_EQ(a.values.size(), 3u);
    EXPECT_EQ(a.values[0].value, b.values[0].value);
    EXPECT_EQ(a.values[1].value, b.values[1].value);
    EXPECT_EQ(a.values[0].value, draw(one, k).values[0].value);
    EXPECT_NE(a.values[2].value, b.values[2].value);
    EXPECT_NE(a.seed, b.seed);
    EXPECT_EQ(a.seed, draw(one, k).seed) << "the seed depends on (seed, k) only";
  }
  EXPECT_THAT(params_json(draw(two, 4)),
              ::testing::StartsWith("{\"wind_speed\":2.0,\"mass/x3/base_link\":1.5"));
}

TEST(Plan, BadGridsNameTheirLine) {
  const std::string head = "world: " + kWorld + "\n";
  EXPECT_THAT(error_of(head + "runs: 4\ngrid:\n  wind_speed: [0, 1, 2]\n"),
              HasSubstr("p.yaml:2:7: runs: 4 is not a multiple of the grid's 3 combinations "
                        "(wind_speed 3)"));
  EXPECT_THAT(
      error_of(head + "runs: 5\ngrid:\n  wind_speed: [0, 1]\n  pose/x3/yaw: [0, 90, 180]\n"),
      HasSubstr("p.yaml:2:7: runs: 5 is not a multiple of the grid's 6 combinations "
                "(wind_speed 2 x pose/x3/yaw 3)"));
  EXPECT_THAT(error_of(head + "grid:\n  wind_speed: {uniform: [0, 1]}\n"),
              HasSubstr("p.yaml:3:15: grid: wind_speed: a grid takes a list [v0, v1, ...] or "
                        "{range: [first, last, step]}, found a uniform distribution"));
  EXPECT_THAT(error_of(head + "grid:\n  wind_speed: [1]\nvary:\n  wind_speed: [2]\n"),
              HasSubstr("p.yaml:5:3: 'wind_speed' is both in vary and in grid (at p.yaml:3:3)"));
  EXPECT_THAT(error_of(head + "seed: 1\n"), HasSubstr("p.yaml:1:1: missing 'runs'"));
  EXPECT_THAT(error_of(head + "grid:\n  wind_speed: [1]\n  wind_speed: [2]\n"),
              HasSubstr("p.yaml:4:3: 'wind_speed' given twice"));
  EXPECT_THAT(error_of(head + "grid: [1]\n"),
              HasSubstr("p.yaml:2:7: grid: expected a mapping of parameters"));
  EXPECT_THAT(error_of(head + "gird:\n  wind_speed: [1]\n"),
              HasSubstr("unknown key 'gird' (did you mean 'grid'?)"));
  // 10^10 combinations.
  std::string big = head + "grid:\n";
  for (int i = 0; i < 10; ++i) {
    big += "  pose/m" + std::to_string(i) + "/x: {range: [0, 9, 1]}\n";
  }
  EXPECT_THAT(error_of(big), HasSubstr("p.yaml:12:3: grid: more than 1000000000 combinations"));
}

TEST(Plan, SetParsesKeyAndValue) {
  const Value v = parse_set("wind_direction=123.5");
  EXPECT_EQ(v.key, "wind_direction");
  EXPECT_EQ(v.value, 123.5);
  EXPECT_THROW(parse_set("wind_direction"), Error);
  EXPECT_THROW(parse_set("wind_direction=1x"), Error);
  EXPECT_THROW(parse_set("gravity=1"), Error);
}

struct Fixture {
  ecs::Registry r;
  ecs::Entity world = r.create();
  ecs::Entity link;
  Fixture() {
    r.add<components::Name>(world, components::Name{"w"});
    const ecs::Entity model = r.create(world);
    r.add<components::Name>(model, components::Name{"x3"});
    r.add<components::Model>(model);
    link = r.create(model);
    r.add<components::Name>(link, components::Name{"base_link"});
    r.add<components::Link>(link);
    ignition::math::MassMatrix3d mm(2.0, {0.2, 0.4, 0.6}, {0.02, 0, 0});
    r.add<components::Inertial>(link, components::Inertial{ignition::math::Inertiald(mm, {})});
  }
};

TEST(Apply, WindSpeedAndDirectionSetTheWorldsWindInEnu) {
  Fixture f;
  f.r.add<components::Wind>(f.world, components::Wind{{1, 0.5, 0.25}});
  const std::vector<Value> v{{"wind_direction", 90, "p:1"}, {"wind_speed", 3, "p:2"}};
  apply_values(v, f.r, f.world);
  // From the east: blowing west (-x), 3 m/s; the vertical component kept.
  const auto& w = f.r.get<components::Wind>(f.world).linear_velocity;
  EXPECT_NEAR(w.X(), -3, 1e-12);
  EXPECT_NEAR(w.Y(), 0, 1e-12);
  EXPECT_EQ(w.Z(), 0.25);
  // Speed alone keeps the direction: from the north-east (45 deg) blowing south-west.
  apply_values(std::vector<Value>{{"wind_direction", 45, "p:1"}}, f.r, f.world);
  apply_values(std::vector<Value>{{"wind_speed", 2, "p:1"}}, f.r, f.world);
  EXPECT_NEAR(w.X(), -std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(w.Y(), -std::sqrt(2.0), 1e-12);
  EXPECT_THAT(
      [&] {
        try {
          apply_values(std::vector<Value>{{"wind_speed", -1, "p.yaml:5"}}, f.r, f.world);
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("p.yaml:5: wind_speed must be >= 0 m/s, drew -1"));
}

TEST(Apply, WindWithoutAWorldWindComesFromTheNorthUnlessADirectionIsGiven) {
  Fixture f;
  apply_values(std::vector<Value>{{"wind_speed", 2, "p:1"}}, f.r, f.world);
  EXPECT_EQ(f.r.get<components::Wind>(f.world).linear_velocity, ignition::math::Vector3d(0, -2, 0));
}

// A wind drawn for a world where nothing reads it would give every run the same flight: refused
// at the plan's line, naming the systems that would read it; accepted once one of them runs.
TEST(Apply, WindNeedsASystemThatReadsIt) {
  sim::Runner runner{sim::Runner::Options{}};
  const std::vector<Value> v{{"wind_direction", 30, "p.yaml:6"}};
  try {
    apply_values(v, runner);
    FAIL() << "a wind without a reader was applied";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.yaml:6: wind_direction: the world has no system that "
                                    "reads its wind (one of WindEffects, MulticopterMotorModel"));
  }
  EXPECT_FALSE(runner.registry().has<components::Wind>(runner.world())) << "nothing applied";
  // Mass alone needs no wind reader (and names its missing link as before).
  try {
    apply_values(std::vector<Value>{{"mass/x3/base_link", 1, "p.yaml:7"}}, runner);
    FAIL() << "a link the world does not have was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.yaml:7: mass/x3/base_link: the world has no link"));
  }
  runner.add_system(std::make_unique<System>(), runner.world(), nullptr,
                    "kestrel::systems::WindEffects", "test");
  apply_values(v, runner);
  EXPECT_NEAR(runner.registry().get<components::Wind>(runner.world()).linear_velocity.Y(), 0,
              1e-12);
}

TEST(Apply, MassScalesTheInertiaAndNamesAMissingLink) {
  Fixture f;
  apply_values(std::vector<Value>{{"mass/x3/base_link", 3, "p:1"}}, f.r, f.world);
  const auto mm = f.r.get<components::Inertial>(f.link).value.MassMatrix();
  EXPECT_EQ(mm.Mass(), 3);
  EXPECT_NEAR(mm.DiagonalMoments().Z(), 0.9, 1e-12);
  EXPECT_NEAR(mm.OffDiagonalMoments().X(), 0.03, 1e-12);
  try {
    apply_values(std::vector<Value>{{"mass/x3/arm", 1, "p.yaml:7"}}, f.r, f.world);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.yaml:7: mass/x3/arm: the world has no link 'w::x3::arm'"));
  }
}

std::string apply_error(const std::vector<Value>& values, sim::Runner& runner) {
  try {
    apply_values(values, runner);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A drawn pose reaches physics: the X3 of worlds/x3_mission.sdf (on the ground at z = 0.056 m
// in the file) placed at (3, -2, 1.5) m turned 30 deg is there after configure and one 1 ms
// step, as physics reports its links (1 ms of free fall: ~1e-5 m), each link where the file
// puts it relative to the model. Roll and pitch of another run tilt it the same way.
TEST(Apply, PoseIsWherePhysicsStartsTheModel) {
  for (const bool tilted : {false, true}) {
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(kWorld, runner);
    auto& r = runner.registry();
    const ecs::Entity model = r.find_scoped("x3_mission::x3");
    const ecs::Entity base = r.find_scoped("x3_mission::x3::base_link");
    const ecs::Entity rotor = r.find_scoped("x3_mission::x3::rotor_0");
    ASSERT_NE(rotor, ecs::kNullEntity);
    // From the world file: each link's pose in the model.
    const ignition::math::Pose3d X_MB = r.get<components::Pose>(base).value;
    const ignition::math::Pose3d X_MR = r.get<components::Pose>(rotor).value;
    ASSERT_NEAR(r.get<components::WorldPose>(base).value.Pos().Z(), 0.056, 1e-9);
    std::vector<Value> v{{"pose/x3/yaw", 30, "p:1"},
                         {"pose/x3/x", 3, "p:2"},
                         {"pose/x3/y", -2, "p:3"},
                         {"pose/x3/z", 1.5, "p:4"}};
    if (tilted) {
      v.push_back({"pose/x3/roll", 10, "p:5"});
      v.push_back({"pose/x3/pitch", -20, "p:6"});
    }
    apply_values(v, runner);
    runner.configure();
    ASSERT_TRUE(runner.step_once());
    const double deg = std::numbers::pi / 180;
    const ignition::math::Pose3d X_WM(3, -2, 1.5, tilted ? 10 * deg : 0, tilted ? -20 * deg : 0,
                                      30 * deg);
    EXPECT_EQ(r.get<components::Pose>(model).value, X_WM) << "the model's pose in the world";
    for (const auto& [link, X_ML] : {std::pair{base, X_MB}, std::pair{rotor, X_MR}}) {
      // X_WL = X_WM X_ML, spelt out.
      const ignition::math::Vector3d p = X_WM.Pos() + X_WM.Rot().RotateVector(X_ML.Pos());
      const ignition::math::Quaterniond q = X_WM.Rot() * X_ML.Rot();
      const auto& X_WL = r.get<components::WorldPose>(link).value;
      EXPECT_NEAR(X_WL.Pos().Distance(p), 0, 1e-4) << r.scoped_name(link) << " at " << X_WL;
      // The rotors may have started turning about their axis (the controller spins them up).
      if (link == base) {
        EXPECT_NEAR(X_WL.Rot().Euler().Distance(q.Euler()), 0, 1e-3) << r.scoped_name(link);
      }
    }
    EXPECT_GT(r.get<components::WorldPose>(base).value.Pos().Z(), 1.49) << "not on the ground";
  }
}

TEST(Apply, PoseNamesAModelTheWorldLacksAndAnOutOfRangeValue) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(kWorld, runner);
  EXPECT_THAT(apply_error({{"pose/x4/x", 1, "p.yaml:7:3"}}, runner),
              HasSubstr("p.yaml:7:3: pose/x4/x: the world has no model 'x3_mission::x4' (models "
                        "in 'x3_mission': ground_plane, x3)"));
  EXPECT_THAT(apply_error({{"pose/x3/base_link/z", 1, "p.yaml:8:3"}}, runner),
              HasSubstr("p.yaml:8:3: pose/x3/base_link/z: the world has no model "
                        "'x3_mission::x3::base_link' (models in 'x3_mission::x3': none)"));
  EXPECT_THAT(apply_error({{"pose/x3/z", 2e9, "p.yaml:9:3"}}, runner),
              HasSubstr("p.yaml:9:3: pose/x3/z: a world coordinate within +-1e+09 m needed, drew "
                        "2000000000"));
}

// A file the test writes, removed when the test program ends.
struct TempFile {
  fs::path path;
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// Writes `text` into the test's temporary folder as kestrel_batch_NAME_PID.sdf.
fs::path write_world(const std::string& name, const std::string& text) {
  const fs::path out = fs::temp_directory_path() /
                       ("kestrel_batch_" + name + "_" + std::to_string(getpid()) + ".sdf");
  std::ofstream(out) << text;
  return out;
}

// worlds/x3_mission.sdf without the X3's velocity controller and mission: the test commands the
// rotors itself. Written once into the test's temporary folder.
std::string x3_without_controller() {
  static const TempFile file{[] {
    std::string text = read_regular_file(kWorld, std::uint64_t{1} << 30);
    for (const char* plugin :
         {"gz-sim-multicopter-control-system", "kestrel-multicopter-mission-system"}) {
      const auto at = text.find(plugin);
      const auto start = at == std::string::npos ? at : text.rfind("<plugin", at);
      const auto end = start == std::string::npos ? start : text.find("</plugin>", start);
      if (end == std::string::npos) {
        ADD_FAILURE() << "no " << plugin << " in " << kWorld;
        continue;
      }
      text.erase(start, end + 9 - start);
    }
    return write_world("x3", text);
  }()};
  return file.path.string();
}

const sim::SystemEntry* motor(const sim::Runner& runner, const std::string& joint) {
  for (const auto& s : runner.systems()) {
    if (s.name == "kestrel::systems::MulticopterMotorModel" &&
        s.config->child("jointName")->text() == joint) {
      return &s;
    }
  }
  return nullptr;
}

// A plugin parameter reaches its system: with motorConstant doubled on the X3's four motors
// (plugin/x3/MulticopterMotorModel/*/motorConstant), the X3 10 m up in still air hovers at the
// speed the motor model gives for the doubled constant, w = sqrt(m g / (4 * 2 kF)) (the file's
// hover speed / sqrt(2)): it stays within 1 mm for 1 s. With the file's constant the same speed
// gives half the weight: it falls (g/2) t^2 / 2 = 2.45 m in that second.
TEST(Apply, PluginParameterChangesTheHoverSpeed) {
  const double kF = 8.54858e-06;  // the X3's motorConstant in the world file
  for (const bool doubled : {true, false}) {
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(x3_without_controller(), runner);
    std::vector<Value> v{{"pose/x3/z", 10, "p:1"}, {"wind_speed", 0, "p:2"}};
    if (doubled) v.push_back({"plugin/x3/MulticopterMotorModel/*/motorConstant", 2 * kF, "p:3"});
    apply_values(v, runner);
    runner.configure();
    auto& r = runner.registry();
    const ecs::Entity model = r.find_scoped("x3_mission::x3");
    const ecs::Entity base = r.find_scoped("x3_mission::x3::base_link");
    double mass = 0;
    for (const ecs::Entity e : r.descendants(model)) {
      if (const auto* in = r.try_get<components::Inertial>(e))
        mass += in->value.MassMatrix().Mass();
    }
    ASSERT_NEAR(mass, 1.52, 1e-9);
    const double g = -r.get<components::Gravity>(runner.world()).value.Z();
    const double w = std::sqrt(mass * g / (4 * 2 * kF));
    // The rotors at that speed already (no spin-up), commanded to stay there.
    r.set(model, components::RotorVelocities{std::vector<double>(4, w)});
    r.set(model, components::ActuatorCommands{std::vector<double>(4, w), {}});
    for (int i = 0; i < 4; ++i) {
      const double dir = i < 2 ? 1 : -1;  // rotors 0, 1 ccw; 2, 3 cw; rotorVelocitySlowdownSim 10
      r.set(r.find_scoped("x3_mission::x3::rotor_" + std::to_string(i) + "_joint"),
            components::JointVelocity{{dir * w / 10}});
    }
    const auto p0 = r.get<components::WorldPose>(base).value.Pos();
    double worst = 0;
    for (int k = 0; k < 1000; ++k) {
      ASSERT_TRUE(runner.step_once());
      worst = std::max(worst, (r.get<components::WorldPose>(base).value.Pos() - p0).Length());
    }
    const double drop = p0.Z() - r.get<components::WorldPose>(base).value.Pos().Z();
    if (doubled) {
      // Measured: 6e-18 m. A kF 1 % off would sink 0.01 g t^2 / 2 = 5 cm.
      EXPECT_LT(worst, 1e-3) << "hover at " << w << " rad/s with kF doubled";
    } else {
      // g/2 down from rest, 1000 steps of 1 ms: (g/2) dt^2 n (n + 1) / 2 = 2.4525 m (measured).
      EXPECT_NEAR(drop, g / 2 * 1e-6 * 1000 * 1001 / 2, 1e-3)
          << "half the weight at " << w << " rad/s with the file's kF";
    }
  }
}

// One motor of four by its index: only its element changes, a new one with the file's lines;
// the name attribute addresses the plugin as the short name does.
TEST(Apply, PluginParameterByIndexKeepsTheLinesOfTheFile) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(kWorld, runner);
  const auto before = motor(runner, "rotor_2_joint")->config;
  apply_values(
      std::vector<Value>{
          {"plugin/x3/MulticopterMotorModel/2/motorConstant", 1.25e-5, "p:1"},
          {"plugin/x3/gz::sim::systems::MulticopterMotorModel/2/actuator_number", 2, "p:2"}},
      runner);
  const auto after = motor(runner, "rotor_2_joint")->config;
  ASSERT_NE(before, after);
  EXPECT_EQ(before->get<double>("motorConstant"), 8.54858e-06) << "the world's element is kept";
  EXPECT_EQ(after->get<double>("motorConstant"), 1.25e-5);
  EXPECT_EQ(after->get<int>("actuator_number"), 2);
  EXPECT_EQ(after->where(), before->where());
  for (const auto& ch : before->children()) {
    ASSERT_NE(after->child(ch->name()), nullptr) << ch->name();
    EXPECT_EQ(after->child(ch->name())->where(), ch->where()) << ch->name();
    if (ch->name() != "motorConstant") {
      EXPECT_EQ(after->child(ch->name())->text(), ch->text()) << ch->name();
    }
  }
  EXPECT_EQ(after->attribute("name").value_or(""), "gz::sim::systems::MulticopterMotorModel");
  for (const char* joint : {"rotor_0_joint", "rotor_1_joint", "rotor_3_joint"}) {
    EXPECT_EQ(motor(runner, joint)->config->get<double>("motorConstant"), 8.54858e-06) << joint;
  }
  runner.configure();  // the system takes the new element
}

TEST(Apply, PluginParameterErrorsNameThePlanLineAndWhatExists) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(kWorld, runner);
  auto err = [&](const std::string& key, double value) {
    return apply_error({{key, value, "p.yaml:6:3"}}, runner);
  };
  EXPECT_THAT(err("plugin/x3/Motor/motorConstant", 1),
              HasSubstr("p.yaml:6:3: plugin/x3/Motor/motorConstant: the model 'x3_mission::x3' "
                        "has no plugin 'Motor' (its plugins: MulticopterMotorModel "
                        "(gz::sim::systems::MulticopterMotorModel) x4, "));
  EXPECT_THAT(err("plugin/x4/MulticopterMotorModel/motorConstant", 1),
              HasSubstr("p.yaml:6:3: plugin/x4/MulticopterMotorModel/motorConstant: the world has "
                        "no model 'x3_mission::x4'"));
  const std::string four = err("plugin/x3/MulticopterMotorModel/motorConstant", 1);
  EXPECT_THAT(four, HasSubstr("p.yaml:6:3: plugin/x3/MulticopterMotorModel/motorConstant: the "
                              "model 'x3_mission::x3' has 4 MulticopterMotorModel plugins (0: "));
  EXPECT_THAT(four, HasSubstr("x3_mission.sdf:163, 1: "));
  EXPECT_THAT(four, HasSubstr("say which, plugin/x3/MulticopterMotorModel/N/motorConstant with N "
                              "from 0 to 3, or * for all"));
  EXPECT_THAT(err("plugin/x3/MulticopterMotorModel/4/motorConstant", 1),
              HasSubstr("N from 0 to 3, found 4"));
  EXPECT_THAT(err("plugin/x3/MulticopterMotorModel/0/motorConstnt", 1),
              HasSubstr("p.yaml:6:3: plugin/x3/MulticopterMotorModel/0/motorConstnt: the "
                        "MulticopterMotorModel plugin at "));
  EXPECT_THAT(err("plugin/x3/MulticopterMotorModel/0/motorConstnt", 1),
              HasSubstr("has no <motorConstnt> (did you mean 'motorConstant'?) (its parameters: "
                        "robotNamespace, jointName, linkName,"));
  EXPECT_THAT(err("plugin/x3/MulticopterVelocityControl/velocityGain", 1),
              HasSubstr("holds '2.7 2.7 2.7', not one number"));
  EXPECT_THAT(err("plugin/x3/MulticopterVelocityControl/rotorConfiguration", 1),
              HasSubstr("holds 'elements', not one number"));
  EXPECT_THAT(apply_error({{"plugin/x3/MulticopterMotorModel/*/motorConstant", 1e-5, "p.yaml:5:3"},
                           {"plugin/x3/MulticopterMotorModel/2/motorConstant", 1e-5, "p.yaml:6:3"}},
                          runner),
              HasSubstr("p.yaml:6:3: plugin/x3/MulticopterMotorModel/2/motorConstant: sets "
                        "<motorConstant> of the MulticopterMotorModel plugin at "));
  EXPECT_THAT(err("plugin/x3/MulticopterMission/gz:system_priority", 1),
              HasSubstr("cannot be varied"));
  // A fraction for an integer parameter: the motor model refuses it at configure, as it would in
  // the file, naming the parameter's line there (motor 1's <actuator_number>).
  sim::Runner fraction(sim::Runner::Options{});
  world::load_world_into_runner(kWorld, fraction);
  apply_values(
      std::vector<Value>{{"plugin/x3/MulticopterMotorModel/1/actuator_number", 1.5, "p:1"}},
      fraction);
  try {
    fraction.configure();
    ADD_FAILURE() << "actuator_number 1.5 was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x3_mission.sdf:194"));
    EXPECT_THAT(e.what(), HasSubstr("1.5"));
  }
}

TEST(Plan, PluginKeysNameAModelAPluginAndAParameter) {
  auto k = parse_plugin_key("plugin/a/b/MulticopterMotorModel/3/motorConstant");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->model, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(k->plugin, "MulticopterMotorModel");
  EXPECT_EQ(k->index, "3");
  EXPECT_EQ(k->param, "motorConstant");
  k = parse_plugin_key("plugin/x3/gz::sim::systems::LinearBatteryPlugin/capacity");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->model, std::vector<std::string>{"x3"});
  EXPECT_EQ(k->plugin, "gz::sim::systems::LinearBatteryPlugin");
  EXPECT_EQ(k->index, "");
  EXPECT_EQ(parse_plugin_key("plugin/x3/M/*/kF")->index, "*");
  for (const char* bad : {"plugin/x3/kF", "plugin/M/0/kF", "plugin//M/kF", "plugin/x3/M/kF/"}) {
    EXPECT_FALSE(parse_plugin_key(bad)) << bad;
    EXPECT_THAT(error_of(plan_text(std::string("  ") + bad + ": [1]\n")),
                HasSubstr("expected plugin/MODEL/PLUGIN/PARAM or plugin/MODEL/PLUGIN/N/PARAM"))
        << bad;
  }
  EXPECT_EQ(parse_set("plugin/x3/MulticopterMotorModel/*/motorConstant=1.7e-05").value, 1.7e-05);
}

// worlds/x3_mission.sdf with one scheduled fault: rotor 2 fails at 20 s.
std::string x3_with_a_fault() {
  static const TempFile file{[] {
    std::string text = read_regular_file(kWorld, std::uint64_t{1} << 30);
    const std::string plugin =
        R"(<plugin filename="kestrel-fault-injection-system" name="kestrel::systems::FaultInjection")";
    const auto at = text.find(plugin + "/>");
    if (at == std::string::npos) ADD_FAILURE() << "no FaultInjection plugin in " << kWorld;
    text.replace(at, plugin.size() + 2,
                 plugin + ">\n      <fault time=\"20\" type=\"rotor\" model=\"x3\" rotor=\"2\" " +
                     "efficiency=\"0\"/>\n    </plugin>");
    return write_world("fault", text);
  }()};
  return file.path.string();
}

// A fault schedule's values reach FaultInjection: the rotor fault of the file (20 s, efficiency
// 0) drawn at 0.05 s with efficiency 0.25 is applied at the step of sim time 0.05 s with that
// efficiency (FaultLog, RotorFaults), and the file's schedule has nothing applied by 0.1 s.
TEST(Apply, FaultAttributesMoveAndChangeAScheduledFault) {
  for (const bool drawn : {true, false}) {
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(x3_with_a_fault(), runner);
    if (drawn) {
      apply_values(
          std::vector<Value>{{"fault/0/time", 0.05, "p:1"}, {"fault/0/efficiency", 0.25, "p:2"}},
          runner);
    }
    runner.configure();
    auto& r = runner.registry();
    for (int k = 0; k < 100; ++k) ASSERT_TRUE(runner.step_once());
    const auto* log = r.try_get<components::FaultLog>(runner.world());
    const auto* rotors = r.try_get<components::RotorFaults>(r.find_scoped("x3_mission::x3"));
    if (!drawn) {
      EXPECT_TRUE(!log || log->events.empty()) << "the file's fault is at 20 s";
      EXPECT_TRUE(!rotors || rotors->efficiency.size() < 3 || rotors->efficiency[2] == 1);
      continue;
    }
    ASSERT_NE(log, nullptr);
    ASSERT_EQ(log->events.size(), 1u);
    EXPECT_NEAR(to_seconds(log->events[0].time), 0.05, 1e-9) << log->events[0].description;
    ASSERT_NE(rotors, nullptr);
    ASSERT_GE(rotors->efficiency.size(), 3u);
    EXPECT_EQ(rotors->efficiency[2], 0.25);
  }
}

TEST(Apply, FaultAttributeErrorsNameThePlanLineAndTheSchedule) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(x3_with_a_fault(), runner);
  auto err = [&](const std::string& key, double value) {
    return apply_error({{key, value, "p.yaml:6:3"}}, runner);
  };
  EXPECT_THAT(err("fault/1/time", 1),
              HasSubstr("p.yaml:6:3: fault/1/time: the FaultInjection plugin at "));
  EXPECT_THAT(err("fault/1/time", 1), HasSubstr("schedules 1 fault (0: "));
  EXPECT_THAT(err("fault/0/duration", 1),
              HasSubstr("has no attribute 'duration' (it has time, type, model, rotor, "
                        "efficiency): a run changes the schedule's values, it adds none"));
  EXPECT_THAT(err("fault/0/model", 1), HasSubstr("has model=\"x3\", not one number"));
  sim::Runner plain(sim::Runner::Options{});
  world::load_world_into_runner(kWorld, plain);
  EXPECT_THAT(apply_error({{"fault/0/time", 1, "p.yaml:7:3"}}, plain),
              HasSubstr("p.yaml:7:3: fault/0/time: the FaultInjection plugin at "));
  EXPECT_THAT(apply_error({{"fault/0/time", 1, "p.yaml:7:3"}}, plain),
              HasSubstr("schedules 0 faults"));
  EXPECT_THAT(error_of(plan_text("  fault/time: [1]\n")), HasSubstr("expected fault/N/ATTR"));
  EXPECT_THAT(error_of(plan_text("  fault/a/time: [1]\n")), HasSubstr("expected fault/N/ATTR"));
  EXPECT_EQ(parse_set("fault/3/efficiency=0.5").key, "fault/3/efficiency");
}

// A static model with an IMU whose gyro `noisy` axes have gaussian noise of stddev 0 in the
// file (the others none), and the Imu system if `served`.
std::string imu_text(const std::string& noisy, bool served) {
  std::string axes;
  for (const char a : std::string("xyz")) {
    axes += noisy.find(a) == std::string::npos
                ? fmt::format("<{0}></{0}>\n", a)
                : fmt::format("<{0}><noise type=\"gaussian\"><mean>0</mean><stddev>0</stddev>"
                              "</noise></{0}>\n",
                              a);
  }
  return std::string(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
)") + (served ? R"(  <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
)" : "") + R"(  <model name="m"><static>true</static><link name="l">
    <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
    <sensor name="imu" type="imu"><update_rate>1000</update_rate><imu><angular_velocity>
)" + axes + R"(</angular_velocity></imu></sensor>
  </link></model></world></sdf>
)";
}

std::string imu_world() {
  static const TempFile file{write_world("imu", imu_text("xyz", true))};
  return file.path.string();
}

// A sensor's noise reaches its sensor system: the gyro's stddev set to 0.5 rad/s on its three
// axes, the IMU reports the variance 0.25 and its readings of a body at rest have that spread
// (2000 samples: the sample stddev within 5 %); the file's stddev 0 reads exactly 0.
TEST(Apply, SensorNoiseReachesTheSensor) {
  for (const bool varied : {true, false}) {
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(imu_world(), runner);
    std::vector<Value> v;
    if (varied) v.push_back({"sensor/m/l/imu/imu/angular_velocity/*/noise/stddev", 0.5, "p:3"});
    apply_values(v, runner);
    runner.configure();
    auto& r = runner.registry();
    const ecs::Entity imu = r.find_scoped("w::m::l::imu");
    ASSERT_NE(imu, ecs::kNullEntity);
    ignition::math::Vector3d sum, sum2;
    const int n = 2000;
    for (int k = 0; k < n; ++k) {
      ASSERT_TRUE(runner.step_once());
      const auto w = r.get<components::ImuReading>(imu).angular_velocity;
      sum += w;
      sum2 += ignition::math::Vector3d(w.X() * w.X(), w.Y() * w.Y(), w.Z() * w.Z());
    }
    const auto& reading = r.get<components::ImuReading>(imu);
    for (int a = 0; a < 3; ++a) {
      const double sd = std::sqrt(sum2[a] / n - (sum[a] / n) * (sum[a] / n));
      if (varied) {
        EXPECT_DOUBLE_EQ(reading.angular_velocity_variance[a], 0.25) << "axis " << a;
        EXPECT_NEAR(sd, 0.5, 0.025) << "axis " << a;
      } else {
        EXPECT_EQ(reading.angular_velocity_variance[a], 0) << "axis " << a;
        EXPECT_EQ(sd, 0) << "axis " << a;
      }
    }
  }
}

TEST(Apply, SensorKeyErrorsNameThePlanLineAndWhatExists) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(imu_world(), runner);
  auto error = [&](const std::string& key) {
    return apply_error({{key, 1, "plan.yaml:7:3"}}, runner);
  };
  EXPECT_THAT(error("sensor/m/l/gyro/imu/angular_velocity/x/noise/stddev"),
              HasSubstr("plan.yaml:7:3: sensor/m/l/gyro/imu/angular_velocity/x/noise/stddev: the "
                        "world has no sensor 'w::m::l::gyro' (sensors in 'w::m::l': imu)"));
  EXPECT_THAT(error("sensor/m/l/imu/imu/linear_acceleration/x/noise/stddev"),
              HasSubstr("has no <linear_acceleration> (its children: <angular_velocity>)"));
  EXPECT_THAT(error("sensor/m/l/imu/imu/angular_velocity/x/noise/bias_mean"),
              HasSubstr("only elements the world file declares can be varied"));
  EXPECT_THAT(error("sensor/m/l/imu/imu/angular_velocity/x/noise"),
              HasSubstr("holds elements, not one number"));
  EXPECT_THAT(error("sensor/m/l/imu/update_rate/x"),
              HasSubstr("has no <x> (its children: none)"));
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/*/noise/stddev", 1, "p:1"},
                           {"sensor/m/l/imu/imu/angular_velocity/y/noise/stddev", 1, "p:2"}},
                          runner),
              HasSubstr("which sensor/m/l/imu/imu/angular_velocity/*/noise/stddev (p:1) sets "
                        "already"));
  EXPECT_THAT(error_of(plan_text("  sensor/m/l/imu/stddev: [1]\n")),
              HasSubstr("expected sensor/MODEL/LINK/SENSOR/PATH"));
  // A noise's stddev below 0 is refused at the plan's line, not at the world file's.
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/y/noise/stddev", -0.004, "p:4"}},
                          runner),
              HasSubstr("p:4: sensor/m/l/imu/imu/angular_velocity/y/noise/stddev: drew "));
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/y/noise/stddev", -0.004, "p:4"}},
                          runner),
              HasSubstr("drew -0.004: "));
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/y/noise/stddev", -0.004, "p:4"}},
                          runner),
              HasSubstr("<noise><stddev> must be a finite value >= 0, found -0.004"));
}

// A * that reaches the number below some elements only, and a sensor that no system of the
// world serves, are errors at the plan's line: neither may vary less than the key says.
TEST(Apply, SensorKeysReachEveryElementTheyNameAndAServedSensor) {
  const TempFile partial{write_world("imu_xz", imu_text("xz", true))};
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(partial.path.string(), runner);
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/*/noise/stddev", 1, "p:5"}},
                          runner),
              AllOf(HasSubstr("p:5: sensor/m/l/imu/imu/angular_velocity/*/noise/stddev: the "
                              "sensor 'w::m::l::imu': <y> at "),
                    HasSubstr("has no <noise> (its children: none), while other elements the "
                              "path names have it")));
  sim::Runner named(sim::Runner::Options{});
  world::load_world_into_runner(partial.path.string(), named);
  apply_values(std::vector<Value>{{"sensor/m/l/imu/imu/angular_velocity/x/noise/stddev", 1, "p:6"},
                                  {"sensor/m/l/imu/imu/angular_velocity/z/noise/stddev", 1, "p:7"}},
               named);

  const TempFile unserved{write_world("imu_unserved", imu_text("xyz", false))};
  sim::Runner alone(sim::Runner::Options{});
  world::load_world_into_runner(unserved.path.string(), alone);
  EXPECT_THAT(apply_error({{"sensor/m/l/imu/imu/angular_velocity/x/noise/stddev", 1, "p:8"}},
                          alone),
              HasSubstr("p:8: sensor/m/l/imu/imu/angular_velocity/x/noise/stddev: the sensor "
                        "'w::m::l::imu' (imu) is served by no system of the world (declare "
                        "gz::sim::systems::Imu): every run would read nothing from it"));
}

TEST(Plan, PoseKeysNameAModelAndAComponent) {
  const Plan p =
      parse_plan(plan_text("  pose/x3/x: {uniform: [-1, 1]}\n  pose/x3/yaw: [0, 90]\n"), "p.yaml");
  EXPECT_EQ(draw(p, 1).values[1].value, 90);
  EXPECT_THAT(error_of(plan_text("  pose/x3/heading: [1]\n")),
              HasSubstr("p.yaml:5:3: 'pose/x3/heading': expected pose/MODEL/C with C one of x, y, "
                        "z [m], roll, pitch, yaw [deg]"));
  EXPECT_THAT(error_of(plan_text("  pose/x: [1]\n")), HasSubstr("expected pose/MODEL/C"));
  EXPECT_THAT(error_of(plan_text("  pose//x3/x: [1]\n")), HasSubstr("expected pose/MODEL/C"));
  EXPECT_EQ(parse_set("pose/a/b/yaw=-45").key, "pose/a/b/yaw");
}

TEST(Shard, FromTheFlagOpenMpiAndSlurm) {
  EXPECT_EQ(parse_shard("1/3").index, 1u);
  EXPECT_EQ(parse_shard("1/3").count, 3u);
  for (const char* bad : {"3/3", "1", "a/2", "0/0", "-1/2", "1/2/3"}) {
    EXPECT_THROW(parse_shard(bad), Error) << bad;
  }
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_ARRAY_TASK_ID",
                        "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"}) {
    unsetenv(v);
  }
  EXPECT_FALSE(shard_from_environment());
  setenv("SLURM_ARRAY_TASK_ID", "5", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
  auto s = shard_from_environment();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2u);
  EXPECT_EQ(s->count, 4u);
  EXPECT_EQ(s->source, "Slurm");
  setenv("SLURM_ARRAY_TASK_ID", "9", 1);
  EXPECT_THROW(shard_from_environment(), Error);
  // MPI first.
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  s = shard_from_environment();
  EXPECT_EQ(s->index, 1u);
  EXPECT_EQ(s->source, "OpenMPI");
  setenv("OMPI_COMM_WORLD_SIZE", "x", 1);
  EXPECT_THROW(shard_from_environment(), Error);
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_ARRAY_TASK_ID",
                        "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"}) {
    unsetenv(v);
  }
}

TEST(Database, RowsRoundTripAndAnotherPlanIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("kestrel_batch_db_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  RunResult r;
  r.run_id = 4;
  r.outcome = "failed";
  r.seed = (std::uint64_t{1} << 63) - 1;
  r.params = R"({"wind_speed":0.1})";
  r.mission_completed = 0;
  r.max_tracking_error_m = 0.125;
  r.min_battery = 0.75;
  r.final_z_m = -0.0;
  r.sim_time_s = 12.5;
  r.wall_time_s = 0.5;
  r.message = "mission failed";
  {
    Database db(dir / "r.sqlite", "a.yaml", "plan A");
    db.insert(r);
    EXPECT_THROW(db.insert(r), Error);
  }
  Database db(dir / "r.sqlite", "a.yaml", "plan A");
  EXPECT_EQ(db.done(), std::set<std::uint64_t>{4});
  const auto rows = db.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].same_outcome(r));
  EXPECT_FALSE(rows[0].energy_J);
  EXPECT_EQ(rows[0].wall_time_s, 0.5);
  EXPECT_TRUE(RunResult::from_json(r.to_json()).same_outcome(r));
  try {
    Database other(dir / "r.sqlite", "b.yaml", "plan B");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds the results of another plan (a.yaml"));
  }
  fs::remove_all(dir);
}

// The plan's runs not in the database (a shard not merged): what merge and report name.
TEST(Database, MissingRunsAreThePlansRunsNotPresent) {
  const fs::path dir = fs::temp_directory_path() / ("kestrel_batch_miss_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Database db(dir / "r.sqlite", "a.yaml", "plan A");
  EXPECT_FALSE(db.missing()) << "no run count recorded: unknown, not 'none missing'";
  db.set_meta("runs", "5");
  for (std::uint64_t k : {0, 2, 3}) {
    RunResult r;
    r.run_id = k;
    r.outcome = "completed";
    db.insert(r);
  }
  EXPECT_EQ(db.missing(), (std::vector<std::uint64_t>{1, 4}));
  db.set_meta("runs", "five");
  EXPECT_THROW(db.missing(), Error);
  std::vector<std::uint64_t> many(25);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = i;
  EXPECT_EQ(id_list({1, 4}), "1, 4");
  EXPECT_THAT(id_list(many), HasSubstr("18, 19 and 5 more"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kestrel::batch
