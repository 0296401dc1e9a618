// PX4's rovers from ../shared (models/px4/models) drive when the commands PX4 sends are
// published: the ignition.msgs.Actuators on /model/M/command/motor_speed (velocity[n] for the
// JointController of actuator n; PX4's airframe reverses some, SIM_GZ_WH_REV: r1_rover's right
// wheels) and the steering angle as an ignition.msgs.Double on /model/M/servo_0 (the Ackermann
// rover's JointPositionControllers). Each rover's wheels turn at the commanded speed and it
// drives straight ahead at their rim speed (wheel radius × wheel speed) within 1 %. The world is
// paused and the test steps it, the commands delivered between steps: what it measures does
// not depend on transport's timing or the machine's load (a skidding rover's yaw does). Runs inside
// scripts/netns like the other transport tests (own IGN_PARTITION); skips visibly without
// ../shared.
//
// Before the contact damping of src/physics/README.md ("Contact stiffness and damping") the
// lawnmower did not move (undamped capped wheel contacts); r1_rover had been commanded without
// PX4's reversal, spinning its sides against each other. Turning: docs/compatibility.md,
// "PX4 rovers".
#include <ignition/msgs/actuators.pb.h>
#include <ignition/msgs/double.pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <vector>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/time.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

struct Rover {
  const char* model;       // folder in ../shared/models/px4/models
  const char* name;        // the <model name> in its model.sdf
  double step;             // the step of PX4's world for it [s] (rover.sdf 0.002, lawn.sdf 0.004)
  int actuators;           // how many velocity entries its JointControllers read
  std::vector<int> left;   // actuator numbers of its left wheels (empty: steered by servo_0)
  std::vector<int> reversed;  // actuators PX4 sends reversed (its airframe's SIM_GZ_WH_REV)
  double radius;           // its driven wheels' radius [m]
  const char* joint;       // one of its driven wheel joints (a left one)
  const char* steering;    // Ackermann: the steered wheel's joint, else ""
  double track;            // differential: distance between left and right wheels [m]
  double wheelbase;        // Ackermann: front wheel to rear axle [m]
  double yaw_low, yaw_high;  // measured yaw rate over the kinematic one: the bounds it meets
  const char* no_turn = "";  // why it does not turn yet (TurnsAsItsKinematicsSay skips, saying so)
};

class Px4RoverTest : public TransportTest, public ::testing::WithParamInterface<Rover> {
 protected:
  struct State {
    double t;           // sim time [s]
    ignition::math::Pose3d pose;  // base_link's world pose
    double wheel;       // the driven joint's speed [rad/s]
    double steer;       // the steering joint's angle [rad] (0 without one)
  };
  State state() {
    const Rover& r = GetParam();
    const std::string base = std::string("rw::") + r.name + "::base_link";
    const std::string wheel = std::string("rw::") + r.name + "::" + r.joint;
    const std::string steering = std::string("rw::") + r.name + "::" + r.steering;
    return *detail::on_step_thread<State>(
        *runner_,
        [&](sim::Runner& run) {
          auto& reg = run.registry();
          const auto* p = reg.try_get<c::WorldPose>(reg.find_scoped(base));
          const auto* v = reg.try_get<c::JointVelocity>(reg.find_scoped(wheel));
          const auto* q =
              *r.steering ? reg.try_get<c::JointPosition>(reg.find_scoped(steering)) : nullptr;
          return State{to_seconds(run.info().sim_time),
                       p ? p->value : ignition::math::Pose3d::Zero,
                       v && !v->data.empty() ? v->data[0] : 0.0,
                       q && !q->data.empty() ? q->data[0] : 0.0};
        },
        std::chrono::seconds(5));
  }
  // Steps the paused world `seconds` of sim time in 0.05 s chunks, sampling the state after
  // each; returns the first and last state and the yaw turned (unwrapped) between them. The
  // world only steps here, so what it does depends on nothing but the commands it was given.
  struct Span {
    State from, to;
    double yaw;    // [rad]
    double wheel;  // the driven joint's mean speed over the samples [rad/s]
    double steer;  // the steering joint's mean angle over the samples [rad]
  };
  Span hold(double seconds) {
    Span s{state(), {}, 0, 0, 0};
    State last = s.from;
    int samples = 0;
    while (last.t < s.from.t + seconds - 1e-9 && advance(0.05)) {
      const State now = state();
      s.yaw += std::remainder(now.pose.Rot().Yaw() - last.pose.Rot().Yaw(), 2 * M_PI);
      last = now;
      s.wheel += now.wheel;
      s.steer += now.steer;
      ++samples;
    }
    s.to = last;
    s.wheel /= std::max(samples, 1);
    s.steer /= std::max(samples, 1);
    return s;
  }
  // Steps the paused world `seconds` of sim time and waits for it (false: it did not run).
  bool advance(double seconds) {
    const auto n = static_cast<std::uint64_t>(std::lround(seconds / GetParam().step));
    const std::uint64_t target = iterations() + n;
    runner_->step_n(n);
    for (int i = 0; i < 60000; ++i) {  // a minute: an ASan build on a loaded machine
      if (iterations() >= target) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // How many messages the world's systems took from `topic` (-1: none listens to it).
  int received(const std::string& topic) {
    return *detail::on_step_thread<int>(
        *runner_,
        [&](sim::Runner& run) {
          int n = -1;
          const auto count = [&](const auto& entries) {
            for (const auto& entry : entries) {
              if (entry.topic == topic) n = std::max(n, 0) + static_cast<int>(entry.count);
            }
          };
          run.registry().each<c::TopicInputs>([&](ecs::Entity, const c::TopicInputs& in) {
            count(in.actuators);
            count(in.real);
          });
          return n;
        },
        std::chrono::seconds(5));
  }
  // Publishes `send` while the world is paused until every system listening to its topics has
  // taken it: the next step sees the new commands, whatever transport's timing.
  bool deliver(const std::function<void()>& send) {
    const std::string m = std::string("/model/") + GetParam().name;
    const std::vector<std::string> topics{m + "/command/motor_speed", m + "/servo_0"};
    std::vector<int> before;
    for (const auto& t : topics) before.push_back(received(t));
    for (int i = 0; i < 2000; ++i) {
      send();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      bool all = true;
      for (std::size_t k = 0; k < topics.size(); ++k) {
        all = all && (before[k] < 0 || received(topics[k]) > before[k]);
      }
      if (all) return true;
    }
    return false;
  }

  // Loads the rover on a ground plane and lets it settle for 1 s (false: the world did not run).
  bool load() {
    const Rover& r = GetParam();
    const auto dir = std::filesystem::path(KESTREL_SHARED_DIR) / "models/px4/models" / r.model;
    world_text_ = std::string(R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="rw">
    <physics type="ode"><max_step_size>)") +
                  std::to_string(r.step) + R"(</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ground"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal></plane>
      </geometry></collision></link>
    </model>
    <include><uri>)" + dir.string() +
                  R"(</uri><pose>0 0 0.3 0 0 0</pose></include>
  </world>
</sdf>)";
    start(true);
    motors_ = node_->Advertise<msgs::Actuators>("/model/" + std::string(r.name) +
                                                "/command/motor_speed");
    servo_ = node_->Advertise<msgs::Double>("/model/" + std::string(r.name) + "/servo_0");
    return advance(1.0);
  }
  // What PX4 publishes for these wheel speeds [rad/s] and steering angle [rad].
  std::function<void()> wheels(double left, double right, double steer) {
    const Rover& r = GetParam();
    msgs::Actuators a;
    for (int i = 0; i < r.actuators; ++i) {
      const bool is_left = std::find(r.left.begin(), r.left.end(), i) != r.left.end();
      const bool reversed = std::find(r.reversed.begin(), r.reversed.end(), i) != r.reversed.end();
      a.add_velocity((reversed ? -1 : 1) * (is_left ? left : right));
    }
    return [=, this] {
      motors_.Publish(a);
      msgs::Double d;
      d.set_data(steer);
      servo_.Publish(d);
    };
  }
  static constexpr double kOmega = 10;  // the wheel speed commanded [rad/s]
  // Commands kOmega on every wheel and steps until the driven wheel turns at it (a
  // force-controlled wheel takes time), at most 5 s.
  bool rolling() {
    if (!deliver(wheels(kOmega, kOmega, 0))) return false;
    for (int i = 0; i < 100; ++i) {
      if (std::abs(state().wheel - kOmega) < 0.02 * kOmega) return true;
      if (!advance(0.05)) return false;
    }
    return false;
  }

  ignition::transport::Node::Publisher motors_, servo_;
};

TEST_P(Px4RoverTest, DrivesAheadAtItsWheelsRimSpeed) {
  const Rover& r = GetParam();
  if (!std::filesystem::exists(std::filesystem::path(KESTREL_SHARED_DIR) / "models/px4/models" /
                               r.model / "model.sdf")) {
    GTEST_SKIP() << "PX4's model zoo (" << KESTREL_SHARED_DIR << "/models/px4/models) is absent";
  }
  ASSERT_TRUE(load());
  ASSERT_TRUE(rolling()) << r.joint << " never turned at the commanded speed: " << state().wheel;
  // Ahead: 1 s to reach the speed, then 2 s measured along the initial heading.
  hold(1.0);
  const Span a = hold(2.0);
  ASSERT_GE(a.to.t - a.from.t, 2.0 - 1e-9) << "the world did not run";
  const auto d = a.to.pose.Pos() - a.from.pose.Pos();
  const double yaw0 = a.from.pose.Rot().Yaw();
  const double ahead = d.X() * std::cos(yaw0) + d.Y() * std::sin(yaw0);
  const double across = -d.X() * std::sin(yaw0) + d.Y() * std::cos(yaw0);
  // The wheels turn at the command (a force-controlled wheel within its PI's offset: the
  // lawnmower's i_max leaves 1 %), and the rover advances at their rim speed.
  const double rim = a.wheel * r.radius;  // [m/s]
  const double speed = ahead / (a.to.t - a.from.t);
  std::cout << r.model << ": " << speed << " m/s ahead, " << speed / rim
            << " of the wheels' rim speed " << rim << " m/s (wheel " << a.wheel
            << " rad/s); across " << across << " m, yaw " << a.yaw << " rad\n";
  EXPECT_NEAR(a.wheel, kOmega, 0.02 * kOmega) << r.model;
  EXPECT_NEAR(speed / rim, 1, 0.01) << r.model << " moved " << d;
  EXPECT_LT(std::abs(across), 0.01 * rim * (a.to.t - a.from.t)) << r.model;
  EXPECT_LT(std::abs(a.yaw), 0.01) << r.model;
}

// Turning: a differential rover with its sides at 50 % and 150 % of kOmega yaws at
// r·(ω_right − ω_left) / track by its kinematics, the Ackermann rover steered 0.3 rad at
// v·tan δ / wheelbase. A skid-steered rover's wheels slip sideways as it turns, so it yaws
// slower than that; each rover's bounds are in its row below.
TEST_P(Px4RoverTest, TurnsAsItsKinematicsSay) {
  const Rover& r = GetParam();
  if (!std::filesystem::exists(std::filesystem::path(KESTREL_SHARED_DIR) / "models/px4/models" /
                               r.model / "model.sdf")) {
    GTEST_SKIP() << "PX4's model zoo (" << KESTREL_SHARED_DIR << "/models/px4/models) is absent";
  }
  if (*r.no_turn) GTEST_SKIP() << r.model << " does not turn yet: " << r.no_turn;
  ASSERT_TRUE(load());
  ASSERT_TRUE(rolling()) << r.joint << " never turned at the commanded speed: " << state().wheel;
  constexpr double kSteer = 0.3;  // [rad]
  const bool ackermann = *r.steering != 0;
  ASSERT_TRUE(deliver(ackermann ? wheels(kOmega, kOmega, kSteer)
                                : wheels(0.5 * kOmega, 1.5 * kOmega, 0)));
  hold(1.0);
  const Span a = hold(2.0);
  // The steering angle as it was (the PID's, about the command), the wheels' speed as commanded.
  const double kinematic = ackermann ? kOmega * r.radius * std::tan(a.steer) / r.wheelbase
                                     : r.radius * kOmega / r.track;  // [rad/s]
  ASSERT_GE(a.to.t - a.from.t, 2.0 - 1e-9) << "the world did not run";
  const double rate = a.yaw / (a.to.t - a.from.t);
  std::cout << r.model << ": yaw rate " << rate << " rad/s, " << rate / kinematic
            << " of the kinematic " << kinematic << " rad/s (wheel " << a.wheel << " rad/s"
            << (ackermann ? ", mean steering " + std::to_string(a.steer) + " rad" : std::string())
            << ")\n";
  EXPECT_GE(rate / kinematic, r.yaw_low) << r.model;
  EXPECT_LE(rate / kinematic, r.yaw_high) << r.model;
}

// Tracks and wheelbases from each model.sdf: rover_differential's rear wheels at y = ±0.3 m,
// rover_ackermann's front wheel 0.5 m ahead of its rear axle, rover_mecanum's wheels at ±0.3 m,
// r1_rover's at ±0.16317 m, the lawnmower's at ±0.45 m. Turning (docs/compatibility.md, "PX4
// rovers"): rover_differential's driven rear wheels and free front wheels turn it at its
// kinematic rate; the four-wheel skid steerers (r1_rover, rover_mecanum, whose rollers are
// isotropic friction here) slip sideways and yaw at 0.55-0.63 of it; rover_ackermann's rear
// wheels are both held at the command (no differential: they scrub) and its steering swings
// between 0.1 rad and its limit under the p 100 / d 0 PID: where in that swing the turn starts
// decides its yaw, 0.10-0.52 of v·tan δ / wheelbase for turns started 0-1 s apart. Its band says
// only that it turns the way it is steered and never faster than its geometry.
INSTANTIATE_TEST_SUITE_P(
    Zoo, Px4RoverTest,
    ::testing::Values(
        Rover{"rover_differential", "rover_differential", 0.002, 2, {1}, {}, 0.1,
              "wheel_rear_left_joint", "", 0.6, 0, 0.9, 1.1},
        Rover{"rover_ackermann", "rover_ackermann", 0.002, 1, {}, {}, 0.1, "wheel_rear_left_joint",
              "wheel_front_steering_joint", 0, 0.5, 0.05, 1.0},
        Rover{"rover_mecanum", "rover_mecanum", 0.002, 4, {0, 2}, {}, 0.1, "wheel_rear_left_joint",
              "", 0.6, 0, 0.5, 0.8},
        Rover{"r1_rover", "r1_rover", 0.002, 2, {1}, {0}, 0.0686, "motor_0", "", 0.32634, 0, 0.45,
              0.7},
        Rover{"lawnmower", "zero_turn_mower", 0.004, 2, {1}, {}, 0.22, "left_wheel_joint", "", 0.9, 0,
              0.9, 1.1,
              "its wheels' <max_contacts>1 (one contact per wheel, a point that pivots) is not "
              "honoured: MuJoCo touches each 0.22 m wide wheel at both ends of its width, and "
              "that scrub holds the chassis against the 26 N·m per wheel its PI gives (yaw "
              "0.05 of r·Δω / track)"}),
    [](const auto& info) { return std::string(info.param.model); });

}  // namespace
}  // namespace kestrel::transport
