#pragma once
// Small test helpers shared by the sensor tests.

#include <gtest/gtest.h>

#include <ignition/math/Vector3.hh>

namespace kestrel::sensors::testing {

inline void expect_near(const ignition::math::Vector3d& a, const ignition::math::Vector3d& b,
                        double tol) {
  EXPECT_NEAR(a.X(), b.X(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Y(), b.Y(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Z(), b.Z(), tol) << a << " vs " << b;
}

/// A world (1 ms step, gravity −9.81 z) with one static or free model `m` holding link `l`,
/// whose <link> contents are `link_body` (sensors...), plus `extra` world elements.
inline std::string one_link_world(const std::string& model_pose, const std::string& link_body,
                                  bool is_static = true, const std::string& extra = "") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>)" +
         extra + R"(<model name="m"><static>)" + (is_static ? "true" : "false") +
         "</static><pose>" + model_pose + R"(</pose><link name="l">
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>)" +
         link_body + R"(</link></model></world></sdf>)";
}

}  // namespace kestrel::sensors::testing
