#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <GeographicLib/Geodesic.hpp>
#include <cmath>
#include <numbers>

#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::one_link_world;
using testing::TestWorld;

constexpr double kLat0 = 47.397742, kLon0 = 8.545594, kH0 = 488.0;
constexpr double kDeg = std::numbers::pi / 180;

std::string sc(double heading = 0) {
  return R"(<spherical_coordinates><surface_model>EARTH_WGS84</surface_model>
    <world_frame_orientation>ENU</world_frame_orientation><latitude_deg>47.397742</latitude_deg>
    <longitude_deg>8.545594</longitude_deg><elevation>488</elevation><heading_deg>)" +
         std::to_string(heading) + "</heading_deg></spherical_coordinates>";
}

// Meridional and prime-vertical radii of curvature of WGS84 at a latitude.
void radii(double lat_deg, double& m, double& n) {
  const double a = 6378137.0, e2 = 6.69437999014e-3, s = std::sin(lat_deg * kDeg);
  const double w = std::sqrt(1 - e2 * s * s);
  n = a / w;
  m = a * (1 - e2) / (w * w * w);
}

TEST(NavSat, HundredMetresNorthAndEastWithinOneCentimetre) {
  TestWorld w(one_link_world("100 100 0 0 0 0", R"(<sensor name="gps" type="navsat">
      <update_rate>10</update_rate></sensor>)", true, sc()));
  w.add(make_navsat_system());
  w.start();
  w.step(100);
  const ecs::Entity s = w.find("w::m::l::gps");
  const auto& g = w.r().get<c::NavSatReading>(s);
  EXPECT_EQ(g.sequence, 1u);
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic, "/world/w/model/m/link/l/sensor/gps/navsat");
  double m, n;
  radii(kLat0, m, n);
  // Independent truth 1: arcs on the radii of curvature at the origin's height h (the east arc
  // at the mean latitude); error ~ d²/R, well below 1 mm.
  const double lat_mid = 0.5 * (g.latitude_deg + kLat0) * kDeg;
  EXPECT_NEAR((g.latitude_deg - kLat0) * kDeg * (m + kH0), 100.0, 0.002);
  EXPECT_NEAR((g.longitude_deg - kLon0) * kDeg * (n + kH0) * std::cos(lat_mid), 100.0, 0.002);
  // Independent truth 2: the geodesic on the ellipsoid (height 0) from the origin is
  // 141.42 m · R/(R + h) long, at azimuth 45°.
  double s12, azi1, azi2;
  GeographicLib::Geodesic::WGS84().Inverse(kLat0, kLon0, g.latitude_deg, g.longitude_deg, s12,
                                           azi1, azi2);
  EXPECT_NEAR(s12 * (1 + kH0 / std::sqrt(m * n)), 100.0 * std::sqrt(2.0), 0.002);
  EXPECT_NEAR(azi1, 45.0, 0.01);
  // The tangent plane drops below the ellipsoid by d²/2R ≈ 1.6 mm at 141 m.
  EXPECT_NEAR(g.altitude, kH0 + 0.0016, 0.001);
}

TEST(NavSat, HorizontalNoiseIsInMetres) {
  TestWorld w(one_link_world("0 0 0 0 0 0", R"(<sensor name="gps" type="navsat">
      <update_rate>0</update_rate><navsat><position_sensing><horizontal>
      <noise type="gaussian"><stddev>2.0</stddev></noise></horizontal></position_sensing>
      <velocity_sensing><vertical><noise type="gaussian"><stddev>0.1</stddev></noise></vertical>
      </velocity_sensing></navsat></sensor>)", true, sc()));
  w.add(make_navsat_system());
  w.start();
  const auto& g = w.r().get<c::NavSatReading>(w.find("w::m::l::gps"));
  double m, n;
  radii(kLat0, m, n);
  double sn = 0, se = 0, su = 0, svu = 0;
  const int k = 20000;
  for (int i = 0; i < k; ++i) {
    w.step();
    const double north = (g.latitude_deg - kLat0) * kDeg * m;
    const double east = (g.longitude_deg - kLon0) * kDeg * n * std::cos(kLat0 * kDeg);
    sn += north * north;
    se += east * east;
    su += (g.altitude - kH0) * (g.altitude - kH0);
    svu += g.velocity_enu.Z() * g.velocity_enu.Z();
    EXPECT_EQ(g.velocity_enu.X(), 0.0);
  }
  EXPECT_NEAR(std::sqrt(sn / k), 2.0, 0.04);  // metres, not degrees
  EXPECT_NEAR(std::sqrt(se / k), 2.0, 0.04);
  EXPECT_LT(std::sqrt(su / k), 1e-6);  // no vertical position noise configured
  EXPECT_NEAR(std::sqrt(svu / k), 0.1, 0.002);
}

TEST(NavSat, EnuVelocityOfAMovingSensor) {
  // A free link without gravity, given a constant world velocity.
  TestWorld w(one_link_world("0 0 10 0 0 0.5", R"(<gravity>false</gravity>
      <sensor name="gps" type="navsat"><update_rate>0</update_rate></sensor>)", false, sc()));
  w.add(make_navsat_system());
  w.start();
  w.r().set<c::LinearVelocityCmd>(w.find("w::m"), {{3, 0, 1}});  // model frame (yaw 0.5)
  w.step(200);
  const auto& g = w.r().get<c::NavSatReading>(w.find("w::m::l::gps"));
  testing::expect_near(g.velocity_enu, {3 * std::cos(0.5), 3 * std::sin(0.5), 1}, 1e-6);
}

TEST(NavSat, HeadingRotatesTheWorldFrame) {
  // heading 90°: world x points south (SDF: positive from north towards east).
  TestWorld w(one_link_world("100 0 0 0 0 0", R"(<sensor name="gps" type="navsat">
      <update_rate>0</update_rate></sensor>)", true, sc(90)));
  w.add(make_navsat_system());
  w.start();
  w.step(1);
  const auto& g = w.r().get<c::NavSatReading>(w.find("w::m::l::gps"));
  double m, n;
  radii(kLat0, m, n);
  EXPECT_NEAR((g.latitude_deg - kLat0) * kDeg * m, -100.0, 0.01);
  EXPECT_NEAR(g.longitude_deg, kLon0, 1e-9);
}

TEST(NavSat, WithoutSphericalCoordinatesIsAnError) {
  TestWorld w(one_link_world("0 0 0 0 0 0", R"(<sensor name="gps" type="navsat"/>)"));
  w.add(make_navsat_system());
  EXPECT_THAT([&] { w.start(); }, ::testing::ThrowsMessage<Error>(
                                      ::testing::HasSubstr("needs the world's <spherical_coordinates>")));
}

}  // namespace
}  // namespace kestrel::sensors
