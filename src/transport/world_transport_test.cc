// World control at run time through the services: set_physics (gravity, magnetic field, step
// size, real-time factor 0) and WorldControl.seed. Runs inside scripts/netns like
// transport_test.cc; waits poll the world's state, no test asserts on durations.
#include "kestrel/components/physics.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases
using ignition::math::Vector3d;

// One free body, no ground: free fall.
constexpr const char* kFallWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ball">
      <pose>0 0 100 0 0 0</pose>
      <link name="link">
        <inertial><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
      </link>
    </model>
  </world>
</sdf>)";

// A static IMU with gaussian noise on every axis.
constexpr const char* kNoisyImuWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
    <model name="m">
      <static>true</static>
      <link name="l">
        <sensor name="imu" type="imu">
          <update_rate>1000</update_rate>
          <imu>
            <angular_velocity>
              <x><noise type="gaussian"><stddev>0.01</stddev><bias_stddev>0.1</bias_stddev></noise></x>
              <y><noise type="gaussian"><stddev>0.01</stddev></noise></y>
              <z><noise type="gaussian"><stddev>0.01</stddev></noise></z>
            </angular_velocity>
            <linear_acceleration>
              <x><noise type="gaussian"><stddev>0.1</stddev></noise></x>
              <y><noise type="gaussian"><stddev>0.1</stddev></noise></y>
              <z><noise type="gaussian"><stddev>0.1</stddev></noise></z>
            </linear_acceleration>
          </imu>
        </sensor>
      </link>
    </model>
  </world>
</sdf>)";

class WorldTransportTest : public TransportTest {
 protected:
  // Vertical velocity [m/s, world] and height [m] of the ball's link.
  std::pair<double, double> fall_state() {
    return *detail::on_step_thread<std::pair<double, double>>(
        *runner_,
        [](sim::Runner& r) {
          auto& reg = r.registry();
          const auto link = reg.find_scoped("tw::ball::link");
          return std::pair{reg.get<c::WorldLinearVelocity>(link).value.Z(),
                           reg.get<c::WorldPose>(link).value.Pos().Z()};
        },
        std::chrono::seconds(5));
  }

  void step_and_wait(std::uint64_t n) {
    const auto target = iterations() + n;
    ASSERT_TRUE(control("multi_step: " + std::to_string(n) + " pause: true"));
    ASSERT_TRUE(wait_for([target](sim::Runner& r) { return r.info().iterations == target; }));
  }

  bool set_gravity(const Vector3d& g) {
    msgs::Physics p;
    p.mutable_gravity()->set_x(g.X());
    p.mutable_gravity()->set_y(g.Y());
    p.mutable_gravity()->set_z(g.Z());
    return call_bool("/world/tw/set_physics", p);
  }

  Vector3d gravity() {
    return *detail::on_step_thread<Vector3d>(
        *runner_, [](sim::Runner& r) { return r.registry().get<c::Gravity>(r.world()).value; },
        std::chrono::seconds(5));
  }

  void restart(std::uint64_t seed) {
    if (thread_.joinable()) {
      runner_->stop();
      thread_.join();
    }
    runner_.reset();
    start(true, [seed](sim::Runner& r) {
      auto o = r.options();
      o.seed = seed;
      r.set_options(o);
    });
  }

  // The IMU's last reading: 3 gyro + 3 accelerometer values.
  std::array<double, 6> imu_reading() {
    return *detail::on_step_thread<std::array<double, 6>>(
        *runner_,
        [](sim::Runner& r) {
          const auto& reg = r.registry();
          const auto& m = reg.get<c::ImuReading>(reg.find_scoped("tw::m::l::imu"));
          return std::array<double, 6>{m.angular_velocity.X(),    m.angular_velocity.Y(),
                                       m.angular_velocity.Z(),    m.linear_acceleration.X(),
                                       m.linear_acceleration.Y(), m.linear_acceleration.Z()};
        },
        std::chrono::seconds(5));
  }

  // Runs 30 steps, sets the seed (when given) through the control service, runs 20 more.
  std::array<double, 6> noise_run(std::uint64_t start_seed, std::uint32_t new_seed) {
    restart(start_seed);
    step_and_wait(30);
    if (new_seed != 0) {
      EXPECT_TRUE(control("pause: true seed: " + std::to_string(new_seed)));
      EXPECT_TRUE(wait_for([new_seed](sim::Runner& r) { return r.options().seed == new_seed; }));
    }
    step_and_wait(20);
    return imu_reading();
  }
};

TEST_F(WorldTransportTest, FreeFallFollowsTheGravitySetThroughTheService) {
  world_text_ = kFallWorld;
  start(true);
  static constexpr double kG = -3.7;  // Mars
  ASSERT_TRUE(set_gravity({0, 0, kG}));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    return r.registry().get<c::Gravity>(r.world()).value == Vector3d(0, 0, kG);
  }));
  step_and_wait(200);
  // Semi-implicit Euler: v_n = n·g·dt exactly; z_n = z0 + g·dt²·n(n+1)/2.
  constexpr double dt = 0.001;
  auto [v, z] = fall_state();
  EXPECT_NEAR(v, kG * 200 * dt, 1e-9);
  EXPECT_NEAR(z, 100 + kG * dt * dt * 200 * 201 / 2, 1e-9);
  // Analytic ½gt² within the integrator's O(dt) error, far from Earth's 9.8.
  EXPECT_NEAR(z, 100 + 0.5 * kG * 0.2 * 0.2, 1e-3);

  // Mid-flight: the velocity carries across the change.
  static constexpr double kMoon = -1.62;
  ASSERT_TRUE(set_gravity({0, 0, kMoon}));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    return r.registry().get<c::Gravity>(r.world()).value.Z() == kMoon;
  }));
  step_and_wait(100);
  std::tie(v, z) = fall_state();
  EXPECT_NEAR(v, kG * 0.2 + kMoon * 0.1, 1e-9);

  // Reset returns to the world's own gravity and its fall.
  ASSERT_TRUE(control("pause: true reset { all: true }"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 0; }));
  EXPECT_EQ(gravity(), Vector3d(0, 0, -9.8));
  step_and_wait(100);
  std::tie(v, z) = fall_state();
  EXPECT_NEAR(v, -9.8 * 0.1, 1e-9);
}

TEST_F(WorldTransportTest, SetPhysicsChangesOnlyTheFieldsGiven) {
  start(true);
  ASSERT_TRUE(set_gravity({0.5, 0, -5}));
  msgs::Physics rtf;
  rtf.set_real_time_factor(3);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", rtf));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.options().real_time_factor == 3; }));
  EXPECT_EQ(gravity(), Vector3d(0.5, 0, -5)) << "an RTF-only request must not touch gravity";
  EXPECT_EQ(runner_->options().step_size, Duration{1'000'000});

  // Magnetic field alone: gravity and RTF stay.
  msgs::Physics mag;
  mag.mutable_magnetic_field()->set_x(2e-5);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", mag));
  auto field = *detail::on_step_thread<Vector3d>(
      *runner_, [](sim::Runner& r) { return r.registry().get<c::MagneticField>(r.world()).value; },
      std::chrono::seconds(5));
  EXPECT_EQ(field, Vector3d(2e-5, 0, 0));
  EXPECT_EQ(gravity(), Vector3d(0.5, 0, -5));
  EXPECT_EQ(runner_->options().real_time_factor, 3);
}

TEST_F(WorldTransportTest, RealTimeFactorZeroWhenNamedInTheHeader) {
  start(true);
  msgs::Physics two;
  two.set_real_time_factor(2);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", two));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.options().real_time_factor == 2; }));

  // proto3: a plain 0 is "not given" and changes nothing.
  msgs::Physics zero;
  zero.set_real_time_factor(0);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", zero));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(runner_->options().real_time_factor, 2);

  // Named in header set_fields: 0 = as fast as possible, in the Runner and in PhysicsParams.
  msgs::Physics fast;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(header { data { key: "set_fields" value: "real_time_factor" } } real_time_factor: 0)",
      &fast));
  ASSERT_TRUE(call_bool("/world/tw/set_physics", fast));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    return r.options().real_time_factor == 0 &&
           r.registry().get<c::PhysicsParams>(r.world()).real_time_factor == 0;
  }));

  // Unknown names and a named zero step size are refused.
  msgs::Physics bad;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(header { data { key: "set_fields" value: "gravty" } })", &bad));
  EXPECT_FALSE(call_bool("/world/tw/set_physics", bad));
  msgs::Physics zero_step;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(header { data { key: "set_fields" value: "max_step_size" } })", &zero_step));
  EXPECT_FALSE(call_bool("/world/tw/set_physics", zero_step));
  EXPECT_EQ(runner_->options().step_size, Duration{1'000'000});
}

TEST_F(WorldTransportTest, SeedMakesLaterNoiseDependOnlyOnItAndTheTime) {
  world_text_ = kNoisyImuWorld;
  const auto a = noise_run(1, 7);
  const auto b = noise_run(2, 7);  // another start seed, same seed set at the same time
  const auto c = noise_run(1, 0);  // no seed change
  const auto d = noise_run(1, 8);  // another seed
  EXPECT_EQ(a, b) << "same seed at the same sim time must give bit-identical noise";
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_NE(a[0], 0.0);
  // Reset returns to the start seed: the run then repeats a fresh one bit for bit.
  ASSERT_TRUE(control("pause: true reset { all: true }"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 0; }));
  EXPECT_EQ(runner_->options().seed, 1u);
  step_and_wait(50);
  const auto fresh = imu_reading();
  restart(1);
  step_and_wait(50);
  EXPECT_EQ(imu_reading(), fresh);
}

}  // namespace
}  // namespace kestrel::transport
