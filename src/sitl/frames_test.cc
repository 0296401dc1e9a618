#include "sitl/frames.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kestrel::sitl {
namespace {

void expect_near(const Vector3d& a, const Vector3d& b, double tol = 1e-12) {
  EXPECT_NEAR(a.X(), b.X(), tol);
  EXPECT_NEAR(a.Y(), b.Y(), tol);
  EXPECT_NEAR(a.Z(), b.Z(), tol);
}

TEST(Frames, VectorsSwapAxes) {
  expect_near(enu_to_ned({1, 2, 3}), {2, 1, -3});  // east 1, north 2, up 3
  expect_near(ned_to_enu({2, 1, -3}), {1, 2, 3});
  expect_near(flu_to_frd({1, 2, 3}), {1, -2, -3});
  expect_near(frd_to_flu({1, -2, -3}), {1, 2, 3});
}

TEST(Frames, LevelBodyFacingEastHasYawNinetyDegreesInNed) {
  const Quaterniond q = enu_flu_to_ned_frd(Quaterniond::Identity);
  const Vector3d e = q.Euler();  // roll, pitch, yaw (body FRD in NED)
  EXPECT_NEAR(e.X(), 0, 1e-12);
  EXPECT_NEAR(e.Y(), 0, 1e-12);
  EXPECT_NEAR(e.Z(), M_PI / 2, 1e-12);
  // The body x axis (forward) is east.
  expect_near(q.RotateVector({1, 0, 0}), {0, 1, 0});
  EXPECT_GE(q.W(), 0);
}

TEST(Frames, KnownRotationsMatchNedConventions) {
  // Facing north (ENU yaw +90°), nose up 0.3 rad (a negative rotation about FLU y), right wing
  // down 0.2 rad (a positive roll about FLU x rolls the left wing up = right wing down).
  const Quaterniond q_ENU_FLU =
      Quaterniond(0, 0, M_PI / 2) * Quaterniond(0, -0.3, 0) * Quaterniond(0.2, 0, 0);
  const Vector3d e = enu_flu_to_ned_frd(q_ENU_FLU).Euler();
  EXPECT_NEAR(e.X(), 0.2, 1e-12);  // FRD roll: right wing down is positive
  EXPECT_NEAR(e.Y(), 0.3, 1e-12);  // FRD pitch: nose up is positive
  EXPECT_NEAR(e.Z(), 0.0, 1e-12);  // heading north
}

TEST(Frames, VectorRotationsAgreeWithComponentConversions) {
  // Any vector: converting it in the body and rotating with the NED quaternion equals rotating
  // in ENU and converting in the world.
  const Quaterniond q_ENU_FLU(0.4, -0.7, 2.1);
  const Quaterniond q_NED_FRD = enu_flu_to_ned_frd(q_ENU_FLU);
  const Vector3d v_flu(0.3, -1.2, 4.5);
  expect_near(q_NED_FRD.RotateVector(flu_to_frd(v_flu)), enu_to_ned(q_ENU_FLU.RotateVector(v_flu)));
}

TEST(Frames, RoundTrip) {
  const Quaterniond q(-0.5, 1.1, -2.9);
  const Quaterniond back = ned_frd_to_enu_flu(enu_flu_to_ned_frd(q));
  // Same rotation (quaternions equal up to sign).
  const double dot = q.W() * back.W() + q.X() * back.X() + q.Y() * back.Y() + q.Z() * back.Z();
  EXPECT_NEAR(std::abs(dot), 1.0, 1e-12);
}

TEST(Frames, SpecificForceAtRestPointsUpInFluAndUpIsNegativeZInFrd) {
  // An accelerometer at rest, level, reads +g along FLU z; PX4 expects −g along FRD z.
  expect_near(flu_to_frd({0, 0, 9.80665}), {0, 0, -9.80665});
}

TEST(Frames, EulerNedFrdOfKnownAttitudes) {
  // Nose east, level: NED yaw +π/2.
  const Vector3d east = euler_ned_frd(Quaterniond::Identity);
  EXPECT_NEAR(east.X(), 0, 1e-12);
  EXPECT_NEAR(east.Y(), 0, 1e-12);
  EXPECT_NEAR(east.Z(), M_PI / 2, 1e-12);
  // Nose north (ENU yaw +π/2): NED yaw 0; nose north-west (ENU yaw +3π/4): NED yaw −π/4.
  EXPECT_NEAR(euler_ned_frd(Quaterniond(0, 0, M_PI / 2)).Z(), 0, 1e-12);
  EXPECT_NEAR(euler_ned_frd(Quaterniond(0, 0, 3 * M_PI / 4)).Z(), -M_PI / 4, 1e-12);
  // Nose up 0.3 rad while facing north: NED pitch +0.3.
  EXPECT_NEAR(euler_ned_frd(Quaterniond(0, 0, M_PI / 2) * Quaterniond(0, -0.3, 0)).Y(), 0.3,
              1e-12);
}

TEST(Frames, YawRateNedTurnsTheOtherWayInEnu) {
  // Clockwise seen from above (NED +) is a negative rotation about ENU up.
  EXPECT_EQ(yaw_rate_ned_to_enu(0.5), -0.5);
  // A yaw that grows at r in NED shrinks at r in ENU: integrate the ENU rate and compare.
  const double r = 0.4, dt = 0.25;
  const Quaterniond q0(0, 0, 0.1), q1 = Quaterniond(0, 0, 0.1 + yaw_rate_ned_to_enu(r) * dt);
  EXPECT_NEAR(euler_ned_frd(q1).Z() - euler_ned_frd(q0).Z(), r * dt, 1e-12);
}

}  // namespace
}  // namespace kestrel::sitl
