#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using testing::TestWorld;

std::string world(const std::string& model_pose, const std::string& imu_block,
                  const std::string& sensor_pose = "0 0 0 0 0 0", double rate = 100) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>
    <model name="m"><static>true</static><pose>)" +
         model_pose + R"(</pose><link name="l">
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
      <sensor name="imu" type="imu"><pose>)" +
         sensor_pose + "</pose><update_rate>" + std::to_string(rate) + "</update_rate>" +
         imu_block + R"(</sensor></link></model></world></sdf>)";
}

void expect_near(const Vector3d& a, const Vector3d& b, double tol) {
  EXPECT_NEAR(a.X(), b.X(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Y(), b.Y(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Z(), b.Z(), tol) << a << " vs " << b;
}

TEST(Imu, AtRestReadsPlusGUpAndZeroRates) {
  TestWorld w(world("1 2 3 0 0 0.7", ""));
  w.add(make_imu_system());
  w.start();
  w.step(20);
  const ecs::Entity s = w.find("w::m::l::imu");
  const auto& imu = w.r().get<c::ImuReading>(s);
  EXPECT_EQ(imu.sequence, 2u);
  expect_near(imu.linear_acceleration, {0, 0, 9.81}, 1e-12);
  expect_near(imu.angular_velocity, {0, 0, 0}, 1e-12);
  // No <orientation_reference_frame>: relative to the sensor's initial orientation (Gazebo).
  EXPECT_NEAR(std::abs(imu.orientation.W()), 1.0, 1e-12) << imu.orientation;
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic, "/world/w/model/m/link/l/sensor/imu/imu");
  // ENU reference: the orientation is the sensor's world orientation (yaw 0.7).
  TestWorld enu(world("1 2 3 0 0 0.7",
                      "<imu><orientation_reference_frame><localization>ENU</localization>"
                      "</orientation_reference_frame></imu>"));
  enu.add(make_imu_system());
  enu.start();
  enu.step(20);
  EXPECT_NEAR(enu.r().get<c::ImuReading>(enu.find("w::m::l::imu")).orientation.Euler().Z(), 0.7,
              1e-12);
}

TEST(Imu, TiltedSensorSeesGravityInItsOwnFrame) {
  // Pitched +90° about y: the sensor's x axis points down, so +g (up) is along -x.
  TestWorld w(world("0 0 0 0 0 0", "", "0 0 0 0 1.5707963267948966 0"));
  w.add(make_imu_system());
  w.start();
  w.step(10);
  const auto& imu = w.r().get<c::ImuReading>(w.find("w::m::l::imu"));
  expect_near(imu.linear_acceleration, {-9.81, 0, 0}, 1e-9);
}

TEST(Imu, NedReferenceFrame) {
  // A level sensor facing north (yaw +90° in ENU) is, relative to NED, rolled by 180°.
  TestWorld w(world("0 0 0 0 0 1.5707963267948966",
                    "<imu><orientation_reference_frame><localization>NED</localization>"
                    "</orientation_reference_frame></imu>"));
  w.add(make_imu_system());
  w.start();
  w.step(10);
  const auto& imu = w.r().get<c::ImuReading>(w.find("w::m::l::imu"));
  const Quaterniond expected(std::numbers::pi, 0, 0);
  EXPECT_NEAR(std::abs(imu.orientation.Dot(expected)), 1.0, 1e-12) << imu.orientation.Euler();
  // Vector check: the sensor x axis (north) is NED x.
  expect_near(imu.orientation.RotateVector({1, 0, 0}), {1, 0, 0}, 1e-12);
  expect_near(imu.orientation.RotateVector({0, 0, 1}), {0, 0, -1}, 1e-12);
  // Specific force is still in the sensor's FLU frame.
  expect_near(imu.linear_acceleration, {0, 0, 9.81}, 1e-12);
}

TEST(Imu, OrientationCanBeDisabled) {
  TestWorld w(world("0 0 0 0 0 1", "<imu><enable_orientation>false</enable_orientation></imu>"));
  w.add(make_imu_system());
  w.start();
  w.step(10);
  const auto& imu = w.r().get<c::ImuReading>(w.find("w::m::l::imu"));
  EXPECT_FALSE(imu.has_orientation);
  EXPECT_EQ(imu.orientation, Quaterniond::Identity);
}

TEST(Imu, UnknownParameterIsAnError) {
  TestWorld w(world("0 0 0 0 0 0",
                    "<imu><angular_velocity><x><noise type=\"gaussian\"><sigma>1</sigma>"
                    "</noise></x></angular_velocity></imu>"));
  w.add(make_imu_system());
  EXPECT_THAT([&] { w.start(); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("unknown parameter <sigma>")));
  TestWorld w2(world("0 0 0 0 0 0", "<imu><spin_rate/></imu>"));
  w2.add(make_imu_system());
  EXPECT_THAT([&] { w2.start(); }, ::testing::ThrowsMessage<Error>(
                                       ::testing::HasSubstr("unknown parameter <spin_rate>")));
}

constexpr const char* kTurntable = R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
  <gravity>0 0 -9.81</gravity>
  <model name="table"><link name="disc">
    <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.2</izz></inertia></inertial>
    <sensor name="imu" type="imu"><pose>0.5 0 0.1 0 0 0</pose><update_rate>0</update_rate></sensor>
  </link>
  <joint name="spin" type="revolute"><parent>world</parent><child>disc</child>
    <axis><xyz>0 0 1</xyz></axis></joint>
  </model></world></sdf>)";

TEST(Imu, TurntableReadsRateAndCentripetalAccelerationAtTheLeverArm) {
  TestWorld w(kTurntable);
  w.add(make_imu_system());
  w.start();
  const double omega = 3.0;
  const ecs::Entity joint = w.find("w::table::spin");
  w.r().set<c::JointVelocityCmd>(joint, {{omega}});
  w.step(500);
  const auto& imu = w.r().get<c::ImuReading>(w.find("w::table::disc::imu"));
  EXPECT_EQ(imu.sequence, 500u);  // update_rate 0: every step
  expect_near(imu.angular_velocity, {0, 0, omega}, 1e-6);
  // Centripetal acceleration ω²r towards the axis (-x of a sensor aligned with the disc).
  expect_near(imu.linear_acceleration, {-omega * omega * 0.5, 0, 9.81}, 1e-3);
}

TEST(Imu, RatesAreExactInSimTime) {
  // 250 Hz on a 1 ms step: every 4 ms exactly; 30 Hz: sample n at the first step >= n/30 s.
  for (double rate : {250.0, 30.0, 1000.0, 333.0}) {
    TestWorld w(world("0 0 0 0 0 0", "", "0 0 0 0 0 0", rate));
    w.add(make_imu_system());
    w.start();
    const ecs::Entity s = w.find("w::m::l::imu");
    std::uint64_t seen = 0;
    for (int i = 0; i < 2000; ++i) {
      w.step();
      const auto& imu = w.r().get<c::ImuReading>(s);
      if (imu.sequence == seen) continue;
      ++seen;
      EXPECT_EQ(imu.sequence, seen);
      // The first 1 ms step boundary at or after n / rate.
      const auto due_ns = std::llround(static_cast<long double>(seen) * 1e9L / rate);
      const auto expected = (due_ns + 999'999) / 1'000'000 * 1'000'000;
      ASSERT_EQ(imu.stamp.count(), expected) << rate << " Hz sample " << seen;
    }
    EXPECT_EQ(seen, static_cast<std::uint64_t>(std::floor(2.0 * rate + 1e-9))) << rate;
  }
}

TEST(Imu, NoiseIsDeterministicPerSeedAndResetReproducesAFreshRun) {
  const std::string noisy =
      "<imu><linear_acceleration><x><noise type=\"gaussian\"><stddev>0.1</stddev>"
      "<bias_mean>0.05</bias_mean><bias_stddev>0.01</bias_stddev></noise></x></linear_acceleration>"
      "<angular_velocity><z><noise type=\"gaussian\"><stddev>0.01</stddev>"
      "<dynamic_bias_stddev>0.001</dynamic_bias_stddev>"
      "<dynamic_bias_correlation_time>10</dynamic_bias_correlation_time></noise></z>"
      "</angular_velocity></imu>";
  auto run = [&](std::uint64_t seed, bool reset_midway) {
    TestWorld w(world("0 0 0 0 0 0", noisy), seed);
    w.add(make_imu_system());
    w.start();
    if (reset_midway) {
      w.step(137);
      w.runner->reset_now();
    }
    std::vector<double> out;
    const ecs::Entity s = w.find("w::m::l::imu");
    for (int i = 0; i < 300; ++i) {
      w.step();
      const auto& imu = w.r().get<c::ImuReading>(s);
      out.push_back(imu.linear_acceleration.X());
      out.push_back(imu.angular_velocity.Z());
      out.push_back(static_cast<double>(imu.sequence));
    }
    return out;
  };
  const auto a = run(1, false);
  EXPECT_EQ(a, run(1, false));
  EXPECT_EQ(a, run(1, true));
  EXPECT_NE(a, run(2, false));
}

}  // namespace
}  // namespace kestrel::sensors
