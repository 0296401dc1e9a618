// The World Magnetic Model 2025: spherical-harmonic evaluation and a 5° table derived from it.

#include <array>
#include <cmath>
#include <numbers>

#include "kestrel/sensors/environment.h"

namespace kestrel::sensors {
namespace {

// WMM2025 main-field Gauss coefficients [nT], epoch 2025.0, index n(n+1)/2 + m, n <= 12.
// Source: NOAA NCEI / BGS World Magnetic Model 2025 (public domain), WMM.COF as converted to
// JSON in the npm package geomagnetism 0.2.0 (data/wmm-2025.json); values only, no code.
constexpr double kG[91] = {
    0.0, -29351.8, -1410.8, -2556.6, 2951.1, 1649.3, 1361.0, -2404.1, 1243.8, 453.6, 895.0,
    799.5, 55.7, -281.1, 12.1, -233.2, 368.9, 187.2, -138.7, -142.0, 20.9, 64.4, 63.8, 76.9,
    -115.7, -40.9, 14.9, -60.7, 79.5, -77.0, -8.8, 59.3, 15.8, 2.5, -11.1, 14.2, 23.2, 10.8,
    -17.5, 2.0, -21.7, 16.9, 15.0, -16.8, 0.9, 4.6, 7.8, 3.0, -0.2, -2.5, -13.1, 2.4, 8.6, -8.7,
    -12.9, -1.3, -6.4, 0.2, 2.0, -1.0, -0.6, -0.9, 1.5, 0.9, -2.7, -3.9, 2.9, -1.5, -2.5, 2.4,
    -0.6, -0.1, -0.6, -0.1, 1.1, -1.0, -0.2, 2.6, -2.0, -0.2, 0.3, 1.2, -1.3, 0.6, 0.6, 0.5,
    -0.1, -0.4, -0.2, -1.3, -0.7,
};
constexpr double kH[91] = {
    0.0, 0.0, 4545.4, 0.0, -3133.6, -815.1, 0.0, -56.6, 237.5, -549.5, 0.0, 278.6, -133.9, 212.0,
    -375.6, 0.0, 45.4, 220.2, -122.9, 43.0, 106.1, 0.0, -18.4, 16.8, 48.8, -59.8, 10.9, 72.7,
    0.0, -48.9, -14.4, -1.0, 23.4, -7.4, -25.1, -2.3, 0.0, 7.1, -12.6, 11.4, -9.7, 12.7, 0.7,
    -5.2, 3.9, 0.0, -24.8, 12.2, 8.3, -3.3, -5.2, 7.2, -0.6, 0.8, 10.0, 0.0, 3.3, 0.0, 2.4, 5.3,
    -9.1, 0.4, -4.2, -3.8, 0.9, -9.1, 0.0, 0.0, 2.9, -0.6, 0.2, 0.5, -0.3, -1.2, -1.7, -2.9,
    -1.8, -2.3, 0.0, -1.3, 0.7, 1.0, -1.4, 0.0, 0.6, -0.1, 0.8, 0.1, -1.0, 0.1, 0.2,
};

constexpr int kMaxDegree = 12;
constexpr double kDeg = std::numbers::pi / 180.0;
constexpr double kEarthRadius = 6371200.0;  // WMM reference radius [m]
constexpr double kA = 6378137.0;            // WGS84 semi-major axis [m]
constexpr double kF = 1.0 / 298.257223563;  // WGS84 flattening
constexpr double kE2 = kF * (2.0 - kF);

constexpr int idx(int n, int m) { return n * (n + 1) / 2 + m; }

double factorial(int k) {
  double f = 1;
  for (int i = 2; i <= k; ++i) f *= i;
  return f;
}

// North, east, down field components [nT] at a geodetic position.
ignition::math::Vector3d field_ned_nT(double lat_deg, double lon_deg, double height_m) {
  // Poles are singular in the spherical formulas (1/cos): stay a hair away from them.
  lat_deg = std::clamp(lat_deg, -89.999, 89.999);
  const double phi = lat_deg * kDeg, lambda = lon_deg * kDeg;
  // Geodetic → geocentric spherical.
  const double sp = std::sin(phi), cp = std::cos(phi);
  const double N = kA / std::sqrt(1.0 - kE2 * sp * sp);
  const double p = (N + height_m) * cp, z = (N * (1.0 - kE2) + height_m) * sp;
  const double r = std::hypot(p, z);
  const double phic = std::atan2(z, p);
  const double x = std::sin(phic), cc = std::cos(phic);

  // Associated Legendre functions P_n^m(x) without the Condon-Shortley phase, then Schmidt
  // semi-normalized; derivative with respect to the geocentric latitude.
  std::array<double, idx(kMaxDegree, kMaxDegree) + 1> P{}, dP{};
  for (int m = 0; m <= kMaxDegree; ++m) {
    double pmm = 1.0;
    for (int k = 1; k <= m; ++k) pmm *= (2.0 * k - 1.0) * cc;  // (2m-1)!! cos^m
    P[idx(m, m)] = pmm;
    if (m + 1 <= kMaxDegree) P[idx(m + 1, m)] = x * (2.0 * m + 1.0) * pmm;
    for (int n = m + 2; n <= kMaxDegree; ++n) {
      P[idx(n, m)] = ((2.0 * n - 1.0) * x * P[idx(n - 1, m)] - (n + m - 1.0) * P[idx(n - 2, m)]) /
                     (n - m);
    }
  }
  for (int n = 1; n <= kMaxDegree; ++n) {
    for (int m = 0; m <= n; ++m) {
      const double prev = m <= n - 1 ? P[idx(n - 1, m)] : 0.0;
      // dP/dphi = cos(phi) dP/dx, with (1 - x^2) dP/dx = -n x P_n^m + (n + m) P_{n-1}^m.
      dP[idx(n, m)] = (-n * x * P[idx(n, m)] + (n + m) * prev) / cc;
    }
  }
  double X = 0, Y = 0, Z = 0;
  for (int n = 1; n <= kMaxDegree; ++n) {
    const double scale = std::pow(kEarthRadius / r, n + 2);
    for (int m = 0; m <= n; ++m) {
      const double s = std::sqrt((m == 0 ? 1.0 : 2.0) * factorial(n - m) / factorial(n + m));
      const double g = kG[idx(n, m)], h = kH[idx(n, m)];
      const double cm = std::cos(m * lambda), sm = std::sin(m * lambda);
      const double Pn = s * P[idx(n, m)], dPn = s * dP[idx(n, m)];
      X += -scale * (g * cm + h * sm) * dPn;
      Y += scale * m * (g * sm - h * cm) * Pn / cc;
      Z += -(n + 1.0) * scale * (g * cm + h * sm) * Pn;
    }
  }
  // Geocentric → geodetic axes (rotation about east by the latitude difference).
  const double d = phic - phi;
  return {X * std::cos(d) - Z * std::sin(d), Y, X * std::sin(d) + Z * std::cos(d)};
}

GeomagneticField elements(const ignition::math::Vector3d& ned_nT) {
  GeomagneticField f;
  const double h = std::hypot(ned_nT.X(), ned_nT.Y());
  f.declination_deg = std::atan2(ned_nT.Y(), ned_nT.X()) / kDeg;
  f.inclination_deg = std::atan2(ned_nT.Z(), h) / kDeg;
  f.strength = ned_nT.Length() * 1e-9;
  return f;
}

constexpr int kStep = 5;  // table spacing [deg]
constexpr int kLats = 180 / kStep + 1, kLons = 360 / kStep + 1;

struct Table {
  float decl[kLats][kLons], incl[kLats][kLons], strength_uT[kLats][kLons];
  Table() {
    for (int i = 0; i < kLats; ++i) {
      for (int j = 0; j < kLons; ++j) {
        const auto f = wmm_model(-90.0 + i * kStep, -180.0 + j * kStep, 0.0);
        decl[i][j] = static_cast<float>(f.declination_deg);
        incl[i][j] = static_cast<float>(f.inclination_deg);
        strength_uT[i][j] = static_cast<float>(f.strength * 1e6);
      }
    }
  }
};

}  // namespace

ignition::math::Vector3d GeomagneticField::enu() const {
  const double d = declination_deg * kDeg, i = inclination_deg * kDeg;
  const double h = strength * std::cos(i);
  return {h * std::sin(d), h * std::cos(d), -strength * std::sin(i)};
}

GeomagneticField wmm_model(double latitude_deg, double longitude_deg, double height_m) {
  return elements(field_ned_nT(latitude_deg, longitude_deg, height_m));
}

GeomagneticField wmm_table(double latitude_deg, double longitude_deg) {
  static const Table table;  // computed once (thread-safe static initialization)
  const double lat = std::clamp(latitude_deg, -90.0, 90.0);
  double lon = std::remainder(longitude_deg, 360.0);  // [-180, 180]
  const double fi = (lat + 90.0) / kStep, fj = (lon + 180.0) / kStep;
  const int i = std::min(static_cast<int>(fi), kLats - 2);
  const int j = std::min(static_cast<int>(fj), kLons - 2);
  const double u = fi - i, v = fj - j;
  auto bilinear = [&](const float (&t)[kLats][kLons], bool angle) {
    double c00 = t[i][j], c01 = t[i][j + 1], c10 = t[i + 1][j], c11 = t[i + 1][j + 1];
    if (angle) {  // unwrap around c00 so ±180° neighbours interpolate the short way
      auto near = [&](double a) { return c00 + std::remainder(a - c00, 360.0); };
      c01 = near(c01), c10 = near(c10), c11 = near(c11);
    }
    return (1 - u) * ((1 - v) * c00 + v * c01) + u * ((1 - v) * c10 + v * c11);
  };
  GeomagneticField f;
  f.declination_deg = std::remainder(bilinear(table.decl, true), 360.0);
  f.inclination_deg = bilinear(table.incl, false);
  f.strength = bilinear(table.strength_uT, false) * 1e-6;
  return f;
}

ignition::math::Quaterniond world_to_enu(const components::SphericalCoordinates& sc) {
  // World axes are ENU rotated by heading about the downward vector: -heading about up.
  return ignition::math::Quaterniond(0, 0, -sc.heading_deg * kDeg);
}

}  // namespace kestrel::sensors
