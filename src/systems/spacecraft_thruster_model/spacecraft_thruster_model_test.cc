// SpacecraftThrusterModel (gz-sim's and PX4's): within each PWM period the thruster pushes
// max_thrust along its link's +z for the commanded share of the period and nothing after, at the
// link's centre of mass; a free spacecraft in zero gravity gains exactly the impulse of the
// steps the valve was open (F·dt each) and on average the commanded share of the thrust; PX4's
// build reads velocity / max_duty_cycle; a command too short for the actuator or not finite, and
// a reset, leave the thruster off; bad parameters are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

constexpr double kMass = 2.0, kThrust = 1.4, kDt = 0.001;

// A 2 kg spacecraft in zero gravity whose thruster link is turned so that its +z points along
// the world's −y, its centre of mass 0.2 m off the link origin (a force at the origin would
// spin it).
std::string craft_world(const std::string& filename, const std::string& params) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="dart"><link name="thruster_0"><pose>0 0 0 1.5707963267948966 0 0</pose>
        <inertial><pose>0 0 0.2 0 0 0</pose><mass>2</mass>
          <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
      <plugin filename=")" +
         filename + R"(" name="gz::sim::systems::SpacecraftThrusterModel">)" + params +
         "</plugin></model></world></sdf>";
}

const std::string kGz = "gz-sim-spacecraft-thruster-model-system";
const std::string kParams =
    "<link_name>thruster_0</link_name><actuator_number>1</actuator_number>"
    "<duty_cycle_frequency>9.5</duty_cycle_frequency><max_thrust>1.4</max_thrust>"
    "<sub_topic>command/duty_cycle</sub_topic>";

c::ActuatorsInput& command(LoadedWorld& w) {
  return w.r().get<c::TopicInputs>(w.find("w::dart")).actuators.at(0);
}

void send(LoadedWorld& w, std::vector<double> normalized, std::vector<double> velocity = {}) {
  auto& in = command(w);
  in.normalized = std::move(normalized);
  in.velocity = std::move(velocity);
  ++in.count;
}

struct Record {
  std::vector<double> force;  // world −y component of the thrust, each step
  Vector3d torque_max;        // largest |torque about the centre of mass| seen
};

// Steps `n` times, recording the force each step.
void run(testing::WrenchProbe& p, int n, Record& rec) {
  p.on_step = [&](ecs::Registry& r) {
    const auto& X = r.get<c::WorldPose>(p.w.find("w::dart::thruster_0")).value;
    const Vector3d arm = X.Rot().RotateVector(Vector3d(0, 0, 0.2));
    const Vector3d t_com = p.wrench.torque - arm.Cross(p.wrench.force);
    rec.torque_max.Max(Vector3d(std::abs(t_com.X()), std::abs(t_com.Y()), std::abs(t_com.Z())));
    rec.force.push_back(-p.wrench.force.Y());
  };
  p.w.step(n);
  p.on_step = nullptr;
}

TEST(SpacecraftThrusterModel, PushesForTheCommandedShareOfEachPeriodAtTheCentreOfMass) {
  testing::WrenchProbe p(craft_world(kGz, kParams), "w::dart::thruster_0");
  EXPECT_EQ(command(p.w).topic, "/dart/command/duty_cycle");
  Record idle;
  run(p, 100, idle);  // no command yet
  for (double f : idle.force) EXPECT_EQ(f, 0);

  // 0.3 of the period (1/9.5 s = 105.3 ms): open while the time into the period is at most
  // 31.6 ms, i.e. 32 steps of 1 ms (0 ms ... 31 ms); a period restarts on the step after the
  // first one at or past 105.3 ms into it, so each cycle is 107 steps (0 ... 106 ms). As in
  // Gazebo the cycle began at 0 s without a command, so the command arriving after 100 ms
  // meets a period 101 ms old, closed until the step after 106 ms.
  send(p.w, {0.9, 0.3, 0.0});
  const double vy0 = p.w.r().get<c::WorldLinearVelocity>(p.w.find("w::dart::thruster_0")).value.Y();
  Record on;
  const int cycles = 40, late = 6, steps = late + cycles * 107;
  run(p, steps, on);
  ASSERT_EQ(on.force.size(), static_cast<std::size_t>(steps));
  for (int s = 0; s < late; ++s) EXPECT_EQ(on.force[s], 0) << s;
  int open = 0;
  for (int k = 0; k < cycles; ++k) {
    for (int s = 0; s < 107; ++s) {
      const double f = on.force[late + k * 107 + s];
      EXPECT_EQ(f, s < 32 ? kThrust : 0.0) << "cycle " << k << " step " << s;
      if (f > 0) ++open;
    }
  }
  EXPECT_EQ(open, 32 * cycles);
  EXPECT_LT(on.torque_max.Length(), 1e-12);  // at the centre of mass

  // The spacecraft gains the impulse of the open steps: Δv = F·dt·open / m along −y, and does
  // not turn. On average the thrust is close to the commanded 0.3 (32/107 = 0.299).
  const auto& X = p.w.r().get<c::WorldPose>(p.w.find("w::dart::thruster_0")).value;
  const auto& v = p.w.r().get<c::WorldLinearVelocity>(p.w.find("w::dart::thruster_0")).value;
  const auto& w = p.w.r().get<c::WorldAngularVelocity>(p.w.find("w::dart::thruster_0")).value;
  EXPECT_NEAR(-(v.Y() - vy0), kThrust * kDt * open / kMass, 1e-10);
  EXPECT_NEAR(v.X(), 0, 1e-12);
  EXPECT_NEAR(v.Z(), 0, 1e-9);
  EXPECT_LT(w.Length(), 1e-9);
  EXPECT_NEAR(X.Rot().Euler().X(), M_PI / 2, 1e-9);
  const double share = -(v.Y() - vy0) * kMass / (kThrust * steps * kDt);
  EXPECT_NEAR(share, 0.3, 0.005);

  // 0 and a negative command: closed.
  send(p.w, {0.0, 0.0});
  Record off;
  run(p, 300, off);
  for (double f : off.force) EXPECT_EQ(f, 0);
  send(p.w, {0.0, -1.0});
  run(p, 300, off);
  for (double f : off.force) EXPECT_EQ(f, 0);
  // Above 1: open all the time.
  send(p.w, {0.0, 1.5});
  Record full;
  run(p, 500, full);
  for (std::size_t s = 0; s < full.force.size(); ++s) EXPECT_EQ(full.force[s], kThrust) << s;
}

TEST(SpacecraftThrusterModel, PX4sBuildReadsTheVelocityArrayOverTheMaximumDutyCycle) {
  testing::WrenchProbe p(craft_world("libSpacecraftThrusterModelPlugin.so",
                                     kParams + "<max_duty_cycle>10000</max_duty_cycle>"),
                         "w::dart::thruster_0");
  // Half of 10000: 0.5 of the period (52.6 ms). Sent before the first step, the first cycle
  // is Gazebo's from 0 s (1 ... 106 ms, open 1 ... 52 ms), then 107 steps open for 53.
  send(p.w, {0.0, 0.0}, {0.0, 5000.0});
  Record rec;
  run(p, 106 + 107, rec);
  int first = 0, second = 0;
  for (int s = 0; s < 106; ++s) first += rec.force[s] > 0;
  for (int s = 106; s < 106 + 107; ++s) second += rec.force[s] > 0;
  EXPECT_EQ(first, 52);
  EXPECT_EQ(second, 53);
  EXPECT_EQ(rec.force[0], kThrust);
  EXPECT_EQ(rec.force[106], kThrust);
  // gz-sim's build reads `normalized`: the same message there gives nothing.
  testing::WrenchProbe g(craft_world(kGz, kParams), "w::dart::thruster_0");
  send(g.w, {0.0, 0.0}, {0.0, 5000.0});
  Record none;
  run(g, 300, none);
  for (double f : none.force) EXPECT_EQ(f, 0);
}

TEST(SpacecraftThrusterModel, ACommandTooShortOrNotFiniteAndAResetLeaveItOff) {
  testing::WrenchProbe p(craft_world(kGz, kParams), "w::dart::thruster_0");
  {
    testing::CapturedLog log;
    send(p.w, {1.0});  // actuator 1 of a one-value array
    Record rec;
    run(p, 300, rec);
    for (double f : rec.force) EXPECT_EQ(f, 0);
    EXPECT_THAT(log.text(),
                ::testing::HasSubstr("has 1 normalized values, too few for actuator 1"));
  }
  send(p.w, {0.0, 1.5});
  Record rec;
  run(p, 300, rec);
  EXPECT_EQ(rec.force.back(), kThrust);
  {
    testing::CapturedLog log;
    send(p.w, {0.0, std::nan("")});  // refused, loudly: off, not the last command
    Record nan;
    run(p, 300, nan);
    for (double f : nan.force) EXPECT_EQ(f, 0);
    EXPECT_THAT(log.text(), ::testing::HasSubstr("for actuator 1 is nan, not a finite number"));
  }
  send(p.w, {0.0, 1.5});
  run(p, 10, rec);
  EXPECT_EQ(rec.force.back(), kThrust);
  // Gazebo reloads the system on reset: the command is forgotten, the cycle starts again.
  p.w.runner->reset_now();
  Record after;
  run(p, 300, after);
  for (double f : after.force) EXPECT_EQ(f, 0);
}

TEST(SpacecraftThrusterModel, RefusesBadParameters) {
  using ::testing::HasSubstr;
  EXPECT_THAT(testing::load_error(craft_world(kGz,
                                              "<actuator_number>0</actuator_number>"
                                              "<duty_cycle_frequency>10</duty_cycle_frequency>"
                                              "<max_thrust>1</max_thrust>")),
              HasSubstr("link_name"));
  EXPECT_THAT(testing::load_error(craft_world(kGz,
                                              "<link_name>thruster_0</link_name>"
                                              "<duty_cycle_frequency>10</duty_cycle_frequency>"
                                              "<max_thrust>1</max_thrust>")),
              HasSubstr("actuator_number"));
  EXPECT_THAT(testing::load_error(craft_world(kGz,
                                              "<link_name>thruster_0</link_name>"
                                              "<actuator_number>0</actuator_number>"
                                              "<duty_cycle_frequency>0</duty_cycle_frequency>"
                                              "<max_thrust>1</max_thrust>")),
              HasSubstr("duty_cycle_frequency"));
  EXPECT_THAT(testing::load_error(craft_world(kGz,
                                              "<link_name>thruster_0</link_name>"
                                              "<actuator_number>0</actuator_number>"
                                              "<duty_cycle_frequency>10</duty_cycle_frequency>")),
              HasSubstr("max_thrust"));
  EXPECT_THAT(testing::load_error(craft_world("libSpacecraftThrusterModelPlugin.so", kParams)),
              HasSubstr("max_duty_cycle"));
  EXPECT_THAT(testing::load_error(craft_world(kGz, kParams + "<max_duty_cycle>1</max_duty_cycle>")),
              HasSubstr("max_duty_cycle"));
  EXPECT_THAT(testing::load_error(craft_world(kGz,
                                              "<link_name>nozzle</link_name>"
                                              "<actuator_number>0</actuator_number>"
                                              "<duty_cycle_frequency>10</duty_cycle_frequency>"
                                              "<max_thrust>1</max_thrust>")),
              HasSubstr("nozzle"));
}

}  // namespace
}  // namespace kestrel::systems
