// MovingPlatformController (PX4's plugin) against the paths its PD law implies. Waiting for
// PX4's vehicle (PX4_SIM_MODEL set, the model absent) there is no noise and no velocity set
// point: the link, put at twice its height by the heading pose command as PX4's plugin does,
// settles as z'' = −(z − h) − z' exactly. Moving, the velocity follows v' = −(v − v_sp) plus
// low-passed noise: the path t − (1 − e^−t) at the set speed along the heading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

// Sets environment variables for the life of the guard (PX4's launcher sets them).
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* n : kNames) ::unsetenv(n);
    for (const auto& [n, v] : vars) ::setenv(n, v, 1);
  }
  ~Env() {
    for (const char* n : kNames) ::unsetenv(n);
  }

 private:
  static constexpr const char* kNames[] = {"PX4_GZ_PLATFORM_VEL", "PX4_GZ_PLATFORM_HEADING_DEG",
                                           "PX4_SIM_MODEL", "PX4_GZ_MODEL_NAME", "px4_instance"};
};

// PX4's moving_platform model (a 10 t, 5 m × 5 m platform whose link stands 2 m above the model
// frame) written from its published numbers, with `extra` models beside it.
std::string platform_world(const std::string& params, const std::string& extra = "") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>)" +
         extra + R"(
    <model name="flat_platform"><link name="platform_link"><pose>0 0 2 0 0 0</pose>
        <inertial><mass>10000</mass><inertia><ixx>10000</ixx><iyy>10000</iyy><izz>10000</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>5 5 0.1</size></box></geometry></collision>
      </link>
      <plugin filename="libMovingPlatformController.so" name="custom::MovingPlatformController">)" +
         params + "</plugin></model></world></sdf>";
}
const std::string kLink = "<link_name>platform_link</link_name>";

const ignition::math::Pose3d& pose(LoadedWorld& w) {
  return w.r().get<c::WorldPose>(w.find("w::flat_platform::platform_link")).value;
}

TEST(MovingPlatformController, WaitingForThePx4VehicleItSettlesToItsHeightAsThePdLawSays) {
  Env env({{"PX4_SIM_MODEL", "gz_x500"}});  // waits for model x500_0, which never comes
  LoadedWorld w(platform_world(kLink));
  w.step(1);
  EXPECT_NEAR(pose(w).Pos().Z(), 4.0, 1e-6);  // the model frame moved to the link's 2 m
  // z'' = −(z − 2) − z', z(0) = 4, z'(0) = 0: ωn = 1, ζ = 0.5.
  const double wd = std::sqrt(0.75);
  for (int s = 1; s <= 12; ++s) {
    w.step(1000);
    const double t = w.t() - 0.001;
    const double z = 2 + 2 * std::exp(-t / 2) * (std::cos(wd * t) + 0.5 / wd * std::sin(wd * t));
    EXPECT_NEAR(pose(w).Pos().Z(), z, 5e-3) << "t = " << t;
    EXPECT_NEAR(pose(w).Pos().X(), 0, 1e-9);
    EXPECT_NEAR(pose(w).Pos().Y(), 0, 1e-9);
    EXPECT_NEAR(pose(w).Rot().Yaw(), 0, 1e-9);
  }
}

TEST(MovingPlatformController, MovesAtTheSetSpeedAlongTheHeadingOnceThePx4VehicleExists) {
  Env env({{"PX4_GZ_PLATFORM_VEL", "2"}, {"PX4_GZ_PLATFORM_HEADING_DEG", "90"},
           {"PX4_SIM_MODEL", "gz_x500"}, {"px4_instance", "1"}});
  const std::string vehicle =
      R"(<model name="x500_1"><static>true</static><pose>50 50 0.5 0 0 0</pose><link name="b"><inertial><mass>1</mass>
      <inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link></model>)";
  LoadedWorld w(platform_world(kLink, vehicle));
  w.step(10001);
  const double y10 = pose(w).Pos().Y();
  w.step(10000);
  const double t = w.t() - 0.001;  // the first step put the platform at its heading
  // v' = −(v − 2) from rest: y = 2·(t − (1 − e^−t)); the noise wanders it by ~0.1 m.
  EXPECT_NEAR(pose(w).Pos().Y(), 2 * (t - (1 - std::exp(-t))), 0.5);
  EXPECT_NEAR((pose(w).Pos().Y() - y10) / 10, 2.0, 0.05);  // mean speed over the last 10 s
  EXPECT_NEAR(pose(w).Pos().X(), 0, 0.5);
  EXPECT_NEAR(pose(w).Pos().Z(), 2, 0.1);
  EXPECT_NEAR(pose(w).Rot().Yaw(), M_PI / 2, 0.15);
  EXPECT_GT(std::abs(pose(w).Rot().Roll()) + std::abs(pose(w).Rot().Pitch()), 0);  // the noise
}

TEST(MovingPlatformController, SameSeedSamePathAfterResetAndAcrossRuns) {
  Env env({});
  LoadedWorld a(platform_world(kLink)), b(platform_world(kLink));
  a.step(3000);
  b.step(3000);
  const auto first = pose(a);
  EXPECT_EQ(pose(b), first);
  a.runner->reset_now();
  a.step(3000);
  EXPECT_EQ(pose(a), first);
}

TEST(MovingPlatformController, RefusedParametersAndEnvironment) {
  {
    Env env({});
    EXPECT_THAT(testing::load_error(platform_world("")), ::testing::HasSubstr("link_name"));
    EXPECT_THAT(testing::load_error(platform_world("<link_name>deck</link_name>")),
                ::testing::HasSubstr("deck"));
    EXPECT_THAT(testing::load_error(platform_world(kLink + "<speed>1</speed>")),
                ::testing::HasSubstr("speed"));
  }
  Env env({{"PX4_GZ_PLATFORM_VEL", "fast"}});
  EXPECT_THAT(testing::load_error(platform_world(kLink)),
              ::testing::HasSubstr("PX4_GZ_PLATFORM_VEL='fast' is not a number"));
}

}  // namespace
}  // namespace kestrel::systems
