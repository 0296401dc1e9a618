// MulticopterVelocityControl and MulticopterMission on an X3-class quadcopter.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/physics_islands.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ::testing::HasSubstr;
using testing::LoadedWorld;
using testing::QuadOptions;

constexpr const char* kSquareMission = R"(
      <plugin filename="kestrel-multicopter-mission-system"
              name="kestrel::systems::MulticopterMission">
        <comLinkName>base_link</comLinkName>
        <start_time>0.5</start_time>
        <cruise_speed>2</cruise_speed>
        <takeoff altitude="5"/>
        <waypoint>10 0 5</waypoint>
        <waypoint hold="1">10 10 5</waypoint>
        <waypoint>0 10 5</waypoint>
        <waypoint>0 0 5</waypoint>
        <land/>
      </plugin>)";

// A quadcopter on the ground with kSquareMission.
std::string square_mission_world() {
  QuadOptions o;
  o.z = 0.06;
  o.ground = true;
  o.velocity_control = true;
  o.model_extra = kSquareMission;
  return testing::quad_world(o);
}

using testing::load_error;

// The error of a quadcopter (with a velocity controller) given a mission of `items`.
std::string mission_error(const std::string& items) {
  QuadOptions o;
  o.velocity_control = true;
  o.model_extra = R"(<plugin filename="x" name="kestrel::systems::MulticopterMission">
        <comLinkName>base_link</comLinkName>
        )" + items +
                  "</plugin>";
  return load_error(testing::quad_world(o));
}

// What transport writes when a Twist arrives.
void twist(LoadedWorld& w, ecs::Entity model, const ignition::math::Vector3d& linear,
           const ignition::math::Vector3d& angular = {}) {
  w.r().set(model, c::TwistCommand{linear, angular, true});
}

TEST(MulticopterVelocityControl, FollowsAStepInVxWithin10PercentAfter2s) {
  QuadOptions o;
  o.z = 5;
  o.velocity_control = true;
  LoadedWorld w(testing::quad_world(o));
  const auto model = w.find("w::quad");
  const auto base = w.find("w::quad::base_link");
  EXPECT_EQ(w.r().get<c::TwistCommandTopic>(model).topic, "/quad/gazebo/command/twist");
  EXPECT_EQ(w.r().get<c::VelocityControlEnableTopic>(model).topic, "/quad/enable");
  EXPECT_TRUE(w.r().get<c::VelocityControlEnable>(model).value);  // Gazebo: controllerActive{true}
  twist(w, model, {0, 0, 0});
  w.step(2000);  // hover 2 s (spin-up transient settles)
  const auto v0 = w.r().get<c::WorldLinearVelocity>(base).value;
  EXPECT_LT(v0.Length(), 0.05);
  twist(w, model, {1, 0, 0});
  w.step(2000);
  const auto v = w.r().get<c::WorldLinearVelocity>(base).value;
  EXPECT_NEAR(v.X(), 1.0, 0.1);
  EXPECT_NEAR(v.Y(), 0.0, 0.1);
  EXPECT_NEAR(v.Z(), 0.0, 0.1);
  // Climb and yaw rate too: with Gazebo's motor model (no inflow loss) the proportional loop
  // settles on the commanded climb rate.
  twist(w, model, {0, 0, 0.5}, {0, 0, 0.3});
  w.step(3000);
  EXPECT_NEAR(w.r().get<c::WorldLinearVelocity>(base).value.Z(), 0.5, 0.01);
  EXPECT_NEAR(w.r().get<c::WorldAngularVelocity>(base).value.Z(), 0.3, 0.03);
}

// Gazebo's controller is enabled at start but commands nothing before its first twist; disabled,
// it sets every rotor to 0 and forgets the twist, so re-enabling waits for a new one.
TEST(MulticopterVelocityControl, WaitsForATwistAndDisabledCommandsZeroToEveryRotor) {
  QuadOptions o;
  o.velocity_control = true;
  LoadedWorld w(testing::quad_world(o));
  const auto model = w.find("w::quad");
  const auto& out = w.r().get<c::ActuatorCommands>(model).velocity;
  w.step(10);
  EXPECT_EQ(out, std::vector<double>(4, 0.0));
  twist(w, model, {0, 0, 0});
  w.step(10);
  EXPECT_GT(out.at(0), 500.0);
  w.r().get<c::VelocityControlEnable>(model).value = false;
  w.step();
  EXPECT_EQ(out, std::vector<double>(4, 0.0));
  EXPECT_FALSE(w.r().get<c::TwistCommand>(model).received);
  w.r().get<c::VelocityControlEnable>(model).value = true;
  w.step(10);
  EXPECT_EQ(out, std::vector<double>(4, 0.0));
}

TEST(MulticopterVelocityControl, RunTimeSeedRestartsTheVelocityNoise) {
  QuadOptions o;
  o.z = 5;
  o.velocity_control = true;
  std::string sdf = testing::quad_world(o);
  const std::string anchor = "<comLinkName>base_link</comLinkName>";
  sdf.insert(sdf.find(anchor) + anchor.size(),
             "<linearVelocityNoiseStdDev>0.2 0.2 0.2</linearVelocityNoiseStdDev>");
  // The rotor commands of 20 steps after a seed change at t = 0.1 s.
  auto commands = [&](std::optional<std::uint64_t> seed) {
    LoadedWorld w(sdf);
    const auto model = w.find("w::quad");
    twist(w, model, {0, 0, 0});
    w.step(100);
    if (seed) w.runner->set_seed(*seed);
    w.step();  // the seed changes at the end of this step
    std::vector<double> out;
    for (int i = 0; i < 20; ++i) {
      w.step();
      const auto& v = w.r().get<c::ActuatorCommands>(model).velocity;
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  };
  const auto a = commands(7);
  EXPECT_EQ(a, commands(7)) << "deterministic";
  EXPECT_NE(a, commands(std::nullopt)) << "the new seed restarted the controller's noise";
  EXPECT_NE(a, commands(8));
}

TEST(MulticopterVelocityControl, MissingParametersAreErrors) {
  QuadOptions o;
  o.velocity_control = true;
  const std::string sdf = testing::quad_world(o);
  auto without = [&](const std::string& from, const std::string& to) {
    std::string s = sdf;
    s.replace(s.find(from), from.size(), to);
    try {
      LoadedWorld w(s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(without("<comLinkName>base_link</comLinkName>", ""),
              HasSubstr("missing required parameter <comLinkName>"));
  EXPECT_THAT(without("<velocityGain>2.7 2.7 2.7</velocityGain>", ""),
              HasSubstr("missing required parameter <velocityGain>"));
  EXPECT_THAT(without("<direction>1</direction>", "<direction>2</direction>"),
              HasSubstr("<direction> must be 1 (ccw) or -1 (cw), found 2"));
  EXPECT_THAT(without("<jointName>rotor_3_joint</jointName><forceConstant>",
                      "<jointName>rotor_7_joint</jointName><forceConstant>"),
              HasSubstr("'rotor_7_joint' is not a joint of model 'w::quad'"));
}

TEST(MulticopterMission, FliesTheSquareAndLandsWithTrackingErrorUnderHalfAMetre) {
  LoadedWorld w(square_mission_world());
  const auto model = w.find("w::quad");
  const auto base = w.find("w::quad::base_link");
  const auto& st = w.r().get<c::MissionState>(model);
  EXPECT_EQ(st.waypoint_count, 4);
  EXPECT_EQ(w.r().get<c::MissionStateTopic>(model).topic, "/model/quad/mission/state");
  double max_alt = 0;
  int steps = 0;
  while (st.phase != c::MissionPhase::kCompleted && st.phase != c::MissionPhase::kFailed &&
         steps < 120000) {
    w.step();
    ++steps;
    max_alt = std::max(max_alt, w.r().get<c::WorldPose>(base).value.Pos().Z());
  }
  ASSERT_EQ(st.phase, c::MissionPhase::kCompleted) << st.reason << " at t=" << w.t();
  EXPECT_LE(st.max_tracking_error, 0.5);
  EXPECT_GT(st.max_tracking_error, 0.0);
  EXPECT_NEAR(max_alt, 5.0, 0.3);
  const auto p = w.r().get<c::WorldPose>(base).value.Pos();
  EXPECT_LT(std::hypot(p.X(), p.Y()), 0.3);  // back home
  EXPECT_LT(p.Z(), 0.2);                     // on the ground
  EXPECT_GT(st.flight_time, 20);             // 40 m at 2 m/s + climb + descent
  EXPECT_LT(st.flight_time, 60);
  EXPECT_EQ(st.waypoint, 3);
  EXPECT_FALSE(w.r().get<c::VelocityControlEnable>(model).value);  // motors off after landing
}

TEST(MulticopterMission, BadMissionsAreErrors) {
  const auto error = mission_error;
  EXPECT_THAT(error("<waypoint>1 2 3</waypoint><land/>"),
              HasSubstr("the first item must be <takeoff"));
  EXPECT_THAT(error("<takeoff altitude=\"5\"/><waypoint>1 2 3</waypoint>"),
              HasSubstr("the last item must be <land/>"));
  EXPECT_THAT(error("<takeoff altitude=\"high\"/><land/>"),
              HasSubstr("attribute 'altitude' must be a finite number, found 'high'"));
  EXPECT_THAT(error("<takeoff altitude=\"5\"/><wayponit>1 2 3</wayponit><land/>"),
              HasSubstr("unknown parameter <wayponit>"));
}

TEST(MulticopterMission, UnknownItemAttributesAreErrorsListingTheAcceptedOnes) {
  const auto error = mission_error;
  EXPECT_THAT(error("<takeoff altitude=\"5\"/><waypoint hld=\"2\">1 2 3</waypoint><land/>"),
              ::testing::MatchesRegex(".*kestrel_mc_[0-9_]+\\.sdf:[0-9]+: <waypoint> has unknown "
                                      "attribute 'hld' \\(accepted: hold\\)"));
  EXPECT_THAT(error("<takeoff altitude=\"5\" speed=\"3\"/><land/>"),
              HasSubstr("<takeoff> has unknown attribute 'speed' (accepted: altitude)"));
  EXPECT_THAT(error("<takeoff altitude=\"5\"/><land speed=\"0.1\"/>"),
              HasSubstr("<land> has unknown attribute 'speed' (accepted: none)"));
  EXPECT_THAT(error("<takeoff altitude=\"5\"/><hold duraton=\"3\" duration=\"1\"/><land/>"),
              HasSubstr("<hold> has unknown attribute 'duraton' (accepted: duration)"));
  EXPECT_EQ(error("<takeoff altitude=\"5\"/><waypoint hold=\"2\">1 2 3</waypoint>"
                  "<hold duration=\"1\"/><land/>"),
            "(no error)");
}

TEST(MulticopterVelocityControl, ParametersTakeNoAttributes) {
  QuadOptions o;
  o.velocity_control = true;
  std::string sdf = testing::quad_world(o);
  const std::string from = "<velocityGain>";
  sdf.replace(sdf.find(from), from.size(), "<velocityGain unit=\"N/(m/s)\">");
  EXPECT_THAT(load_error(sdf), HasSubstr("MulticopterVelocityControl: <velocityGain> has unknown "
                                         "attribute 'unit' (accepted: none; parameters take no "
                                         "attributes)"));
}

TEST(MulticopterMission, TwoMissionsOrTwoControllersOnOneModelAreErrorsNamingBoth) {
  QuadOptions o;
  o.z = 0.06;
  o.ground = true;
  o.velocity_control = true;
  o.model_extra = std::string(kSquareMission) + kSquareMission;
  std::string sdf = testing::quad_world(o);
  auto line_of = [&](std::size_t at) {
    return 1 + std::count(sdf.begin(), sdf.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  };
  const auto error = load_error;
  const std::string mission = "<plugin filename=\"kestrel-multicopter-mission-system\"";
  const auto first = sdf.find(mission), second = sdf.find(mission, first + 1);
  EXPECT_THAT(error(sdf),
              ::testing::MatchesRegex(fmt::format(
                  ".*kestrel_mc_[0-9_]+\\.sdf:{}: model 'w::quad' declares a second "
                  "MulticopterMission \\(the first is at .*kestrel_mc_[0-9_]+\\.sdf:{}\\).*",
                  line_of(second), line_of(first))));

  // Two velocity controllers: the model's VC block twice.
  o.model_extra = "";
  sdf = testing::quad_world(o);
  const std::string vc = "<plugin filename=\"gz-sim-multicopter-control-system\"";
  const auto begin = sdf.find(vc);
  const auto end = sdf.find("</plugin>", begin) + std::string("</plugin>").size();
  sdf.insert(end, "\n" + sdf.substr(begin, end - begin));
  EXPECT_THAT(
      error(sdf),
      ::testing::MatchesRegex(fmt::format(
          ".*kestrel_mc_[0-9_]+\\.sdf:[0-9]+: model 'w::quad' declares a second "
          "MulticopterVelocityControl \\(the first is at .*kestrel_mc_[0-9_]+\\.sdf:{}\\).*",
          line_of(begin))));
}

TEST(MulticopterMission, MissionSentInFlightReplacesTheCurrentOne) {
  LoadedWorld w(square_mission_world());
  const auto model = w.find("w::quad");
  const auto base = w.find("w::quad::base_link");
  EXPECT_EQ(w.r().get<c::MissionCommandTopic>(model).topic, "/model/quad/mission");
  const auto& st = w.r().get<c::MissionState>(model);
  while (st.phase != c::MissionPhase::kWaypoint && w.t() < 30) w.step();
  ASSERT_EQ(st.phase, c::MissionPhase::kWaypoint);
  const auto p0 = w.r().get<c::WorldPose>(base).value.Pos();
  // A bad one changes nothing; a good one is flown from here: up to 3 m, to (-3, -3), land.
  w.r().set(model,
            c::MissionCommand{"<takeoff altitude=\"3\"/><waypoint>1 2</waypoint><land/>", "test"});
  w.step();
  EXPECT_EQ(st.phase, c::MissionPhase::kWaypoint);
  EXPECT_EQ(st.waypoint_count, 4);
  EXPECT_TRUE(w.r().get<c::MissionCommand>(model).text.empty());
  w.r().set(model, c::MissionCommand{
                       "<mission><takeoff altitude=\"3\"/><waypoint>-3 -3 3</waypoint><land/>"
                       "</mission>",
                       "test"});
  w.step();
  EXPECT_EQ(st.phase, c::MissionPhase::kTakeoff);
  EXPECT_EQ(st.waypoint_count, 1);
  EXPECT_NEAR(st.target.X(), p0.X(), 0.05);  // straight down to 3 m from where it was
  EXPECT_NEAR(st.target.Z(), 3.0, 0.1);      // above the take-off point (base link ~6 cm up)
  while (st.phase != c::MissionPhase::kCompleted && st.phase != c::MissionPhase::kFailed &&
         w.t() < 120) {
    w.step();
  }
  ASSERT_EQ(st.phase, c::MissionPhase::kCompleted) << st.reason;
  const auto p = w.r().get<c::WorldPose>(base).value.Pos();
  EXPECT_LT(std::hypot(p.X() + 3, p.Y() + 3), 0.3);
  EXPECT_EQ(st.waypoint, 0);
  EXPECT_LE(st.max_tracking_error, 0.5);
  // After completion a new mission starts from where it landed; reset restores the file's.
  w.r().set(model,
            c::MissionCommand{"<takeoff altitude=\"1\"/><hold duration=\"1\"/><land/>", "test"});
  w.step(2);
  EXPECT_EQ(st.phase, c::MissionPhase::kTakeoff);
  EXPECT_NEAR(st.target.X(), -3, 0.3);
  w.runner->request_reset();
  w.step(2000);
  EXPECT_EQ(w.r().get<c::MissionState>(model).waypoint_count, 4);
}

}  // namespace
}  // namespace kestrel::systems

#include "kestrel/sdf/world_loader.h"
#include "kestrel/systems/mission_monitor.h"
#include "kestrel/systems/swarm.h"

namespace kestrel::systems {
namespace {

TEST(MakeSwarm, EveryVehicleFliesItsOwnPatternAndLands) {
  SwarmOptions o;
  o.count = 4;  // one of each pattern: square, triangle, hexagon, line
  EXPECT_EQ(make_swarm(o, "v.sdf").world.find("physics_islands"), std::string::npos)
      << "one model by default for small swarms";
  o.islands = false;
  EXPECT_NE(make_swarm(o, "v.sdf").world.find("<kestrel:physics_islands>false<"),
            std::string::npos);
  o.islands = true;
  const auto vehicle = testing::write_temp(make_swarm(o, "unused").vehicle);
  const SwarmFiles files = make_swarm(o, vehicle.string());
  LoadedWorld w(files.world);
  std::filesystem::remove(vehicle);
  // The vehicle file is parsed once, for all four includes; each vehicle is its own island.
  EXPECT_EQ(w.setup.description.instanced, 4u);
  EXPECT_TRUE(w.r().has<c::PhysicsIslands>(w.runner->world()));
  EXPECT_EQ(w.r().count<c::MissionState>(), 4u);
  // Each vehicle has its own topic namespace (its name), for the motors and the controller.
  EXPECT_EQ(w.r().get<c::ActuatorCommandTopic>(w.find("swarm_4::uav_0002")).topic,
            "/uav_0002/command/motor_speed");
  const auto monitor = MissionMonitor::attach(*w.runner);
  ASSERT_NE(monitor, nullptr);
  w.runner->run(std::nullopt, from_seconds(120));  // the monitor stops the run when all are done
  EXPECT_LT(w.t(), 119.0);
  const auto vehicles = monitor->vehicles();
  ASSERT_EQ(vehicles.size(), 4u);
  for (const auto& v : vehicles) {
    EXPECT_EQ(v.phase, "completed") << v.name << ": " << v.reason;
    EXPECT_LE(v.max_tracking_error, 0.5) << v.name;
  }
  EXPECT_EQ(monitor->exit_code(), 0);
  SwarmOptions none;
  none.count = 0;
  EXPECT_THROW(make_swarm(none, "v.sdf"), Error);
}

// A swarm's motors and velocity controllers are model-local (Runner::Options::model_threads):
// run by vehicle on 2 or 3 threads, the take-off is bit for bit the serial one.
TEST(MakeSwarm, AFlightDoesNotDependOnTheThreadsRunningTheVehiclesSystems) {
  SwarmOptions o;
  o.count = 20;  // at least Runner::kMinParallelModels
  o.islands = true;
  const auto vehicle = testing::write_temp(make_swarm(o, "unused").vehicle);
  const SwarmFiles files = make_swarm(o, vehicle.string());
  auto fly = [&](unsigned threads) {
    LoadedWorld w(files.world, /*configure=*/false);
    auto opts = w.runner->options();
    opts.model_threads = threads;
    w.runner->set_options(opts);
    w.runner->configure();
    w.step(900);  // the missions start at 0.5 s
    std::vector<double> out;
    w.r().each<c::RotorVelocities>([&](ecs::Entity m, const c::RotorVelocities& v) {
      out.insert(out.end(), v.velocity.begin(), v.velocity.end());
      const auto& X = w.r().get<c::WorldPose>(w.find(w.r().scoped_name(m) + "::base_link")).value;
      out.insert(out.end(), {X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(), X.Rot().X()});
    });
    return out;
  };
  const auto serial = fly(1);
  ASSERT_EQ(serial.size(), 20u * 9);
  EXPECT_GT(serial[0], 100) << "the rotors turn";
  EXPECT_EQ(fly(2), serial);
  EXPECT_EQ(fly(3), serial);
  std::filesystem::remove(vehicle);
}

// Islands do not let vehicles pass through each other: a vehicle thrown at another (before the
// missions start) hits it and pushes it; their islands merge for it.
TEST(MakeSwarm, AVehicleFlyingIntoAnotherHitsIt) {
  SwarmOptions o;
  o.count = 3;
  o.islands = true;
  const auto vehicle = testing::write_temp(make_swarm(o, "unused").vehicle);
  LoadedWorld w(make_swarm(o, vehicle.string()).world);
  std::filesystem::remove(vehicle);
  const auto target = w.find("swarm_3::uav_0000"), thrown = w.find("swarm_3::uav_0001");
  const auto base = w.find("swarm_3::uav_0000::base_link");
  w.step();
  ASSERT_NE(w.r().get<c::PhysicsIsland>(target).first, w.r().get<c::PhysicsIsland>(thrown).first);
  const auto p0 = w.r().get<c::WorldPose>(base).value.Pos();
  w.r().add<c::WorldPoseCmd>(thrown,
                             ignition::math::Pose3d(p0.X() + 0.8, p0.Y(), p0.Z() + 0.01, 0, 0, 0));
  w.r().add<c::LinearVelocityCmd>(thrown, ignition::math::Vector3d(-6, 0, 0));
  w.step();
  w.r().remove<c::LinearVelocityCmd>(thrown);
  bool merged = false;
  for (int k = 0; k < 300; ++k) {  // the missions start at 0.5 s
    w.step();
    merged = merged ||
             w.r().get<c::PhysicsIsland>(target).first == w.r().get<c::PhysicsIsland>(thrown).first;
    const double dx = w.r().get<c::WorldPose>(thrown).value.Pos().X() -
                      w.r().get<c::WorldPose>(target).value.Pos().X();
    ASSERT_GT(dx, 0.2) << "the bodies (0.30 m long) overlap or passed through, step " << k;
  }
  EXPECT_TRUE(merged);
  EXPECT_LT(w.r().get<c::WorldPose>(base).value.Pos().X(), p0.X() - 0.05) << "it was pushed";
  EXPECT_NE(w.r().get<c::PhysicsIsland>(w.find("swarm_3::uav_0002")).first,
            w.r().get<c::PhysicsIsland>(target).first);
}

TEST(MissionMonitor, ReportsAFailedMissionWithExitCode1) {
  QuadOptions o;
  o.z = 0.06;
  o.ground = true;
  o.velocity_control = true;
  o.model_extra = kSquareMission;
  o.world_extra = R"(<plugin filename="kestrel-fault-injection-system"
      name="kestrel::systems::FaultInjection">
      <fault time="6" type="rotor" model="quad" rotor="2" efficiency="0"/></plugin>)";
  LoadedWorld w(testing::quad_world(o));
  const auto monitor = MissionMonitor::attach(*w.runner);
  w.runner->run(std::nullopt, from_seconds(60));
  EXPECT_EQ(monitor->exit_code(), 1);
  const auto v = monitor->vehicles().at(0);
  EXPECT_EQ(v.phase, "failed");
  EXPECT_THAT(v.reason, HasSubstr("attitude lost"));
  EXPECT_EQ(monitor->faults(), 1u);
  char buf[4096] = {};
  std::FILE* f = fmemopen(buf, sizeof buf, "w");
  monitor->print_summary(f);
  std::fclose(f);
  EXPECT_THAT(std::string(buf), HasSubstr("mission: NOT completed (0 of 1 vehicles)"));
  EXPECT_THAT(std::string(buf), HasSubstr("faults injected: 1"));
}

}  // namespace
}  // namespace kestrel::systems

namespace kestrel::systems {
namespace {

TEST(X3MissionWorld, CompletesWithTrackingErrorUnderHalfAMetre) {
  sim::Runner::Options ro;
  ro.real_time_factor = 0;
  sim::Runner runner(ro);
  world::load_world_into_runner(std::filesystem::path(KESTREL_SOURCE_DIR) / "worlds/x3_mission.sdf",
                                runner);
  runner.configure();
  const auto monitor = MissionMonitor::attach(runner);
  ASSERT_NE(monitor, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  runner.run(std::nullopt, from_seconds(150));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto v = monitor->vehicles().at(0);
  EXPECT_EQ(v.phase, "completed") << v.reason;
  EXPECT_LE(v.max_tracking_error, 0.5);
  EXPECT_GT(v.energy_used, 0);
  EXPECT_EQ(monitor->exit_code(), 0);
  std::printf(
      "x3_mission: flight %.1f s, max tracking error %.3f m, energy %.0f J, %llu steps "
      "in %.2f s wall (%.0f steps/s)\n",
      v.flight_time, v.max_tracking_error, v.energy_used,
      static_cast<unsigned long long>(runner.info().iterations), wall,
      runner.info().iterations / wall);
}

}  // namespace
}  // namespace kestrel::systems

// ---- gz-sim's multicopter integration test, ported
// -------------------------------------------- Its worlds are test_quadcopter.sdf
// (../shared/worlds/gz) and quadcopter_velocity_control.sdf, which is not in ../shared: that one is
// test_quadcopter.sdf plus the controller block below (the parameters of gz-sim's
// test/worlds/quadcopter_velocity_control.sdf), built inline.

namespace kestrel::systems {
namespace {

std::filesystem::path gz_world(const std::string& name) {
  return std::filesystem::path(KESTREL_SHARED_DIR) / "worlds/gz" / name;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr const char* kGazeboVelocityControl = R"(
      <plugin filename="gz-sim-multicopter-control-system"
              name="gz::sim::systems::MulticopterVelocityControl">
        <robotNamespace>X3</robotNamespace>
        <commandSubTopic>gazebo/command/twist</commandSubTopic>
        <enableSubTopic>enable</enableSubTopic>
        <comLinkName>base_link</comLinkName>
        <velocityGain>2.7 2.7 2.7</velocityGain>
        <attitudeGain>2 3 0.15</attitudeGain>
        <angularRateGain>0.4 0.52 0.18</angularRateGain>
        <maximumLinearAcceleration>2 2 2</maximumLinearAcceleration>
        <rotorConfiguration>
          <rotor><jointName>rotor_0_joint</jointName><forceConstant>8.54858e-06</forceConstant>
            <momentConstant>0.016</momentConstant><direction>1</direction></rotor>
          <rotor><jointName>rotor_1_joint</jointName><forceConstant>8.54858e-06</forceConstant>
            <momentConstant>0.016</momentConstant><direction>1</direction></rotor>
          <rotor><jointName>rotor_2_joint</jointName><forceConstant>8.54858e-06</forceConstant>
            <momentConstant>0.016</momentConstant><direction>-1</direction></rotor>
          <rotor><jointName>rotor_3_joint</jointName><forceConstant>8.54858e-06</forceConstant>
            <momentConstant>0.016</momentConstant><direction>-1</direction></rotor>
        </rotorConfiguration>
      </plugin>
)";

// A Runner on a world file or text, stepping as gz-sim's Server::Run(true, n, false).
struct GzRun {
  explicit GzRun(const std::string& sdf_text) : w(sdf_text) {}
  ecs::Registry& r() { return w.r(); }
  ecs::Entity x3() { return w.find("quadcopter::X3"); }
  LoadedWorld w;
};

#define SKIP_WITHOUT_GZ_WORLDS()                                                      \
  if (!std::filesystem::exists(gz_world("test_quadcopter.sdf"))) {                    \
    GTEST_SKIP() << "Gazebo corpus not found at " << gz_world("test_quadcopter.sdf"); \
  }

std::string velocity_control_world() {
  std::string sdf = read_text(gz_world("test_quadcopter.sdf"));
  const auto end = sdf.rfind("</model>");
  return sdf.insert(end, kGazeboVelocityControl);
}

// multicopter.cc CommandedMotorSpeed: 100 rad/s to every rotor after iteration 100; after 500
// more, every rotor joint turns at 100 rad/s (rotorVelocitySlowdownSim 1) within 1e-2.
TEST(GazeboMulticopterTest, CommandedMotorSpeed) {
  SKIP_WITHOUT_GZ_WORLDS();
  GzRun g(read_text(gz_world("test_quadcopter.sdf")));
  g.w.step(100);
  g.r().get<c::ActuatorCommands>(g.x3()).velocity.assign(4, 100.0);
  g.w.step(500);
  int count = 0;
  g.r().each<c::Joint, c::JointVelocity>(
      [&](ecs::Entity, const c::Joint&, const c::JointVelocity& v) {
        ASSERT_FALSE(v.data.empty());
        EXPECT_NEAR(std::abs(v.data[0]), 100.0, 1e-2);
        ++count;
      });
  EXPECT_EQ(count, 4);
}

// multicopter.cc MulticopterVelocityControl: five twists in a row, each published at the first
// iteration of a 2000-iteration run; at its last iteration the base link's body-frame linear and
// angular velocities equal the command within 1e-2 (per component).
TEST(GazeboMulticopterTest, MulticopterVelocityControl) {
  SKIP_WITHOUT_GZ_WORLDS();
  GzRun g(velocity_control_world());
  const auto base = g.w.find("quadcopter::X3::base_link");
  g.w.step(1);
  using V = ignition::math::Vector3d;
  const std::pair<V, V> cases[] = {{{0, 0, 0.2}, {0, 0, 0}},
                                   {{0.1, 0, 0}, {0, 0, 0}},
                                   {{0.1, 0, 0.2}, {0, 0, 0}},
                                   {{0, 0, 0}, {0, 0, 0.05}},
                                   {{0.1, 0, 0.2}, {0, 0, 0.05}}};
  for (const auto& [lin, ang] : cases) {
    g.w.step(1);  // the twist is published in this iteration's PostUpdate
    g.r().set(g.x3(), c::TwistCommand{lin, ang, true});
    g.w.step(1999);
    const V v = g.r().get<c::LinearVelocity>(base).value;
    const V w = g.r().get<c::AngularVelocity>(base).value;
    EXPECT_TRUE(lin.Equal(v, 1e-2)) << "Cmd: " << lin << " Value: " << v;
    EXPECT_TRUE(ang.Equal(w, 1e-2)) << "Cmd: " << ang << " Value: " << w;
  }
}

// multicopter.cc ModelAndVelocityControlInteraction: while the controller holds a hover, motor
// speed commands sent to the motors' topic (60 rad/s) are overridden: the rotor joints stay near
// the hover speed (650 ± 50 rad/s).
TEST(GazeboMulticopterTest, ModelAndVelocityControlInteraction) {
  SKIP_WITHOUT_GZ_WORLDS();
  GzRun g(velocity_control_world());
  g.w.step(1);
  g.r().set(g.x3(), c::TwistCommand{{0, 0, 0}, {}, true});
  g.w.step(200);
  for (int i = 0; i < 10; ++i) {
    g.r().get<c::ActuatorCommands>(g.x3()).velocity.assign(4, 60.0);  // as transport writes it
    g.w.step(1);
    int joints = 0;
    g.r().each<c::JointVelocity>([&](ecs::Entity, const c::JointVelocity& v) {
      EXPECT_NEAR(std::abs(v.data.at(0)), 650, 50);
      ++joints;
    });
    EXPECT_EQ(joints, 4);
  }
}

// multicopter.cc MulticopterVelocityControlNestedModel on quadcopter_velocity_control_nested.sdf,
// which is not in ../shared: test_quadcopter.sdf with a nested 4 kg payload model welded under
// the base link, motors 3× as strong as the controller assumes (motorConstant 2.54858e-05) and
// attitude gains 10 10 0.15, as that world has them. On the ground and still without a twist;
// with 5 m/s up it rises at every 100 iterations and is above 5 m after 1 s.
TEST(GazeboMulticopterTest, MulticopterVelocityControlNestedModel) {
  SKIP_WITHOUT_GZ_WORLDS();
  std::string sdf = read_text(gz_world("test_quadcopter.sdf"));
  sdf = std::regex_replace(sdf, std::regex("<motorConstant>8.54858e-06</motorConstant>"),
                           "<motorConstant>2.54858e-05</motorConstant>");
  std::string controller = kGazeboVelocityControl;
  controller = std::regex_replace(controller, std::regex("<attitudeGain>2 3 0.15</attitudeGain>"),
                                  "<attitudeGain>10 10 0.15</attitudeGain>");
  const std::string payload = R"(
      <model name="nested_payload">
        <link name="link">
          <inertial><mass>2</mass><inertia><ixx>0.00166667</ixx><ixy>0</ixy><ixz>0</ixz>
            <iyy>0.00166667</iyy><iyz>0</iyz><izz>0.00166667</izz></inertia></inertial>
          <collision name="collision"><pose>0.025 0 0 0 1.57079 0</pose>
            <geometry><cylinder><radius>0.05</radius><length>0.05</length></cylinder></geometry>
          </collision>
        </link>
        <link name="link_1">
          <inertial><mass>2</mass><inertia><ixx>0.00166667</ixx><ixy>0</ixy><ixz>0</ixz>
            <iyy>0.00166667</iyy><iyz>0</iyz><izz>0.00166667</izz></inertia></inertial>
          <collision name="collision_1"><pose>0.0505 0 0 0 1.57079 0</pose>
            <geometry><cylinder><radius>0.04</radius><length>0.01</length></cylinder></geometry>
          </collision>
        </link>
        <joint name="link_joint" type="fixed"><parent>link</parent><child>link_1</child></joint>
      </model>
      <joint name="payload_joint" type="fixed">
        <parent>base_link</parent><child>nested_payload::link</child>
      </joint>
)";
  const auto first_plugin = sdf.find("<plugin", sdf.find("<model name=\"X3\">"));
  sdf.insert(first_plugin, payload);
  sdf.insert(sdf.rfind("</model>"), controller);
  GzRun g(sdf);
  auto z = [&] { return g.r().get<c::Pose>(g.x3()).value.Pos().Z(); };
  g.w.step(1);
  g.w.step(100);
  const double z0 = z();
  EXPECT_GT(0.1, z0);
  g.w.step(100);
  EXPECT_NEAR(z0, z(), 1e-3);
  g.r().set(g.x3(), c::TwistCommand{{0, 0, 5}, {}, true});
  double height = z();
  for (int i = 0; i < 10; ++i) {
    g.w.step(100);
    EXPECT_LT(height, z()) << "after " << (i + 1) * 100 << " iterations";
    height = z();
  }
  EXPECT_LT(5.0, z());
}

}  // namespace
}  // namespace kestrel::systems
