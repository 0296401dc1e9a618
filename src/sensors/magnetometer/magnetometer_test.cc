#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/sensors.h"
#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::expect_near;
using testing::one_link_world;
using testing::TestWorld;

const std::string kMag = R"(<sensor name="mag" type="magnetometer"><update_rate>50</update_rate>
  </sensor>)";

Vector3d read(const std::string& pose, const std::string& extra = "") {
  TestWorld w(one_link_world(pose, kMag, true, extra));
  w.add(make_magnetometer_system());
  w.start();
  w.step(30);
  const auto& m = w.r().get<c::MagnetometerReading>(w.find("w::m::l::mag"));
  EXPECT_EQ(m.sequence, 1u);
  return m.field;
}

TEST(Magnetometer, LevelSensorReadsTheWorldField) {
  const Vector3d B(2e-5, 1e-5, -4e-5);
  const std::string field = "<magnetic_field>2e-5 1e-5 -4e-5</magnetic_field>";
  expect_near(read("0 0 0 0 0 0", field), B, 1e-15);
}

TEST(Magnetometer, FollowsAYaw) {
  // Yawing the sensor by psi rotates the field the other way in the sensor frame.
  const Vector3d B(2e-5, 1e-5, -4e-5);
  const std::string field = "<magnetic_field>2e-5 1e-5 -4e-5</magnetic_field>";
  for (double psi : {0.3, 1.5707963267948966, -2.0, 3.0}) {
    const Vector3d m = read("5 -3 2 0 0 " + std::to_string(psi), field);
    const double c = std::cos(psi), s = std::sin(psi);
    expect_near(m, {c * B.X() + s * B.Y(), -s * B.X() + c * B.Y(), B.Z()}, 1e-11);
    EXPECT_NEAR(m.Length(), B.Length(), 1e-15);
  }
}

TEST(Magnetometer, UsesTheWorldMagneticModelWithSphericalCoordinates) {
  // Zurich; a level sensor facing east (yaw 0) reads B_E along x, B_N along y, B_U along z.
  const std::string sc = R"(<spherical_coordinates><surface_model>EARTH_WGS84</surface_model>
    <world_frame_orientation>ENU</world_frame_orientation><latitude_deg>47.4</latitude_deg>
    <longitude_deg>8.5</longitude_deg><elevation>400</elevation><heading_deg>0</heading_deg>
    </spherical_coordinates>)";
  const Vector3d m = read("0 0 0 0 0 0", sc);
  expect_near(m, wmm_table(47.4, 8.5).enu(), 1e-12);
  EXPECT_NEAR(m.Length(), 48e-6, 1.5e-6);
  EXPECT_GT(m.Y(), 0);  // points north
  EXPECT_LT(m.Z(), 0);  // and down
}

TEST(Magnetometer, NoiseOnEachAxis) {
  TestWorld w(one_link_world("0 0 0 0 0 0", R"(<sensor name="mag" type="magnetometer">
      <update_rate>0</update_rate><magnetometer><x><noise type="gaussian"><stddev>1e-7</stddev>
      </noise></x></magnetometer></sensor>)"));
  w.add(make_magnetometer_system());
  w.start();
  const auto& m = w.r().get<c::MagnetometerReading>(w.find("w::m::l::mag"));
  double s2 = 0;
  const Vector3d B = w.r().get<c::MagneticField>(w.runner->world()).value;
  for (int i = 0; i < 4000; ++i) {
    w.step();
    s2 += (m.field.X() - B.X()) * (m.field.X() - B.X());
    ASSERT_EQ(m.field.Y(), B.Y());
  }
  EXPECT_NEAR(std::sqrt(s2 / 4000), 1e-7, 0.05e-7);
  EXPECT_DOUBLE_EQ(m.variance.X(), 1e-14);
}

}  // namespace
}  // namespace kestrel::sensors
