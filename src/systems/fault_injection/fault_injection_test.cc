// FaultInjection and LinearBattery on a hovering X3-class quadcopter.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/world/setup.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ::testing::HasSubstr;
using testing::LoadedWorld;
using testing::QuadOptions;

std::string faults(const std::string& body) {
  return R"(<plugin filename="kestrel-fault-injection-system"
                    name="kestrel::systems::FaultInjection">)" +
         body + "</plugin>";
}

constexpr const char* kBattery = R"(
      <plugin filename="gz-sim-linearbatteryplugin-system"
              name="gz::sim::systems::LinearBatteryPlugin">
        <battery_name>main</battery_name>
        <voltage>16.8</voltage>
        <open_circuit_voltage_constant_coef>16.8</open_circuit_voltage_constant_coef>
        <open_circuit_voltage_linear_coef>-2.4</open_circuit_voltage_linear_coef>
        <capacity>5</capacity>
        <resistance>0</resistance>
        <smooth_current_tau>0.001</smooth_current_tau>
        <motor_efficiency>0.7</motor_efficiency>
      </plugin>)";

struct Hover {
  explicit Hover(const std::string& world_extra, const std::string& model_extra = "") {
    QuadOptions o;
    o.z = 5;
    o.velocity_control = true;
    o.world_extra = world_extra;
    o.model_extra = model_extra;
    w = std::make_unique<LoadedWorld>(testing::quad_world(o));
    model = w->find("w::quad");
    base = w->find("w::quad::base_link");
    hold();
  }
  // A zero twist (as if received on the controller's topic): hold the current velocity.
  void hold() { w->r().set(model, c::TwistCommand{{0, 0, 0}, {0, 0, 0}, true}); }
  double z() { return w->r().get<c::WorldPose>(base).value.Pos().Z(); }
  std::unique_ptr<LoadedWorld> w;
  ecs::Entity model, base;
};

// The error building a Hover with these extras gives, or "(no error)".
std::string hover_error(const std::string& world_extra, const std::string& model_extra = "") {
  try {
    Hover h(world_extra, model_extra);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FaultInjection, MotorFailureInHoverLosesAltitudeAndIsLogged) {
  Hover h(faults(R"(<fault time="3" type="rotor" model="quad" rotor="1" efficiency="0"/>)"));
  h.w->step(3000);
  const double z_before = h.z();  // the velocity controller holds vz = 0 (not the altitude)
  EXPECT_NEAR(h.w->r().get<c::WorldLinearVelocity>(h.base).value.Z(), 0.0, 0.01);
  EXPECT_TRUE(h.w->r().get<c::FaultLog>(h.w->runner->world()).events.empty());
  h.w->step(1);
  const auto& log = h.w->r().get<c::FaultLog>(h.w->runner->world()).events;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].time, from_seconds(3.0));
  EXPECT_EQ(log[0].description, "rotor 1 of w::quad efficiency 0");
  h.w->step(2000);
  EXPECT_LT(h.z(), z_before - 1.0);
  EXPECT_LT(h.w->r().get<c::RotorVelocities>(h.model).velocity[1], 1.0);
}

TEST(FaultInjection, PartialEfficiencyLossIsCompensatedByTheController) {
  // 10 % loss on one rotor: the controller raises that rotor's speed and stays level; with
  // proportional velocity control (no integral) it sinks slowly instead of falling.
  Hover h(faults(R"(<fault time="2" type="rotor" model="quad" rotor="0" efficiency="0.9"/>)"));
  h.w->step(2000);
  const double z_before = h.z();
  h.w->step(3000);
  EXPECT_NEAR(h.z(), z_before, 1.0);
  const auto up = h.w->r().get<c::WorldPose>(h.base).value.Rot().RotateVector({0, 0, 1});
  EXPECT_GT(up.Z(), std::cos(5 * M_PI / 180));
  const auto& v = h.w->r().get<c::RotorVelocities>(h.model).velocity;
  EXPECT_GT(v[0], v[2]);
}

TEST(FaultInjection, GustAndDurationAreAppliedAndReverted) {
  Hover h(faults(R"(<fault time="0.5" duration="1" type="wind_gust" velocity="8 0 0"/>)"));
  h.w->step(1000);
  EXPECT_EQ(h.w->r().get<c::WindGust>(h.w->runner->world()).linear_velocity,
            ignition::math::Vector3d(8, 0, 0));
  h.w->step(600);
  EXPECT_EQ(h.w->r().get<c::WindGust>(h.w->runner->world()).linear_velocity,
            ignition::math::Vector3d::Zero);
  const auto& log = h.w->r().get<c::FaultLog>(h.w->runner->world()).events;
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].time, from_seconds(1.5));
  EXPECT_THAT(log[1].description, HasSubstr("end of wind gust 8 0 0"));
}

TEST(FaultInjection, BadFaultsAreErrors) {
  auto error = [](const std::string& f) { return hover_error(faults(f)); };
  EXPECT_THAT(error(R"(<fault time="1" type="meteor"/>)"), HasSubstr("type 'meteor' is unknown"));
  EXPECT_THAT(error(R"(<fault time="1" type="rotor" model="ghost" rotor="0" efficiency="0"/>)"),
              HasSubstr("model 'ghost' is not a model of the world"));
  EXPECT_THAT(error(R"(<fault type="rotor" model="quad" rotor="0" efficiency="0"/>)"),
              HasSubstr("missing required attribute 'time'"));
  EXPECT_THAT(error(R"(<fault time="1" type="gnss_loss" model="quad"/>)"),
              HasSubstr("has no navsat sensor"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_stop" sensor="quad::base_link::imu"/>)"),
              HasSubstr("sensor 'quad::base_link::imu' is not a sensor"));
}

// The line of the first occurrence of `marker` in `text` (1-based).
long line_of(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
}

TEST(FaultInjection, UnknownAttributesAreErrorsListingTheAcceptedOnes) {
  auto error = [](const std::string& f) { return hover_error(faults(f)); };
  // A misspelt duration made the fault permanent.
  EXPECT_THAT(
      error(R"(<fault time="1" type="rotor" model="quad" rotor="1" efficiency="0" duraton="3"/>)"),
      ::testing::MatchesRegex(".*kestrel_mc_[0-9_]+\\.sdf:[0-9]+: <fault> has unknown attribute "
                              "'duraton' \\(accepted: type, time, duration, model, rotor, "
                              "efficiency\\)"));
  // Accepted attributes depend on the type.
  EXPECT_THAT(error(R"(<fault time="1" type="wind_gust" velocity="1 0 0" model="quad"/>)"),
              HasSubstr("<fault> has unknown attribute 'model' (accepted: type, time, duration, "
                        "velocity)"));
  EXPECT_THAT(error(R"(<fault time="1" type="battery_drop" model="quad" charge="0.1" x="0"/>)"),
              HasSubstr("<fault> has unknown attribute 'x'"));
  EXPECT_EQ(error(R"(<fault time="1" type="wind_gust" velocity="1 0 0" duration="2"/>)"),
            "(no error)");
}

// A static mast with an IMU (noise-free), a barometer (noisy), a contact sensor, a sonar (a type
// no fault acts on), a noisy camera, a noise-free gpu_lidar and a logical camera, the systems of
// the first three, and FaultInjection with `faults`.
std::string mast(const std::string& faults_xml) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
  <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
  <plugin filename="gz-sim-air-pressure-system" name="gz::sim::systems::AirPressure"/>
  <plugin filename="gz-sim-contact-system" name="gz::sim::systems::Contact"/>
  )" + faults(faults_xml) +
         R"(<model name="mast"><static>true</static><link name="l">
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
    <sensor name="imu" type="imu"/>
    <sensor name="baro" type="air_pressure"><air_pressure><pressure>
      <noise type="gaussian"><stddev>2</stddev></noise></pressure></air_pressure></sensor>
    <sensor name="touch" type="contact"><contact><collision>c</collision></contact></sensor>
    <sensor name="sonar" type="sonar"/>
    <sensor name="cam" type="camera"><camera><image><width>8</width><height>6</height></image>
      <noise><type>gaussian</type><stddev>0.01</stddev></noise></camera></sensor>
    <sensor name="scan" type="gpu_lidar"><lidar><scan><horizontal><samples>4</samples>
      </horizontal></scan><range><min>0.1</min><max>5</max></range></lidar></sensor>
    <sensor name="eye" type="logical_camera"><logical_camera/></sensor>
  </link></model></world></sdf>)";
}

TEST(FaultInjection, SensorFaultsASensorCannotTakeAreErrorsAtConfigure) {
  auto error = [](const std::string& f) { return testing::load_error(mast(f)); };
  const std::string at = "kestrel_mc_[0-9_]+\\.sdf:[0-9]+: ";
  // The issue's kind of mistake: a 3-vector bias on a scalar sensor.
  EXPECT_THAT(
      error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::baro" bias="0 0 5"/>)"),
      ::testing::MatchesRegex(".*" + at +
                              "<fault type=\"sensor_bias\">: sensor 'mast::l::baro' \\(type "
                              "air_pressure\\) takes a bias of one number, added to its "
                              "pressure \\[Pa\\]; found '0 0 5'"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::imu" bias="5"/>)"),
              HasSubstr("sensor 'mast::l::imu' (type imu) takes a bias of three numbers 'x y z', "
                        "added to its linear_acceleration, sensor frame [m/s²]; found '5'"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::touch" bias="1"/>)"),
              HasSubstr("sensor 'mast::l::touch' (type contact) takes no bias (only "
                        "sensor_stop)"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_noise" sensor="mast::l::touch" scale="2"/>)"),
              HasSubstr("sensor 'mast::l::touch' (type contact) has no noise to scale"));
  // A noise fault on a sensor without noise would change nothing.
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_noise" sensor="mast::l::imu" scale="2"/>)"),
              ::testing::MatchesRegex(".*" + at +
                                      "<fault type=\"sensor_noise\">: sensor 'mast::l::imu' "
                                      "\\(.*\\.sdf:[0-9]+\\) declares no <noise "
                                      "type=\"gaussian\"> or \"gaussian_quantized\": a noise "
                                      "scale would multiply nothing"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_stop" sensor="mast::l::sonar"/>)"),
              HasSubstr("sensor 'mast::l::sonar' is a 'sonar' sensor: sensor faults do not act "
                        "on that type (they act on: imu, magnetometer, air_pressure, altimeter, "
                        "navsat, gps, air_speed, force_torque, contact, camera, depth_camera, "
                        "depth, rgbd_camera, rgbd, segmentation, segmentation_camera, "
                        "boundingbox_camera, boundingbox, thermal_camera, thermal, gpu_lidar, "
                        "gpu_ray, lidar, ray, cpu_lidar, logical_camera)"));
  // The rendering sensors take a stop and (where they have noise) a noise scale, no bias.
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::cam" bias="0.1"/>)"),
              HasSubstr("sensor 'mast::l::cam' (type camera) takes no bias (only sensor_stop "
                        "and sensor_noise)"));
  EXPECT_THAT(
      error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::scan" bias="1 2 3"/>)"),
      HasSubstr("sensor 'mast::l::scan' (type gpu_lidar) takes no bias (only sensor_stop and "
                "sensor_noise)"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_noise" sensor="mast::l::scan" scale="2"/>)"),
              ::testing::AllOf(HasSubstr("sensor 'mast::l::scan' ("),
                               HasSubstr("declares no <noise type=\"gaussian\">")));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_noise" sensor="mast::l::eye" scale="2"/>)"),
              HasSubstr("sensor 'mast::l::eye' (type logical_camera) has no noise to scale"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::eye" bias="1"/>)"),
              HasSubstr("sensor 'mast::l::eye' (type logical_camera) takes no bias (only "
                        "sensor_stop)"));
  EXPECT_THAT(error(R"(<fault time="1" type="sensor_bias" sensor="mast::l::imu" bias="0 0 nan"/>)"),
              HasSubstr("'bias' must be three numbers"));
  // What each type takes is accepted.
  for (const char* ok : {
           R"(<fault time="1" type="sensor_bias" sensor="mast::l::baro" bias="120"/>)",
           R"(<fault time="1" type="sensor_bias" sensor="mast::l::imu" bias="0 0 5"/>)",
           R"(<fault time="1" type="sensor_noise" sensor="mast::l::baro" scale="3"/>)",
           R"(<fault time="1" type="sensor_stop" sensor="mast::l::touch" duration="1"/>)",
           // camera noise is spelt <noise><type>gaussian</type> (camera.sdf)
           R"(<fault time="1" type="sensor_noise" sensor="mast::l::cam" scale="3"/>)",
           R"(<fault time="1" type="sensor_stop" sensor="mast::l::scan"/>)",
           R"(<fault time="1" type="sensor_stop" sensor="mast::l::eye"/>)",
       }) {
    EXPECT_EQ(error(ok), "(no error)") << ok;
  }
}

TEST(FaultInjection, SensorFaultsAreWrittenOnTheSensorAndRevertedAfterTheirDuration) {
  LoadedWorld w(mast(R"(
      <fault time="0.1" duration="0.2" type="sensor_bias" sensor="mast::l::baro" bias="120"/>
      <fault time="0.2" duration="0.2" type="sensor_noise" sensor="mast::l::baro" scale="3"/>
      <fault time="0.3" duration="0.1" type="sensor_stop" sensor="mast::l::imu"/>)"));
  const ecs::Entity baro = w.find("w::mast::l::baro"), imu = w.find("w::mast::l::imu");
  auto fault = [&](ecs::Entity e) {
    const auto* f = w.r().try_get<c::SensorFault>(e);
    return f ? *f : c::SensorFault{};
  };
  w.step(150);
  EXPECT_EQ(fault(baro).bias, ignition::math::Vector3d(120, 0, 0));
  w.step(100);
  EXPECT_EQ(fault(baro).noise_scale, 3.0);
  w.step(100);
  EXPECT_EQ(fault(baro).bias, ignition::math::Vector3d::Zero);
  EXPECT_TRUE(fault(imu).stopped);
  w.step(100);
  EXPECT_EQ(fault(baro).noise_scale, 1.0);
  EXPECT_FALSE(fault(imu).stopped);
  const auto& log = w.r().get<c::FaultLog>(w.runner->world()).events;
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0].description, "sensor w::mast::l::baro bias 120");
  // The effect on the readings: src/sensors/common/sensor_fault_test.cc (every type and fault),
  // the topics (src/transport/sensor_fault_topic_test.cc) and the autopilots
  // (src/sitl/bridge_fault_test.cc).
}

TEST(FaultInjection, RotorNoMotorHasStopsTheRunAtItsFirstStep) {
  const std::string bad =
      R"(<fault time="30" type="rotor" model="quad" rotor="9" efficiency="0"/>)";
  Hover h(faults(bad));  // the motors configure after FaultInjection: checked at the first step
  const std::string sdf = testing::quad_world([&] {
    QuadOptions o;
    o.z = 5;
    o.velocity_control = true;
    o.world_extra = faults(bad);
    return o;
  }());
  try {
    h.w->step();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.where(), ::testing::EndsWith(fmt::format(".sdf:{}", line_of(sdf, "<fault "))));
    EXPECT_THAT(e.what(), HasSubstr("<fault type=\"rotor\">: model 'w::quad' has no rotor 9: no "
                                    "MulticopterMotorModel of it has <actuator_number> 9 (its "
                                    "motors: 0 (joint 'rotor_0_joint'), 1 (joint "
                                    "'rotor_1_joint'), 2 (joint 'rotor_2_joint'), 3 (joint "
                                    "'rotor_3_joint'))"));
  }
  Hover ok(faults(R"(<fault time="30" type="rotor" model="quad" rotor="3" efficiency="0"/>)"));
  EXPECT_NO_THROW(ok.w->step(10));
}

TEST(FaultInjection, CommandedFaultIsAppliedAtTheNextStepAndLogged) {
  Hover h(faults(""));
  const ecs::Entity world = h.w->runner->world();
  EXPECT_EQ(h.w->r().get<c::FaultCommandTopic>(world).topic, "/world/w/fault");
  h.w->step(2000);
  const double z_before = h.z();
  // As transport would set it: no time (now), a duration, and a second fault in the same text.
  h.w->r().set(world, c::FaultCommand{R"(<fault type="rotor" model="quad" rotor="1" efficiency="0"/>
      <fault type="wind_gust" velocity="3 0 0" duration="0.5"/>)",
                                      "topic /world/w/fault"});
  h.w->step(1);
  const auto& log = h.w->r().get<c::FaultLog>(world).events;
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].time, from_seconds(2.0));  // the step after the command arrived
  EXPECT_EQ(log[0].description, "rotor 1 of w::quad efficiency 0");
  EXPECT_EQ(h.w->r().get<c::RotorFaults>(h.model).efficiency[1], 0.0);
  EXPECT_TRUE(h.w->r().get<c::FaultCommand>(world).text.empty());  // consumed
  h.w->step(2000);
  EXPECT_LT(h.z(), z_before - 1.0);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[2].time, from_seconds(2.5));
  EXPECT_THAT(log[2].description, HasSubstr("end of wind gust 3 0 0"));
}

TEST(FaultInjection, BadCommandedFaultsChangeNothing) {
  Hover h(faults(R"(<fault time="5" type="wind_gust" velocity="1 0 0"/>)"), kBattery);
  const ecs::Entity world = h.w->runner->world();
  h.w->step(100);
  for (const char* bad : {
           R"(<fault type="rotor" model="quad" rotor="4" efficiency="0"/>)",  // 4 rotors: 0..3
           R"(<fault type="wind_gust" velocity="1 0 0" duraton="1"/>)",       // misspelt
           R"(<fault type="rotor" model="ghost" rotor="0" efficiency="0"/>)",
           R"(<fault type="meteor"/>)",
           R"(<fault type="rotor" model="quad" rotor="0" efficiency="0"/><fault type="x"/>)",
           R"(<fault type="rotor" model="quad" rotor="0" efficiency="0")",  // malformed XML
           R"(<nonsense/>)",
           R"(hello)",
       }) {
    h.w->r().set(world, c::FaultCommand{bad, "test"});
    h.w->step(1);
    EXPECT_TRUE(h.w->r().get<c::FaultLog>(world).events.empty()) << bad;
    EXPECT_FALSE(h.w->r().has<c::RotorFaults>(h.model)) << bad;
  }
  h.w->step(5000);  // the world file's schedule still runs
  EXPECT_EQ(h.w->r().get<c::FaultLog>(world).events.size(), 1u);
}

TEST(FaultInjection, ResetForgetsCommandedFaults) {
  Hover h(faults(""));
  const ecs::Entity world = h.w->runner->world();
  h.w->r().set(world,
               c::FaultCommand{R"(<fault time="1" type="wind_gust" velocity="3 0 0"/>)", "test"});
  h.w->step(1);
  h.w->runner->request_reset();
  h.w->step(1500);
  EXPECT_TRUE(h.w->r().get<c::FaultLog>(world).events.empty());
}

TEST(LinearBattery, HoverEnergyMatchesShaftPowerOverEfficiency) {
  Hover h("", kBattery);
  EXPECT_EQ(h.w->r().get<c::BatteryTopic>(h.model).topic, "/model/quad/battery/main/state");
  h.w->step(2000);  // settle
  const double e0 = h.w->r().get<c::Battery>(h.model).energy_used;
  h.w->step(5000);
  const auto& b = h.w->r().get<c::Battery>(h.model);
  // Hover: each rotor T = m·g/4, shaft power kM·T·ω with ω = sqrt(T/kF); electrical = /0.7.
  const double t = 1.52 * 9.8 / 4, w = std::sqrt(t / testing::kMotorConstant);
  const double p = 4 * testing::kMomentConstant * t * w / 0.7;
  EXPECT_NEAR((b.energy_used - e0) / 5.0, p, 0.03 * p);
  EXPECT_NEAR(b.current, p / b.voltage, 0.05 * p / b.voltage);
  EXPECT_LT(b.charge, 5.0);
  EXPECT_NEAR(b.open_circuit_voltage, 16.8 - 2.4 * (1 - b.charge / 5), 1e-9);
  EXPECT_FALSE(b.empty);
}

TEST(LinearBattery, BatteryDropToZeroEmptiesItAndTheVehicleFalls) {
  Hover h(faults(R"(<fault time="2" type="battery_drop" model="quad" charge="0"/>)"), kBattery);
  h.w->step(2000);
  const double z = h.z();
  h.w->step(1500);
  EXPECT_TRUE(h.w->r().get<c::Battery>(h.model).empty);
  EXPECT_LT(h.z(), z - 2.0);
}

// kBattery with `extra` inside the plugin.
std::string battery(const std::string& extra) {
  std::string b = kBattery;
  b.insert(b.rfind("</plugin>"), extra);
  return b;
}

// As Gazebo's: no drain (not even power_load) before a joint of the model is commanded; the
// motors command their rotor joints once the controller has a twist.
TEST(LinearBattery, DrainsFromTheFirstRotorCommand) {
  QuadOptions o;
  o.z = 5;
  o.velocity_control = true;
  o.model_extra = battery("<power_load>10</power_load>");
  LoadedWorld w(testing::quad_world(o));
  const auto model = w.find("w::quad");
  w.step(1000);  // no twist: rotors at rest, falling
  EXPECT_FALSE(w.r().get<c::Battery>(model).draining);
  EXPECT_EQ(w.r().get<c::Battery>(model).charge, 5.0);
  EXPECT_EQ(w.r().get<c::Battery>(model).energy_used, 0.0);
  w.r().set(model, c::TwistCommand{{0, 0, 0}, {0, 0, 0}, true});
  w.step(1000);
  EXPECT_TRUE(w.r().get<c::Battery>(model).draining);
  EXPECT_LT(w.r().get<c::Battery>(model).charge, 5.0);
  EXPECT_GT(w.r().get<c::Battery>(model).energy_used, 10.0 * 0.5);  // at least the 10 W
}

TEST(LinearBattery, RechargeAddsCapacityOverChargingTimeUntilFull) {
  // 5 A·h over a 1 h charging time: 5 A. Rotors still and no other load.
  Hover h("", battery("<initial_charge>2.5</initial_charge><enable_recharge>true"
                      "</enable_recharge><charging_time>1</charging_time>"));
  EXPECT_EQ(h.w->r().get<c::BatteryRechargeTopic>(h.model).start,
            "/model/quad/battery/main/recharge/start");
  EXPECT_EQ(h.w->r().get<c::BatteryRechargeTopic>(h.model).stop,
            "/model/quad/battery/main/recharge/stop");
  h.w->r().get<c::VelocityControlEnable>(h.model).value = false;
  h.w->step(100);
  const double q0 = h.w->r().get<c::Battery>(h.model).charge;
  EXPECT_EQ(q0, 2.5);
  h.w->r().set(h.model, c::BatteryRecharge{true});
  h.w->step(3600);  // 3.6 s at 5 A = 0.005 A·h (current smoothing: tau 1 ms)
  const auto& b = h.w->r().get<c::Battery>(h.model);
  EXPECT_NEAR(b.charge - q0, 0.005, 0.005 * 0.01);
  EXPECT_NEAR(b.current, -5.0, 1e-6);
  EXPECT_GT(b.voltage, 16.8 - 2.4 * 0.5 - 1e-9);  // Voc rises with the charge
  h.w->r().set(h.model, c::BatteryRecharge{false});
  h.w->step(10);
  const double q1 = h.w->r().get<c::Battery>(h.model).charge;
  h.w->step(1000);  // only the smoothed current's tail (< 3e-4 A after 10 ms) still charges
  EXPECT_NEAR(h.w->r().get<c::Battery>(h.model).charge, q1, 1e-9);
}

TEST(LinearBattery, RechargeStopsAtCapacity) {
  Hover h("", battery("<initial_charge>4.9999</initial_charge><enable_recharge>true"
                      "</enable_recharge><charging_time>0.01</charging_time>"));
  h.w->r().get<c::VelocityControlEnable>(h.model).value = false;
  h.w->r().set(h.model, c::BatteryRecharge{true});
  h.w->step(2000);  // 500 A for 2 s would be 0.28 A·h
  EXPECT_EQ(h.w->r().get<c::Battery>(h.model).charge, 5.0);
  EXPECT_EQ(h.w->r().get<c::Battery>(h.model).percentage, 1.0);
}

TEST(LinearBattery, UnsupportedOrAmbiguousOptionsAreErrors) {
  auto error = [](const std::string& extra) { return hover_error("", battery(extra)); };
  EXPECT_EQ(error("<fix_issue_225>true</fix_issue_225>"), "(no error)");
  EXPECT_THAT(error("<fix_issue_225>false</fix_issue_225>"), HasSubstr("wrong drain rate"));
  EXPECT_THAT(error("<soc_threshold>0.5</soc_threshold>"),
              HasSubstr("<soc_threshold> needs <enable_recharge>true</enable_recharge>"));
  // A repeated parameter is Gazebo's first-wins, with a warning (linear_battery_test).
  EXPECT_EQ(error("<power_load>1</power_load><power_load>2</power_load>"), "(no error)");
  EXPECT_THAT(error("<charging_time>3</charging_time>"),
              HasSubstr("<charging_time> needs <enable_recharge>true</enable_recharge>"));
  EXPECT_THAT(error("<enable_recharge>true</enable_recharge>"), HasSubstr("charging_time"));
  EXPECT_THAT(error("<start_on_motion>maybe</start_on_motion>"), HasSubstr("start_on_motion"));
}

TEST(LinearBattery, TwoBatteriesOfOneNameOnOneModelAreAnErrorNamingBoth) {
  auto error = [](const std::string& model_extra) { return hover_error("", model_extra); };
  // Energy was drained twice, silently.
  EXPECT_THAT(error(std::string(kBattery) + kBattery),
              ::testing::MatchesRegex(
                  ".*kestrel_mc_[0-9_]+\\.sdf:[0-9]+: model 'w::quad' declares a second "
                  "LinearBattery with <battery_name> 'main' \\(the first is at "
                  ".*kestrel_mc_[0-9_]+\\.sdf:[0-9]+\\).*"));
  std::string other = kBattery;
  other.replace(other.find("<battery_name>main"), 18, "<battery_name>aux");
  EXPECT_EQ(error(std::string(kBattery) + other), "(no error)");  // different names: allowed
}

TEST(LinearBattery, GazeboDemoWorldConfigures) {
  const auto file =
      std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz" / "linear_battery_demo.sdf";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "corpus world not found: " << file;
  std::string what = "(no error)";
  try {
    sim::Runner runner(sim::Runner::Options{});
    world::load_world_into_runner(file, runner);
    runner.configure();
  } catch (const std::exception& e) {
    what = e.what();
  }
  // Unmodified: vehicle_blue's second <power_load> is a warning (the first is used, as in
  // Gazebo); vehicle_green's soc_threshold and recharge options are supported.
  EXPECT_EQ(what, "(no error)");
}

}  // namespace
}  // namespace kestrel::systems
