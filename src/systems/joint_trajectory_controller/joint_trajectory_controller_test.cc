// JointTrajectoryController: gz-sim's joint_trajectory_controller_system integration test on
// an equivalent world (same models, gains, trajectories and tolerance), the progress topic, a
// ramp followed as the PD and velocity gains imply, the effort feed-forward, reset, parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/joint_trajectory.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ::testing::HasSubstr;
using testing::LoadedWorld;

constexpr double kTol = 1e-4;  // gz-sim's TOL

// gz-sim's two-link arm (test/worlds/joint_trajectory_controller.sdf): a base sphere fixed to
// the world, two 0.2 m, 0.1 kg links on revolute joints about x, the model pitched 90° so that
// the joints' axes are vertical. `damping1/2`: the joints' <dynamics><damping> (Gazebo's
// velocity model writes <dynamics> outside <axis>, where libsdformat ignores it: 0).
std::string rr_model(const std::string& name, double y, double damping1, double damping2,
                     const std::string& plugin) {
  const auto link = [&](int k) {
    return "<link name=\"" + name + "_link" + std::to_string(k) + "\"><pose relative_to=\"" + name +
           "_joint" + std::to_string(k) + R"(">0 0 0.1 0 0 0</pose>
      <collision name="c"><geometry><cylinder><radius>0.01</radius><length>0.2</length></cylinder></geometry></collision>
      <inertial><mass>0.1</mass><inertia><ixx>0.0003358</ixx><iyy>0.0003358</iyy><izz>0.000005</izz></inertia></inertial>
    </link>)";
  };
  const auto joint = [&](int k, const std::string& parent, const std::string& z, double d) {
    return "<joint name=\"" + name + "_joint" + std::to_string(k) +
           "\" type=\"revolute\"><pose relative_to=\"" + parent + "\">0 0 " + z +
           " 0 0 0</pose><parent>" + parent + "</parent><child>" + name + "_link" +
           std::to_string(k) + "</child><axis><xyz>1 0 0</xyz><dynamics><damping>" +
           std::to_string(d) + "</damping></dynamics></axis></joint>";
  };
  return "<model name=\"" + name + "\"><pose>0 " + std::to_string(y) +
         " 0 0 1.5708 0</pose><joint name=\"" + name +
         "_world\" type=\"fixed\"><parent>world</parent><child>" + name + "_link0</child></joint>" +
         "<link name=\"" + name + R"(_link0">
      <collision name="c"><geometry><sphere><radius>0.025</radius></sphere></geometry></collision>
    </link>)" +
         link(1) + link(2) + joint(1, name + "_link0", "0", damping1) +
         joint(2, name + "_link1", "0.1", damping2) + plugin + "</model>";
}

std::string jtc(const std::string& body, const std::string& attributes = "") {
  return R"(<plugin filename="libignition-gazebo-joint-trajectory-controller-system.so"
      name="ignition::gazebo::systems::JointTrajectoryController")" +
         attributes + ">" + body + "</plugin>";
}

std::string gz_jtc_world() {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="default">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>)" +
         rr_model("RR_position_control", -0.5, 0.5, 0.25, jtc(R"(
        <joint_name>RR_position_control_joint2</joint_name>
        <position_p_gain>25</position_p_gain><position_i_gain>400</position_i_gain>
        <position_d_gain>0.1</position_d_gain><position_i_min>-0.5</position_i_min>
        <position_i_max>0.5</position_i_max><position_cmd_min>-5</position_cmd_min>
        <position_cmd_max>5</position_cmd_max>
        <joint_name>RR_position_control_joint1</joint_name>
        <position_p_gain>50</position_p_gain><position_i_gain>600</position_i_gain>
        <position_d_gain>0.8</position_d_gain><position_i_min>-1</position_i_min>
        <position_i_max>1</position_i_max><position_cmd_min>-10</position_cmd_min>
        <position_cmd_max>10</position_cmd_max>)")) +
         rr_model("RR_velocity_control", 0.5, 0, 0,
                  jtc(R"(<topic>test_custom_topic/velocity_control</topic>
        <velocity_p_gain>0.6</velocity_p_gain><velocity_i_gain>175</velocity_i_gain>
        <velocity_cmd_min>-10</velocity_cmd_min><velocity_cmd_max>10</velocity_cmd_max>
        <velocity_p_gain>0.1</velocity_p_gain><velocity_i_gain>200</velocity_i_gain>
        <velocity_cmd_min>-5</velocity_cmd_min><velocity_cmd_max>5</velocity_cmd_max>)")) +
         "</world></sdf>";
}

Duration ms(std::int64_t n) { return Duration{n * 1'000'000}; }

c::JointTrajectoryEntry& trajectory_input(LoadedWorld& w, const std::string& model) {
  return w.r().get<c::JointTrajectoryTopics>(w.find(model)).entries.at(0);
}
struct Progress {
  std::string topic;
  double value;
  std::uint64_t sequence;
};
Progress progress(LoadedWorld& w, const std::string& model) {
  const auto& e = trajectory_input(w, model);
  return {e.progress_topic, e.progress, e.progress_sequence};
}

// A trajectory as transport writes it at a step boundary (src/transport/bridges.cc).
void send(LoadedWorld& w, const std::string& model, std::vector<std::string> joints,
          std::vector<c::JointTrajectoryPoint> points) {
  auto& in = trajectory_input(w, model);
  in.joint_names = std::move(joints);
  in.points = std::move(points);
  ++in.count;
}

double position(LoadedWorld& w, const std::string& joint) {
  return w.r().get<c::JointPosition>(w.find(joint)).data.at(0);
}
double velocity(LoadedWorld& w, const std::string& joint) {
  return w.r().get<c::JointVelocity>(w.find(joint)).data.at(0);
}

// Runs the points of a trajectory sent after 10 steps, checking each joint at each point's
// time (1 ms steps) and the progress Gazebo publishes on each point (1/n, 2/n, ... 1).
template <class Read>
void follow(LoadedWorld& w, const std::string& model, const std::vector<std::string>& joints,
            const std::vector<c::JointTrajectoryPoint>& points,
            const std::vector<std::vector<double>>& expected, Read read) {
  w.step(10);
  for (const auto& j : joints) EXPECT_NEAR(read(w, "default::" + model + "::" + j), 0, kTol);
  send(w, "default::" + model, joints, points);
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::int64_t at = points[i].time_from_start.count() / 1'000'000;
    w.step(static_cast<int>(at - previous));
    previous = at;
    for (std::size_t k = 0; k < joints.size(); ++k) {
      EXPECT_NEAR(read(w, "default::" + model + "::" + joints[k]), expected[i][k], kTol)
          << joints[k] << " at point " << i;
    }
    const auto& p = progress(w, "default::" + model);
    EXPECT_EQ(p.sequence, i + 1) << "one progress message per point";
    EXPECT_FLOAT_EQ(static_cast<float>(p.value),
                    static_cast<float>(i + 1) / static_cast<float>(points.size()));
  }
}

TEST(JointTrajectoryController, GazeboPositionControl) {
  LoadedWorld w(gz_jtc_world());
  const std::vector<std::vector<double>> at = {
      {-0.7854, 0.7854}, {1.5708, -0.7854}, {3.1416, -1.5708}};
  std::vector<c::JointTrajectoryPoint> points(3);
  const Duration times[] = {ms(666), ms(1333), ms(2000)};
  for (int i = 0; i < 3; ++i) {
    points[i].positions = at[i];
    points[i].time_from_start = times[i];
  }
  EXPECT_EQ(trajectory_input(w, "default::RR_position_control").topic,
            "/model/RR_position_control/joint_trajectory");
  EXPECT_EQ(progress(w, "default::RR_position_control").topic,
            "/model/RR_position_control/joint_trajectory_progress");
  follow(w, "RR_position_control", {"RR_position_control_joint1", "RR_position_control_joint2"},
         points, at, position);
}

TEST(JointTrajectoryController, GazeboVelocityControl) {
  LoadedWorld w(gz_jtc_world());
  const std::vector<std::vector<double>> at = {{0.5, 0.5}, {-1.0, 1.0}};
  std::vector<c::JointTrajectoryPoint> points(2);
  points[0].velocities = at[0];
  points[0].time_from_start = ms(500);
  points[1].velocities = at[1];
  points[1].time_from_start = ms(1000);
  EXPECT_EQ(trajectory_input(w, "default::RR_velocity_control").topic,
            "test_custom_topic/velocity_control");
  EXPECT_EQ(progress(w, "default::RR_velocity_control").topic,
            "test_custom_topic/velocity_control_progress");
  // No <joint_name>: every 1-axis joint in the model's order (the fixed one skipped), so the
  // first gains are joint1's (Gazebo's test fails if they are applied the other way round).
  follow(w, "RR_velocity_control", {"RR_velocity_control_joint1", "RR_velocity_control_joint2"},
         points, at, velocity);
}

// A rotor (izz 0.1 kg·m²) on a vertical revolute joint follows the ramp θr = ω t, sent as one
// point per 1 ms step, with position gains p, d and the ramp's velocity through the velocity
// PID's p gain kv. The error e = θ − θr obeys I ë = −p e − (d + kv) ė (θr'' = 0), from e = 0,
// ė = −ω: e = −ω/ωd · exp(−ζ ωn t) sin(ωd t), ωn = √(p/I), ζ = (d + kv) / (2√(pI)).
std::string rotor_world(const std::string& plugin) {
  return testing::rotor_on_world(plugin, "default");
}

TEST(JointTrajectoryController, FollowsARampAsItsGainsImply) {
  const double I = 0.1, p = 10, d = 0.2, kv = 0.4, omega = 0.5;
  LoadedWorld w(
      rotor_world(jtc("<position_p_gain>10</position_p_gain>"
                      "<position_d_gain>0.2</position_d_gain>"
                      "<velocity_p_gain>0.4</velocity_p_gain>")));
  w.step(5);
  const int n = 3000;
  std::vector<c::JointTrajectoryPoint> points(n + 1);
  for (int k = 0; k <= n; ++k) {
    points[k].positions = {omega * k * 1e-3};
    points[k].velocities = {omega};
    points[k].time_from_start = ms(k);
  }
  send(w, "default::arm", {"j"}, points);
  const double wn = std::sqrt(p / I), zeta = (d + kv) / (2 * std::sqrt(p * I));
  const double wd = wn * std::sqrt(1 - zeta * zeta);
  double max_dev = 0, peak = 0;
  for (int k = 1; k <= n; ++k) {
    w.step(1);
    const double t = k * 1e-3;
    const double e = -omega / wd * std::exp(-zeta * wn * t) * std::sin(wd * t);
    const double sim_e = position(w, "default::arm::j") - omega * t;
    max_dev = std::max(max_dev, std::abs(sim_e - e));
    peak = std::max(peak, std::abs(e));
  }
  // The continuous solution within 2 % of the peak lag (ωn·dt = 0.01), on the ramp at the end.
  EXPECT_LT(max_dev, 0.02 * peak) << "peak lag " << peak;
  EXPECT_NEAR(position(w, "default::arm::j"), omega * n * 1e-3, 1e-4);
  w.step(1);  // the last point's time has passed: it is the target
  EXPECT_FLOAT_EQ(static_cast<float>(progress(w, "default::arm").value), 1.0f);
}

// effort is applied as it is (gains 0: the PIDs give nothing): α = τ / I, θ = τ t² / (2 I).
TEST(JointTrajectoryController, EffortIsTheJointTorque) {
  LoadedWorld w(rotor_world(jtc("")));
  w.step(1);
  c::JointTrajectoryPoint point;
  point.effort = {0.02};
  point.time_from_start = ms(100);
  send(w, "default::arm", {"j"}, {point});
  w.step(1000);
  const double t = 1.0, alpha = 0.02 / 0.1;
  EXPECT_NEAR(velocity(w, "default::arm::j"), alpha * t, 1e-9);
  // Semi-implicit Euler: θ = α (t² + t·dt) / 2.
  EXPECT_NEAR(position(w, "default::arm::j"), 0.5 * alpha * (t * t + t * 1e-3), 1e-9);
}

TEST(JointTrajectoryController, ResetIsExact) {
  LoadedWorld w(gz_jtc_world());
  const std::string j = "default::RR_position_control::RR_position_control_joint1";
  auto run = [&] {
    std::vector<double> out;
    w.step(3);
    c::JointTrajectoryPoint a, b;
    a.positions = {0.3};
    a.time_from_start = ms(100);
    b.positions = {-0.2};
    b.time_from_start = ms(200);
    send(w, "default::RR_position_control", {"RR_position_control_joint1"}, {a, b});
    for (int k = 0; k < 300; ++k) {
      w.step(1);
      out.push_back(position(w, j));
    }
    return out;
  };
  const auto first = run();
  EXPECT_NEAR(first.back(), -0.2, 0.01);
  w.runner->reset_now();
  EXPECT_EQ(progress(w, "default::RR_position_control").sequence, 0u);
  EXPECT_EQ(run(), first);  // bit for bit: targets, PIDs and trajectory are reset
}

// A new trajectory replaces the one being followed (warned, as Gazebo); joints it names that
// the controller does not control are reported and skipped; a trajectory without joint names
// is ignored.
TEST(JointTrajectoryController, MessagesItCannotFollowAreReported) {
  LoadedWorld w(
      rotor_world(jtc("<position_p_gain>10</position_p_gain>"
                      "<position_d_gain>1</position_d_gain>")));
  w.step(2);
  testing::CapturedLog log;
  c::JointTrajectoryPoint a, b;
  a.positions = {0.5, 7};
  a.time_from_start = ms(100);
  b.positions = {1.0};
  b.time_from_start = ms(3000);
  send(w, "default::arm", {"j", "elbow"}, {a, b});
  w.step(1);
  EXPECT_THAT(log.text(), HasSubstr("joint 'elbow' is not one it controls (j)"));
  send(w, "default::arm", {"j"}, {a});
  w.step(1);
  EXPECT_THAT(log.text(), HasSubstr("a new trajectory replaces the one being followed"));
  send(w, "default::arm", {}, {b});
  w.step(3000);
  EXPECT_THAT(log.text(), HasSubstr("names no joint; ignored"));
  EXPECT_NEAR(position(w, "default::arm::j"), 0.5, 1e-3);
}

// use_header_start_time: the trajectory's times count from the message's header stamp.
TEST(JointTrajectoryController, HeaderStartTime) {
  for (const std::string& form : {std::string(" use_header_start_time=\"true\""), std::string()}) {
    LoadedWorld w(rotor_world(
        jtc(std::string("<position_p_gain>10</position_p_gain><position_d_gain>1</"
                        "position_d_gain>") +
                (form.empty() ? "<use_header_start_time>true</use_header_start_time>" : ""),
            form)));
    w.step(100);  // t = 0.1 s
    c::JointTrajectoryPoint a, b;
    a.positions = {0.5};
    a.time_from_start = ms(100);
    b.positions = {-0.5};
    b.time_from_start = ms(200);
    auto& in = trajectory_input(w, "default::arm");
    in.has_stamp = true;
    in.stamp = Duration{500'000};  // started at 0.5 ms: a's time has passed, b is the target
    send(w, "default::arm", {"j"}, {a, b});
    w.step(1);
    EXPECT_FLOAT_EQ(static_cast<float>(progress(w, "default::arm").value), 1.0f) << form;
    in.stamp = ms(150);  // starts in 50 ms: a is the target until 250 ms
    send(w, "default::arm", {"j"}, {a, b});
    w.step(1);
    EXPECT_FLOAT_EQ(static_cast<float>(progress(w, "default::arm").value), 0.5f) << form;
    w.step(148);  // end of step at 250 ms: 250 - 150 is not past a's 100 ms, still a
    EXPECT_FLOAT_EQ(static_cast<float>(progress(w, "default::arm").value), 0.5f) << form;
    w.step(1);
    EXPECT_FLOAT_EQ(static_cast<float>(progress(w, "default::arm").value), 1.0f) << form;
  }
}

TEST(JointTrajectoryController, BadParametersAreRefusedWithTheirLine) {
  const auto error = [](const std::string& body, const std::string& attributes = "") {
    return testing::load_error(gz_jtc_world().replace(
        gz_jtc_world().find("</world>"), 0,
        "<model name=\"m\"><link name=\"a\"/><link name=\"b\"/><link name=\"c\"/><joint "
        "name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child></joint><joint "
        "name=\"f\" type=\"fixed\"><parent>b</parent><child>c</child></joint>" +
            jtc(body, attributes) + "</model>"));
  };
  EXPECT_THAT(error("<joint_name>nope</joint_name>"), HasSubstr("'nope' is not a joint of model"));
  EXPECT_THAT(error("<joint_name>f</joint_name>"),
              HasSubstr("joint 'f' is not a revolute, continuous or prismatic joint"));
  EXPECT_THAT(error("<joint_name>j</joint_name><joint_name>j</joint_name>"),
              HasSubstr("joint 'j' is named twice"));
  EXPECT_THAT(error("<position_p_gain>1</position_p_gain><position_p_gain>2</position_p_gain>"),
              HasSubstr("2 <position_p_gain> for 1 joint(s) (j)"));
  EXPECT_THAT(error("<velocity_i_gain>inf</velocity_i_gain>"),
              HasSubstr("<velocity_i_gain> expected a finite number"));
  EXPECT_THAT(error("<position_pgain>1</position_pgain>"),
              HasSubstr("unknown parameter <position_pgain>"));
  EXPECT_THAT(error("", " use_header_start_time=\"yes\""),
              HasSubstr("use_header_start_time=\"yes\" is not a boolean"));
}

}  // namespace
}  // namespace kestrel::systems
