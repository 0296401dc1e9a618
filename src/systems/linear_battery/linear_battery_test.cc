// LinearBattery without physics or transport: a model entity (with one joint) and the battery
// system alone, so that charge, current and the recharge/drain switches follow in closed form.
// The demo world of Gazebo's tutorial (../shared) goes through the SDF loader.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/element.h"
#include "kestrel/sim/runner.h"
#include "multicopter_control/multicopter_control.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Action = c::BatteryDrainCommand::Action;

constexpr double kDt = 0.001;  // [s] the Runner's default step

// One model "car" with a joint "wheel" and the battery configured from `params` (one parameter
// per line; the <plugin> line is battery.sdf:10, so the first parameter is on line 11).
struct Bench {
  explicit Bench(const std::string& params) {
    sim::Runner::Options o;
    o.world_name = "w";
    o.real_time_factor = 0;
    runner = std::make_unique<sim::Runner>(o);
    auto& r = runner->registry();
    model = r.create(runner->world());
    r.add<c::Name>(model, c::Name{"car"});
    r.add<c::Model>(model);
    joint = r.create(model);
    r.add<c::Name>(joint, c::Name{"wheel"});
    r.add<c::Joint>(joint);
    r.add<c::JointVelocity>(joint, c::JointVelocity{{0.0}});
    auto config = Element::parse(
        "<plugin filename=\"gz-sim-linearbatteryplugin-system\" "
        "name=\"gz::sim::systems::LinearBatteryPlugin\">\n" +
            params + "</plugin>",
        "battery.sdf", 10);
    runner->add_system(make_linear_battery(), model, config, "LinearBattery", "battery.sdf:10");
    runner->configure();
  }
  ecs::Registry& r() { return runner->registry(); }
  const c::Battery& battery() { return r().get<c::Battery>(model); }
  bool recharge() { return r().get<c::BatteryRecharge>(model).charging; }
  void step(int n = 1) {
    for (int i = 0; i < n; ++i) runner->step_once();
  }
  void drain(Action a) { r().get<c::BatteryDrainCommand>(model).action = a; }

  std::unique_ptr<sim::Runner> runner;
  ecs::Entity model, joint;
};

// 10 V (no resistance, constant open-circuit voltage), 1 A·h, current smoothing 0.1 ms.
std::string cell(const std::string& extra) {
  return "<battery_name>b</battery_name>\n<voltage>10</voltage>\n<capacity>1</capacity>\n"
         "<smooth_current_tau>0.0001</smooth_current_tau>\n" +
         extra;
}

// 350 W at 10 V = 35 A; charging 1 A·h / 0.01 h = 100 A; recharges below half charge.
const std::string kAutoRecharge = cell(
    "<initial_charge>0.5</initial_charge>\n<power_load>350</power_load>\n"
    "<start_draining>true</start_draining>\n"
    "<enable_recharge>true</enable_recharge>\n<charging_time>0.01</charging_time>\n"
    "<soc_threshold>0.49</soc_threshold>\n");

// Steps until pred() holds after a step (at most `limit`).
template <class Pred>
int steps_until(Bench& b, Pred pred, int limit) {
  for (int k = 1; k <= limit; ++k) {
    b.step();
    if (pred()) return k;
  }
  return -1;
}

TEST(LinearBattery, SocThresholdStartsChargingWhenTheChargeFallsBelowIt) {
  Bench b(kAutoRecharge);
  EXPECT_FALSE(b.recharge());
  // Constant power P at V = Voc: i = P / V, q(t) = q0 − i·t / 3600; it falls below θ·c at
  // t* = (q0 − θ·c)·3600·V / P = 1.02857 s, i.e. in step 1029 (smoothing lags by tau = 0.1 step).
  const double i = 350.0 / 10.0;
  const double t_star = (0.5 - 0.49 * 1.0) * 3600 / i;
  const int k = steps_until(
      b, [&] { return b.recharge(); }, 5000);
  EXPECT_EQ(k, static_cast<int>(std::ceil(t_star / kDt)));
  EXPECT_LT(b.battery().percentage, 0.49);
  EXPECT_GT(b.battery().percentage, 0.49 - 2 * i * kDt / 3600);
  EXPECT_FALSE(b.battery().charging);  // the charging current flows from the next step
  b.step(10);
  EXPECT_TRUE(b.battery().charging);
  EXPECT_NEAR(b.battery().current, i - 100.0, 1e-9);  // load 35 A, charging 100 A

  // Net −65 A until full; then charging stops by itself.
  const double q = b.battery().charge;
  const double to_full = (1.0 - q) * 3600 / (100.0 - i);  // [s]
  const int full = steps_until(
      b, [&] { return !b.recharge(); }, 100000);
  EXPECT_NEAR(full, to_full / kDt, 2);
  EXPECT_EQ(b.battery().charge, 1.0);
  EXPECT_EQ(b.battery().percentage, 1.0);
  b.step(10);
  EXPECT_FALSE(b.battery().charging);
  EXPECT_NEAR(b.battery().current, i, 1e-9);
  EXPECT_LT(b.battery().charge, 1.0);

  // Draining again from full: charging starts again when it falls below the threshold.
  const int again = steps_until(
      b, [&] { return b.recharge(); }, 100000);
  EXPECT_NEAR(again + 10, (1.0 - 0.49) * 3600 / i / kDt, 2);
}

TEST(LinearBattery, RechargeStopCommandIsNotOverriddenWhileTheChargeStaysLow) {
  Bench b(kAutoRecharge);
  ASSERT_GT(steps_until(
                b, [&] { return b.recharge(); }, 5000),
            0);
  const double low = b.battery().charge;                    // just below the threshold
  b.r().get<c::BatteryRecharge>(b.model).charging = false;  // as transport writes a stop
  b.step(10);
  EXPECT_FALSE(b.battery().charging);
  EXPECT_NEAR(b.battery().current, 35.0, 1e-9);
  // Below the threshold and draining, yet no new automatic start: 10 s at 35 A.
  b.step(10000);
  EXPECT_FALSE(b.recharge());
  EXPECT_NEAR(b.battery().charge, low - 35.0 * 10.01 / 3600, 1e-6);
  // A start command charges to full, then stops.
  b.r().get<c::BatteryRecharge>(b.model).charging = true;
  EXPECT_GT(steps_until(
                b, [&] { return !b.recharge(); }, 100000),
            0);
  EXPECT_EQ(b.battery().charge, 1.0);
}

TEST(LinearBattery, ThresholdIsArmedAgainOnceTheChargeIsBackAboveIt) {
  Bench b(kAutoRecharge);
  ASSERT_GT(steps_until(
                b, [&] { return b.recharge(); }, 5000),
            0);
  b.step(100);  // charging at net 65 A: back above the threshold
  EXPECT_GT(b.battery().percentage, 0.49);
  b.r().get<c::BatteryRecharge>(b.model).charging = false;
  // Draining at 35 A, it falls below the threshold again and charging starts by itself.
  const double above = b.battery().charge - 0.49;
  const int k = steps_until(
      b, [&] { return b.recharge(); }, 5000);
  EXPECT_NEAR(k, above * 3600 / 35.0 / kDt, 2);
}

TEST(LinearBattery, ThresholdBelowTheInitialChargeStartsChargingAtTheFirstStep) {
  Bench b(
      cell("<initial_charge>0.2</initial_charge>\n<enable_recharge>true</enable_recharge>\n"
           "<charging_time>1</charging_time>\n<soc_threshold>0.3</soc_threshold>\n"));
  b.step();
  EXPECT_TRUE(b.recharge());
  b.step(3600);  // 1 A for 3.6 s = 0.001 A·h
  EXPECT_NEAR(b.battery().charge, 0.201, 1e-6);
}

TEST(LinearBattery, DrainStartsAndStopsOnCommand) {
  // Not draining before a start command (no start_draining, no joint command); 36 W + 70 W of
  // rotors at 0.7 efficiency = 136 W at 10 V = 13.6 A while draining.
  Bench b(cell("<power_load>36</power_load>\n"));
  b.r().add<c::RotorShaftPower>(b.model, c::RotorShaftPower{{70.0}});
  b.step(100);
  EXPECT_EQ(b.battery().charge, 1.0);
  EXPECT_FALSE(b.battery().draining);

  b.drain(Action::kStart);
  b.step(1000);                                                                 // 1 s
  EXPECT_EQ(b.r().get<c::BatteryDrainCommand>(b.model).action, Action::kNone);  // consumed
  EXPECT_TRUE(b.battery().draining);
  EXPECT_NEAR(b.battery().current, 13.6, 1e-9);
  EXPECT_NEAR(b.battery().charge, 1.0 - 13.6 * 1.0 / 3600, 13.6 * 2 * kDt / 3600);

  // Stopped (and not charging), Gazebo updates nothing: charge and current stay.
  b.drain(Action::kStop);
  b.step(20);
  EXPECT_FALSE(b.battery().draining);
  const double stopped = b.battery().charge;
  b.r().get<c::JointVelocity>(b.joint).data = {5.0};  // motion without a command: no drain
  b.step(1000);
  EXPECT_EQ(b.battery().charge, stopped);
  EXPECT_NEAR(b.battery().current, 13.6, 1e-9);
  EXPECT_FALSE(b.battery().draining);

  b.drain(Action::kStart);
  b.step(1000);
  EXPECT_NEAR(b.battery().charge, stopped - 13.6 / 3600, 13.6 * 2 * kDt / 3600);
}

// Gazebo's rule: without start_draining the battery starts draining at the first step a joint
// of the model has a non-zero velocity or force command — also after a stop message.
TEST(LinearBattery, JointCommandsStartDrainingAsGazebo) {
  Bench b(cell("<power_load>36</power_load>\n"));
  b.step(100);
  EXPECT_FALSE(b.battery().draining);
  b.r().add<c::JointVelocityCmd>(b.joint, c::JointVelocityCmd{{1e-3}});
  b.step();
  EXPECT_TRUE(b.battery().draining);
  EXPECT_LT(b.battery().charge, 1.0);
  b.drain(Action::kStop);
  b.step();
  EXPECT_TRUE(b.battery().draining) << "the joint command restarts it in the same step";

  Bench f(cell("<power_load>36</power_load>\n"));
  f.r().add<c::JointForceCmd>(f.joint, c::JointForceCmd{{0.0}});
  f.step(10);
  EXPECT_FALSE(f.battery().draining);
  f.r().get<c::JointForceCmd>(f.joint).data = {0.5};
  f.step();
  EXPECT_TRUE(f.battery().draining);

  Bench s(cell("<power_load>36</power_load>\n<start_draining>true</start_draining>\n"));
  s.step();
  EXPECT_TRUE(s.battery().draining);
  EXPECT_NEAR(s.battery().current, 3.6, 1e-9);
}

// Gazebo's options: invert_current_sign and fix_issue_225 change what the state topic says;
// start_on_motion (in Gazebo's demo world, read by neither) is accepted with a warning.
TEST(LinearBattery, GazeboPublishingOptionsAndStartOnMotion) {
  Bench plain(cell(""));
  EXPECT_FALSE(plain.r().get<c::BatteryTopic>(plain.model).invert_current);
  EXPECT_EQ(plain.r().get<c::BatteryTopic>(plain.model).percentage_scale, 1.0);
  Bench b(
      cell("<invert_current_sign>true</invert_current_sign>\n"
           "<fix_issue_225>true</fix_issue_225>\n"));
  EXPECT_TRUE(b.r().get<c::BatteryTopic>(b.model).invert_current);
  EXPECT_EQ(b.r().get<c::BatteryTopic>(b.model).percentage_scale, 100.0);
  testing::CapturedLog log;
  Bench m(cell("<power_load>36</power_load>\n<start_on_motion>true</start_on_motion>\n"));
  EXPECT_THAT(log.text(), HasSubstr("battery.sdf:16: LinearBattery: <start_on_motion> is not "
                                    "read by Gazebo's LinearBatteryPlugin"));
  m.step(10);
  EXPECT_FALSE(m.battery().draining);
}

TEST(LinearBattery, ResetReturnsToTheConfiguredState) {
  Bench b(
      cell("<initial_charge>0.5</initial_charge>\n<power_load>350</power_load>\n"
           "<enable_recharge>true</enable_recharge>\n"
           "<charging_time>0.01</charging_time>\n<soc_threshold>0.49</soc_threshold>\n"));
  auto run = [&] {
    b.step(50);
    const double idle = b.battery().charge;  // waiting for a joint command or a message
    b.drain(Action::kStart);
    const int k = steps_until(
        b, [&] { return b.recharge(); }, 5000);
    b.drain(Action::kStop);
    b.step(10);
    return std::tuple(idle, k, b.battery().charge, b.battery().draining);
  };
  const auto first = run();
  EXPECT_EQ(std::get<0>(first), 0.5);
  EXPECT_GT(std::get<1>(first), 1000);
  b.runner->reset_now();
  EXPECT_EQ(b.battery().charge, 0.5);
  EXPECT_FALSE(b.recharge());
  EXPECT_EQ(run(), first);
}

TEST(LinearBattery, BadRechargeAndDrainParametersAreErrorsWithTheirLine) {
  auto error = [](const std::string& params) {
    try {
      Bench b(params);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string recharge =
      cell("<enable_recharge>true</enable_recharge>\n<charging_time>1</charging_time>\n");
  // cell() is lines 11-14, the recharge lines 15-16: the next parameter is on line 17.
  EXPECT_EQ(error(recharge + "<soc_threshold>0.5</soc_threshold>\n"), "(no error)");
  EXPECT_THAT(error(recharge + "<soc_threshold>1.5</soc_threshold>\n"),
              AllOf(HasSubstr("battery.sdf:17"), HasSubstr("must be in [0, 1], found 1.5")));
  EXPECT_THAT(error(recharge + "<soc_threshold>-0.1</soc_threshold>\n"),
              AllOf(HasSubstr("battery.sdf:17"), HasSubstr("found -0.1")));
  EXPECT_THAT(error(recharge + "<soc_threshold>nan</soc_threshold>\n"),
              HasSubstr("battery.sdf:17"));
  EXPECT_THAT(error(recharge + "<soc_threshold>half</soc_threshold>\n"),
              HasSubstr("battery.sdf:17"));
  EXPECT_THAT(error(cell("<soc_threshold>0.5</soc_threshold>\n")),
              AllOf(HasSubstr("battery.sdf:15"),
                    HasSubstr("<soc_threshold> needs <enable_recharge>true</enable_recharge>")));
  EXPECT_THAT(error(cell("<power_draining_topic> </power_draining_topic>\n")),
              AllOf(HasSubstr("battery.sdf:15"), HasSubstr("<power_draining_topic> is empty")));
  EXPECT_THAT(error(cell("<stop_power_draining_topic>a b</stop_power_draining_topic>\n")),
              AllOf(HasSubstr("battery.sdf:15"), HasSubstr("'a b' is not a valid topic name")));
  EXPECT_THAT(error(cell("<power_draining_topic>/go</power_draining_topic>\n"
                         "<power_draining_topic>go</power_draining_topic>\n")),
              AllOf(HasSubstr("battery.sdf:16"), HasSubstr("'/go' is already used by "
                                                           "<power_draining_topic> at "
                                                           "battery.sdf:15")));
  EXPECT_THAT(error(cell("<power_draining_topic>/x</power_draining_topic>\n"
                         "<stop_power_draining_topic>/x</stop_power_draining_topic>\n")),
              AllOf(HasSubstr("battery.sdf:16"), HasSubstr("<stop_power_draining_topic> '/x' "
                                                           "is already used")));
  EXPECT_THAT(error(recharge + "<power_draining_topic>/model/car/battery/b/recharge/start"
                               "</power_draining_topic>\n"),
              AllOf(HasSubstr("battery.sdf:17"), HasSubstr("the recharge start topic")));
  // Repeating the draining topics is allowed (any other parameter twice is not).
  EXPECT_EQ(error(cell("<power_draining_topic>/a</power_draining_topic>\n"
                       "<power_draining_topic>/b</power_draining_topic>\n"
                       "<stop_power_draining_topic>/c</stop_power_draining_topic>\n"
                       "<stop_power_draining_topic>/d</stop_power_draining_topic>\n")),
            "(no error)");
}

TEST(LinearBattery, DrainTopicsAreMadeAbsoluteForTransport) {
  Bench b(
      cell("<power_draining_topic>start/a</power_draining_topic>\n"
           "<power_draining_topic>/start/b</power_draining_topic>\n"
           "<stop_power_draining_topic>stop</stop_power_draining_topic>\n"));
  const auto& t = b.r().get<c::BatteryDrainTopics>(b.model);
  EXPECT_EQ(t.start, (std::vector<std::string>{"/start/a", "/start/b"}));
  EXPECT_EQ(t.stop, (std::vector<std::string>{"/stop"}));
  Bench none(cell(""));
  EXPECT_FALSE(none.r().has<c::BatteryDrainTopics>(none.model));
}

// Gazebo's linear_battery_demo.sdf (../shared), unmodified, loaded and run. vehicle_blue gives
// <power_load> twice (6.6, then 2.1): Gazebo uses the first, and so does Kestrel (with a warning).
TEST(LinearBattery, GazeboDemoWorldRunsUnmodified) {
  const auto file =
      std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz" / "linear_battery_demo.sdf";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "corpus world not found: " << file;
  std::stringstream text;
  text << std::ifstream(file).rdbuf();
  testing::LoadedWorld w(text.str());
  const ecs::Entity green = w.find("default::vehicle_green");
  const ecs::Entity blue = w.find("default::vehicle_blue");
  w.step(500);
  // As in Gazebo, nothing commands vehicle_blue's wheel joints (Kestrel has no DiffDrive, and
  // Gazebo's would command 0 without a twist), so it does not drain until told to.
  EXPECT_FALSE(w.r().get<c::Battery>(blue).draining);
  EXPECT_EQ(w.r().get<c::Battery>(blue).charge, 1.2009);
  w.r().get<c::BatteryDrainCommand>(blue).action = Action::kStart;
  w.step(10000);
  // 6.6 W (its first <power_load>) at 12.592 V, 1.2009 A·h, no resistance: i = 6.6 W / V.
  const auto& b = w.r().get<c::Battery>(blue);
  EXPECT_TRUE(b.draining);
  EXPECT_LT(b.charge, 1.2009);
  EXPECT_NEAR(b.current, 6.6 / b.voltage, 0.01 * 6.6 / b.voltage) << "the first <power_load>";
  // vehicle_green (2.5 A·h, soc_threshold 0.51, charging 2.5 A·h / 3 h): at 48 % it starts
  // charging by itself; 0.83 A exceeds its 2.1 W load (~0.66 A at Voc = 4.2 − 2·0.52 V).
  EXPECT_FALSE(w.r().get<c::BatteryRecharge>(green).charging);
  w.r().get<c::Battery>(green).charge = 0.48 * 2.5;
  w.r().get<c::BatteryDrainCommand>(green).action = Action::kStart;
  w.step(1);
  EXPECT_TRUE(w.r().get<c::BatteryRecharge>(green).charging);
  w.step(20000);  // 20 s: the smoothed current (tau 2 s) has settled
  const auto g = w.r().get<c::Battery>(green);
  EXPECT_TRUE(g.draining);
  EXPECT_TRUE(g.charging);
  EXPECT_GT(g.charge, 0.48 * 2.5);
  // Gazebo's load current P / V (terminal voltage, R = 0.07 Ω), minus the charging current.
  EXPECT_NEAR(g.current, 2.1 / g.voltage - 2.5 / 3, 1e-3);
  EXPECT_NEAR(g.voltage, g.open_circuit_voltage - 0.07 * g.current, 1e-9);
  // A drain stop leaves only the charging current.
  w.r().get<c::BatteryDrainCommand>(green).action = Action::kStop;
  w.step(20000);
  EXPECT_FALSE(w.r().get<c::Battery>(green).draining);
  EXPECT_NEAR(w.r().get<c::Battery>(green).current, -2.5 / 3, 1e-3);
}

}  // namespace
}  // namespace kestrel::systems

// ---- gz-sim's battery_plugin integration test, ported ------------------------------------
// Its world, test/worlds/battery.sdf, is not in ../shared: the two batteries below are its two
// LinearBatteryPlugin blocks (same parameters) on two small bodies resting on the ground.

namespace kestrel::systems {
namespace {

constexpr const char* kGazeboBatteryWorld = R"(<?xml version="1.0"?>
<sdf version="1.6">
  <world name="default">
    <model name="ground_plane"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal>
        <size>100 100</size></plane></geometry></collision></link>
    </model>
    <model name="linear_battery_demo_model">
      <pose>0 0 0.05 0 0 0</pose>
      <link name="body">
        <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
        </inertial>
        <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
      </link>
      <plugin filename="gz-sim-linearbatteryplugin-system"
              name="gz::sim::systems::LinearBatteryPlugin">
        <battery_name>linear_battery</battery_name>
        <voltage>12.592</voltage>
        <open_circuit_voltage_constant_coef>12.694</open_circuit_voltage_constant_coef>
        <open_circuit_voltage_linear_coef>-3.1424</open_circuit_voltage_linear_coef>
        <initial_charge>1.1665</initial_charge>
        <capacity>1.2009</capacity>
        <resistance>0.061523</resistance>
        <smooth_current_tau>1.9499</smooth_current_tau>
        <power_load>500</power_load>
        <start_draining>true</start_draining>
      </plugin>
    </model>
    <model name="linear_battery_demo_model_with_topics">
      <pose>1 0 0.05 0 0 0</pose>
      <link name="body">
        <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
        </inertial>
        <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
      </link>
      <plugin filename="ignition-gazebo-linearbatteryplugin-system"
              name="ignition::gazebo::systems::LinearBatteryPlugin">
        <battery_name>linear_battery_topics</battery_name>
        <voltage>12.592</voltage>
        <open_circuit_voltage_constant_coef>12.694</open_circuit_voltage_constant_coef>
        <open_circuit_voltage_linear_coef>-3.1424</open_circuit_voltage_linear_coef>
        <initial_charge>1.2009</initial_charge>
        <capacity>1.2009</capacity>
        <resistance>0.061523</resistance>
        <smooth_current_tau>1.9499</smooth_current_tau>
        <power_load>500</power_load>
        <power_draining_topic>/battery/discharge</power_draining_topic>
        <stop_power_draining_topic>/battery/stop_discharge</stop_power_draining_topic>
      </plugin>
    </model>
  </world>
</sdf>)";

// battery_plugin.cc SingleBattery: the state of charge is > 0 from the first step and < 1 after
// 100 steps of its 500 W load (start_draining).
TEST(GazeboBatteryPluginTest, SingleBattery) {
  testing::LoadedWorld w(kGazeboBatteryWorld);
  const auto model = w.find("default::linear_battery_demo_model");
  w.step(1);
  EXPECT_GT(w.r().get<c::Battery>(model).percentage, 0.0);
  w.step(99);
  EXPECT_LT(w.r().get<c::Battery>(model).percentage, 1.0);
  EXPECT_TRUE(w.r().get<c::Battery>(model).draining);
}

// battery_plugin.cc PowerDrainTopic: no drain for 100 steps (state of charge exactly 1); a
// message on /battery/discharge drains it; one on /battery/stop_discharge stops it, and the
// state of charge then stays exactly where it was. (The messages are what transport turns into
// BatteryDrainCommand; src/transport/battery_bridge_test.cc sends them through transport.)
TEST(GazeboBatteryPluginTest, PowerDrainTopic) {
  testing::LoadedWorld w(kGazeboBatteryWorld);
  const auto model = w.find("default::linear_battery_demo_model_with_topics");
  EXPECT_EQ(w.r().get<c::BatteryDrainTopics>(model).start,
            std::vector<std::string>{"/battery/discharge"});
  EXPECT_EQ(w.r().get<c::BatteryDrainTopics>(model).stop,
            std::vector<std::string>{"/battery/stop_discharge"});
  w.step(100);
  EXPECT_DOUBLE_EQ(w.r().get<c::Battery>(model).percentage, 1.0);
  w.r().get<c::BatteryDrainCommand>(model).action = Action::kStart;
  w.step(100);
  const double soc = w.r().get<c::Battery>(model).percentage;
  EXPECT_LT(soc, 1.0);
  w.r().get<c::BatteryDrainCommand>(model).action = Action::kStop;
  w.step(100);
  EXPECT_DOUBLE_EQ(w.r().get<c::Battery>(model).percentage, soc);
}

// battery_plugin.cc SingleBatteryMultipleConsumers and the thruster consumer test add
// components::BatteryPowerLoad consumers, which Kestrel does not have (its consumers are
// power_load and the rotors): not ported.

}  // namespace
}  // namespace kestrel::systems
