#include <gtest/gtest.h>

#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::one_link_world;
using testing::TestWorld;

TEST(AirSpeed, HeadwindGivesDynamicPressure) {
  // Static sensor facing +x at 100 m, wind blowing towards -x at 10 m/s: 10 m/s airspeed.
  TestWorld w(one_link_world("0 0 100 0 0 0", R"(<sensor name="pitot" type="air_speed">
      <update_rate>0</update_rate></sensor>)", true,
                             "<wind><linear_velocity>-10 0 0</linear_velocity></wind>"));
  w.add(make_air_speed_system());
  w.start();
  w.step(2);
  const ecs::Entity s = w.find("w::m::l::pitot");
  const auto& a = w.r().get<c::AirSpeedReading>(s);
  const AirState air = standard_atmosphere(100);
  EXPECT_NEAR(a.diff_pressure, 0.5 * air.density * 100, 1e-9);
  EXPECT_NEAR(a.temperature, air.temperature, 1e-9);
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic, "/world/w/model/m/link/l/sensor/pitot/air_speed");
}

TEST(AirSpeed, AFaultsGustAddsToTheWind) {
  // The same headwind, half of it from a wind_gust fault (components::WindGust).
  TestWorld w(one_link_world("0 0 100 0 0 0", R"(<sensor name="pitot" type="air_speed">
      <update_rate>0</update_rate></sensor>)",
                             true, "<wind><linear_velocity>-4 0 0</linear_velocity></wind>"));
  w.add(make_air_speed_system());
  w.start();
  w.r().set(w.runner->world(), c::WindGust{{-6, 0, 0}});
  w.step(2);
  const auto& a = w.r().get<c::AirSpeedReading>(w.find("w::m::l::pitot"));
  EXPECT_NEAR(a.diff_pressure, 0.5 * standard_atmosphere(100).density * 100, 1e-9);
}

TEST(AirSpeed, MovingSensorWithTailwindAndFlowFromBehind) {
  // The body moves at +20 m/s world x with a +5 m/s wind: 15 m/s of air-relative speed. Facing
  // +x (yaw 0) the pitot sees +15 m/s; facing -x (yaw π) the flow comes from behind: -15 m/s,
  // reported as a negative differential pressure.
  for (bool backwards : {false, true}) {
    TestWorld w(one_link_world(std::string("0 0 10 0 0 ") + (backwards ? "3.141592653589793" : "0"),
                               R"(<gravity>false</gravity>
        <sensor name="pitot" type="air_speed"><update_rate>0</update_rate></sensor>)", false,
                               "<wind><linear_velocity>5 0 0</linear_velocity></wind>"));
    w.add(make_air_speed_system());
    w.start();
    // LinearVelocityCmd is in the model frame: -20 along a model x that points to world -x.
    w.r().set<c::LinearVelocityCmd>(w.find("w::m"), {{backwards ? -20.0 : 20.0, 0, 0}});
    w.step(5);
    const auto& a = w.r().get<c::AirSpeedReading>(w.find("w::m::l::pitot"));
    const double rho = standard_atmosphere(10).density;
    EXPECT_NEAR(a.diff_pressure, (backwards ? -1 : 1) * 0.5 * rho * 15 * 15, 1e-3) << backwards;
  }
}

}  // namespace
}  // namespace kestrel::sensors
