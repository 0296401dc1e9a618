#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/sensors/environment.h"

namespace kestrel::sensors {
namespace {

// Geometric altitude for a geopotential one (ISA tables are in geopotential metres).
double geometric(double H) { return 6356766.0 * H / (6356766.0 - H); }

TEST(Atmosphere, MatchesTheIsaTableWithinOnePascal) {
  struct Row {
    double H, p, T;
  };
  // ICAO Standard Atmosphere (Doc 7488), geopotential altitude.
  for (const Row& row : {Row{0, 101325.0, 288.15}, Row{1000, 89874.6, 281.65},
                         Row{5000, 54019.9, 255.65}, Row{11000, 22632.1, 216.65},
                         Row{20000, 5474.89, 216.65}, Row{32000, 868.019, 228.65}}) {
    const AirState a = standard_atmosphere(geometric(row.H));
    EXPECT_NEAR(a.pressure, row.p, 1.0) << row.H;
    EXPECT_NEAR(a.temperature, row.T, 1e-6) << row.H;
  }
  EXPECT_NEAR(standard_atmosphere(0).density, 1.2250, 1e-4);
  EXPECT_NEAR(standard_atmosphere(geometric(1000)).density, 1.1117, 1e-4);
  EXPECT_THROW(standard_atmosphere(90000), Error);
}

TEST(Atmosphere, FollowsTheWorldsSeaLevelValues) {
  components::Atmosphere hot;
  hot.temperature = 308.15;
  hot.pressure = 100000;
  const AirState a = standard_atmosphere(0, hot);
  EXPECT_EQ(a.pressure, 100000);
  EXPECT_EQ(a.temperature, 308.15);
  EXPECT_NEAR(a.density, 100000 * 0.0289644 / (8.31432 * 308.15), 1e-9);
}

TEST(Wmm, ModelMatchesNoaaTestValues) {
  // WMM2025 test values at 2025.0 (NOAA's published check values): alt km, lat, lon, X Y Z nT.
  struct Row {
    double alt_km, lat, lon, x, y, z;
  };
  for (const Row& v : {Row{28, 89, -121, -255.388723, -1482.460628, 56194.288771},
                       Row{48, 80, -96, 1875.982280, -1079.269389, 55623.044051},
                       Row{54, 82, 87, 1324.336929, 1883.428620, 56740.772059},
                       Row{65, 43, 93, 24299.852822, 210.517066, 50037.923998},
                       Row{51, -33, 109, 21737.778822, -2090.274098, -52710.003920},
                       Row{39, -59, -8, 14358.095523, -4049.107540, -24389.086374},
                       Row{3, -50, -103, 19526.532799, 10362.990980, -31437.562789},
                       Row{94, -29, -110, 23275.471080, 6559.046509, -19063.605287},
                       Row{66, 14, 143, 35003.441364, -116.624818, 7966.315182},
                       Row{18, 0, 21, 29274.811882, 659.800118, -14316.722540}}) {
    const auto f = wmm_model(v.lat, v.lon, v.alt_km * 1000);
    const auto enu = f.enu() * 1e9;  // nT, east north up
    EXPECT_NEAR(enu.Y(), v.x, 1.0) << v.lat << " " << v.lon;
    EXPECT_NEAR(enu.X(), v.y, 1.0) << v.lat << " " << v.lon;
    EXPECT_NEAR(-enu.Z(), v.z, 1.0) << v.lat << " " << v.lon;
  }
}

TEST(Wmm, TableInterpolationAccuracy) {
  // Between ±60° latitude the 5° table is within 0.5° inclination and 0.3 µT of the model; the
  // declination within 5° (its worst error is near the south magnetic pole, where the horizontal
  // field is weak) and within 1° over 95 % of the grid. Printed for the README.
  double worst_d = 0, worst_i = 0, worst_f = 0;
  int points = 0, over_1deg = 0;
  for (int lat = -60; lat <= 60; ++lat) {
    for (int lon = -180; lon <= 180; ++lon) {
      const auto m = wmm_model(lat + 0.37, lon + 0.61, 0), t = wmm_table(lat + 0.37, lon + 0.61);
      const double dd = std::abs(std::remainder(m.declination_deg - t.declination_deg, 360.0));
      worst_d = std::max(worst_d, dd);
      ++points;
      over_1deg += dd > 1.0;
      worst_i = std::max(worst_i, std::abs(m.inclination_deg - t.inclination_deg));
      worst_f = std::max(worst_f, std::abs(m.strength - t.strength));
    }
  }
  std::printf("table error within ±60°: declination %.3f°, inclination %.3f°, strength %.3f µT\n",
              worst_d, worst_i, worst_f * 1e6);
  std::printf("declination error > 1° at %.2f %% of the points\n", 100.0 * over_1deg / points);
  EXPECT_LT(worst_d, 5.0);
  EXPECT_LT(over_1deg, points / 20);
  EXPECT_LT(worst_i, 0.5);
  EXPECT_LT(worst_f, 0.3e-6);
  // Known places (WMM2025): Zurich declination ~3.5° E, inclination ~63.6°, ~48 µT.
  const auto z = wmm_table(47.4, 8.5);
  EXPECT_NEAR(z.declination_deg, 3.5, 1.0);
  EXPECT_NEAR(z.inclination_deg, 63.6, 1.0);
  EXPECT_NEAR(z.strength, 48e-6, 1.5e-6);
}

TEST(Wmm, EnuVectorFromElements) {
  GeomagneticField f{10.0, 60.0, 50e-6};
  const auto v = f.enu();
  EXPECT_NEAR(v.Length(), 50e-6, 1e-15);
  EXPECT_NEAR(std::atan2(v.X(), v.Y()) * 180 / M_PI, 10.0, 1e-9);  // east of north
  EXPECT_LT(v.Z(), 0);                                              // dips down
}

}  // namespace
}  // namespace kestrel::sensors
