// px4::AirSpeed (PX4's airspeed plugin): diff_pressure = sign(u)·½·ρ·u² + N(0, 1 Pa) with u the
// air-relative velocity along the link's x axis and ρ of PX4's troposphere at 488 m + z; the
// link's state is set before each step (PreUpdate reads it before physics moves the link).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;
using testing::LoadedWorld;

std::string plane_world(const std::string& params, const std::string& world_extra = "") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>)" +
         world_extra + R"(
    <model name="plane"><link name="base_link">
        <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
      <plugin filename="libAirSpeedPlugin.so" name="px4::AirSpeed">)" +
         params + "</plugin></model></world></sdf>";
}

// PX4's density at world z: ρ0 / (T0 / (T0 − L·(488 + z)))^4.256.
double px4_density(double z) {
  return 1.225 / std::pow(288.15 / (288.15 - 0.0065 * (488 + z)), 4.256);
}

struct Stats {
  double mean = 0, stddev = 0;
};

// Holds the link at X_WL with velocity v_W for n steps; the readings' mean and deviation.
Stats hold(LoadedWorld& w, const Pose3d& X_WL, const Vector3d& v_W, int n) {
  const auto link = w.find("w::plane::base_link");
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    w.r().get<c::WorldPose>(link).value = X_WL;
    w.r().get<c::WorldLinearVelocity>(link).value = v_W;
    w.step(1);
    const double p = w.r().get<c::AirSpeedReading>(link).diff_pressure;
    sum += p;
    sum2 += p * p;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(sum2 / n - mean * mean)};
}

TEST(Px4AirSpeed, DiffPressureIsHalfRhoUSquaredAlongTheLinkXRelativeToTheWind) {
  LoadedWorld w(plane_world("<link_name>base_link</link_name>",
                            "<wind><linear_velocity>2 -1 0.5</linear_velocity></wind>"));
  const auto link = w.find("w::plane::base_link");
  const Pose3d X_WL(10, 20, 100, 0.1, -0.2, 0.5);
  const Vector3d v_W(18, 9, -1);
  const double u = X_WL.Rot().RotateVectorReverse(v_W - Vector3d(2, -1, 0.5)).X();
  const double rho = px4_density(100);
  constexpr int kN = 4000;
  const Stats s = hold(w, X_WL, v_W, kN);
  const double q = 0.5 * rho * u * u;
  ASSERT_GT(q, 150.0);
  EXPECT_NEAR(s.mean, q, 4.0 / std::sqrt(kN));  // noise σ = 1 Pa (PX4's 0.01 hPa)
  EXPECT_NEAR(s.stddev, 1.0, 0.05);
  const auto& reading = w.r().get<c::AirSpeedReading>(link);
  EXPECT_DOUBLE_EQ(reading.density, rho);
  EXPECT_DOUBLE_EQ(reading.temperature, 288.15 - 0.0065 * 588);
  EXPECT_EQ(reading.variance, 1.0);
  EXPECT_EQ(reading.sequence, static_cast<std::uint64_t>(kN));
  // The air from behind (flying backwards): negative, −½ρu².
  const Stats back = hold(w, X_WL, -v_W + 2 * Vector3d(2, -1, 0.5), kN);
  EXPECT_NEAR(back.mean, -q, 4.0 / std::sqrt(kN));
  // Sideways and vertical air: nothing along x but the noise.
  const Stats side = hold(w, Pose3d(0, 0, 0, 0, 0, 0), Vector3d(2, 4, -3), kN);  // wind + (0, 5, −3.5)
  EXPECT_NEAR(side.mean, 0.0, 4.0 / std::sqrt(kN));
}

TEST(Px4AirSpeed, SameSeedSameNoiseAfterResetAndAcrossRuns) {
  auto readings = [](LoadedWorld& w) {
    std::vector<double> out;
    const auto link = w.find("w::plane::base_link");
    for (int i = 0; i < 50; ++i) {
      w.step(1);
      out.push_back(w.r().get<c::AirSpeedReading>(link).diff_pressure);
    }
    return out;
  };
  LoadedWorld a(plane_world("<link_name>base_link</link_name>"));
  LoadedWorld b(plane_world("<link_name>base_link</link_name>"));
  const auto first = readings(a);
  EXPECT_EQ(readings(b), first);
  a.runner->reset_now();
  EXPECT_EQ(readings(a), first);
  EXPECT_NE(first[0], first[1]);  // noise, not a constant
}

TEST(Px4AirSpeed, RefusedParameters) {
  EXPECT_THAT(testing::load_error(plane_world("")), ::testing::HasSubstr("link_name"));
  EXPECT_THAT(testing::load_error(plane_world("<link_name>wing</link_name>")),
              ::testing::HasSubstr("wing"));
  EXPECT_THAT(testing::load_error(plane_world("<link_name>base_link</link_name><rate>5</rate>")),
              ::testing::HasSubstr("rate"));
}

}  // namespace
}  // namespace kestrel::systems
