#include <gtest/gtest.h>

#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::one_link_world;
using testing::TestWorld;

TEST(Altimeter, FreeFallRelativeToTheStart) {
  TestWorld w(one_link_world("0 0 50 0 0 0", R"(<sensor name="alt" type="altimeter">
      <pose>0 0 0.2 0 0 0</pose><update_rate>100</update_rate></sensor>)",
                             /*is_static=*/false));
  w.add(make_altimeter_system());
  w.start();
  w.step(500);  // 0.5 s
  const auto& a = w.r().get<c::AltimeterReading>(w.find("w::m::l::alt"));
  EXPECT_EQ(a.sequence, 50u);
  EXPECT_DOUBLE_EQ(a.vertical_reference, 50.2);
  const double t = 0.5, g = 9.81;
  EXPECT_NEAR(a.vertical_velocity, -g * t, 1e-6);
  EXPECT_NEAR(a.vertical_position, -0.5 * g * t * t, 0.5 * g * t * 0.001 + 1e-9);
}

TEST(Altimeter, NoiseOnPositionAndVelocity) {
  TestWorld w(one_link_world("0 0 2 0 0 0", R"(<sensor name="alt" type="altimeter">
      <update_rate>0</update_rate><altimeter>
      <vertical_position><noise type="gaussian"><stddev>0.5</stddev></noise></vertical_position>
      <vertical_velocity><noise type="gaussian"><bias_mean>0.2</bias_mean></noise></vertical_velocity>
      </altimeter></sensor>)"));
  w.add(make_altimeter_system());
  w.start();
  const auto& a = w.r().get<c::AltimeterReading>(w.find("w::m::l::alt"));
  double s2 = 0;
  for (int i = 0; i < 10000; ++i) {
    w.step();
    s2 += a.vertical_position * a.vertical_position;
    EXPECT_NEAR(std::abs(a.vertical_velocity), 0.2, 1e-12);
  }
  EXPECT_NEAR(std::sqrt(s2 / 10000), 0.5, 0.015);
}

}  // namespace
}  // namespace kestrel::sensors
