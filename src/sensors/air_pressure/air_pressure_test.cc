#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::one_link_world;
using testing::TestWorld;

double geometric(double H) { return 6356766.0 * H / (6356766.0 - H); }

double pressure_at(double z, double reference_altitude, const std::string& noise = "") {
  TestWorld w(one_link_world("0 0 " + std::to_string(z) + " 0 0 0",
                             R"(<sensor name="baro" type="air_pressure"><update_rate>0</update_rate>
      <air_pressure><kestrel:use_reference_altitude>true</kestrel:use_reference_altitude>
      <reference_altitude>)" + std::to_string(reference_altitude) + "</reference_altitude>" +
                                 noise + "</air_pressure></sensor>"));
  w.add(make_air_pressure_system());
  w.start();
  w.step(3);
  const ecs::Entity s = w.find("w::m::l::baro");
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic,
            "/world/w/model/m/link/l/sensor/baro/air_pressure");
  return w.r().get<c::AirPressureReading>(s).pressure;
}

TEST(AirPressure, MatchesIsaAt0And1000And5000MetresWithinOnePascal) {
  // ICAO table (geopotential altitude): 101325, 89874.6, 54019.9 Pa.
  EXPECT_NEAR(pressure_at(0, 0), 101325.0, 1.0);
  EXPECT_NEAR(pressure_at(geometric(1000), 0), 89874.6, 1.0);
  EXPECT_NEAR(pressure_at(geometric(5000), 0), 54019.9, 1.0);
  // The same altitude split between reference_altitude and the world z.
  EXPECT_NEAR(pressure_at(geometric(5000) - 1000, 1000), 54019.9, 1.0);
}

TEST(AirPressure, ReferenceAltitudeIsIgnoredAsGazeboUnlessOptedIn) {
  // gz-sensors never reads <reference_altitude>: the pressure is that of the world z alone, and
  // a warning names the element's FILE:LINE and the opt-in.
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("t", sink));
  TestWorld w(one_link_world("0 0 1000 0 0 0",
                             R"(<sensor name="baro" type="air_pressure"><update_rate>0</update_rate>
      <air_pressure><reference_altitude>4000</reference_altitude></air_pressure></sensor>)"));
  w.add(make_air_pressure_system());
  w.start();
  w.step(3);
  spdlog::set_default_logger(previous);
  const double p = w.r().get<c::AirPressureReading>(w.find("w::m::l::baro")).pressure;
  EXPECT_NEAR(p, pressure_at(geometric(0) + 1000, 0), 1e-9);
  EXPECT_NEAR(pressure_at(1000, 4000), pressure_at(5000, 0), 1e-9);  // opted in: added
  EXPECT_NE(log.str().find("<reference_altitude>4000</reference_altitude> is ignored"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("kestrel:use_reference_altitude"), std::string::npos) << log.str();
}

TEST(AirPressure, NoiseInPascal) {
  TestWorld w(one_link_world("0 0 0 0 0 0", R"(<sensor name="baro" type="air_pressure">
      <update_rate>0</update_rate><air_pressure><pressure><noise type="gaussian">
      <stddev>3</stddev></noise></pressure></air_pressure></sensor>)"));
  w.add(make_air_pressure_system());
  w.start();
  const auto& b = w.r().get<c::AirPressureReading>(w.find("w::m::l::baro"));
  double s = 0, s2 = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    w.step();
    s += b.pressure - 101325.0;
    s2 += (b.pressure - 101325.0) * (b.pressure - 101325.0);
  }
  EXPECT_NEAR(s / n, 0, 0.1);
  EXPECT_NEAR(std::sqrt(s2 / n), 3.0, 0.06);
  EXPECT_EQ(b.variance, 9.0);
}

TEST(AirPressure, UnknownParameterIsAnError) {
  TestWorld w(one_link_world("0 0 0 0 0 0", R"(<sensor name="baro" type="air_pressure">
      <air_pressure><altitude_offset>5</altitude_offset></air_pressure></sensor>)"));
  w.add(make_air_pressure_system());
  EXPECT_THROW(w.start(), Error);
}

}  // namespace
}  // namespace kestrel::sensors
