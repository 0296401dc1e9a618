// DetachableJoint: gz-sim's detachable_joint integration test (StartConnected,
// LinksInSameModel, ReAttach) on an equivalent of its test/worlds/detachable_joint.sdf, and
// against Newton: momentum is conserved when the joint lets go, and a re-attach is a perfectly
// inelastic collision.
#include "kestrel/components/detachable_joint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;
using testing::LoadedWorld;

std::string box(const std::string& name, const std::string& pose, double mass = 1,
                double half = 1) {
  const double i = mass * (2 * half) * (2 * half) / 6;
  return "<link name=\"" + name + "\"><pose>" + pose + "</pose><inertial><mass>" +
         std::to_string(mass) + "</mass><inertia><ixx>" + std::to_string(i) + "</ixx><iyy>" +
         std::to_string(i) + "</iyy><izz>" + std::to_string(i) +
         "</izz></inertia></inertial><collision name=\"collision\"><geometry><box><size>" +
         std::to_string(2 * half) + " " + std::to_string(2 * half) + " " +
         std::to_string(2 * half) + "</size></box></geometry></collision></link>";
}

std::string plugin(const std::string& parent, const std::string& child_model,
                   const std::string& child_link, const std::string& extra = "") {
  return R"(<plugin filename="gz-sim-detachable-joint-system" name="gz::sim::systems::DetachableJoint">
      <parent_link>)" +
         parent + "</parent_link><child_model>" + child_model + "</child_model><child_link>" +
         child_link + "</child_link>" + extra + "</plugin>";
}

// gz-sim's test world detachable_joint.sdf: M1 (2 m box on the ground) holds M2 4 m above it;
// M3 holds its own free link body2 5 m above body1.
std::string gz_detachable_world() {
  return testing::gz_world(
      "<model name=\"M1\"><pose>0 0 1 0 0 0</pose>" + box("body", "0 0 0 0 0 0") +
      plugin("body", "M2", "body") + "</model><model name=\"M2\"><pose>0 0 5 0 0 0</pose>" +
      box("body", "0 0 0 0 0 0") + "</model><model name=\"M3\"><pose>10 0 1 0 0 0</pose>" +
      box("body1", "0 0 0 0 0 0") + box("body2", "0 0 5 0 0 0") +
      plugin("body1", "__model__", "body2") + "</model>");
}

c::EventInput& event(LoadedWorld& w, const std::string& model, std::size_t i) {
  return w.r().get<c::TopicInputs>(w.find(model)).event.at(i);
}
void send(LoadedWorld& w, const std::string& model, std::size_t i) { ++event(w, model, i).count; }
const c::StringOutput& state(LoadedWorld& w, const std::string& model) {
  return w.r().get<c::TopicOutputs>(w.find(model)).string.at(0);
}
Pose3d pose(LoadedWorld& w, const std::string& e) {
  return w.r().get<c::WorldPose>(w.find(e)).value;
}
Vector3d velocity(LoadedWorld& w, const std::string& e) {
  return w.r().get<c::WorldLinearVelocity>(w.find(e)).value;
}

TEST(DetachableJoint, GazeboTopicsAndState) {
  LoadedWorld w(gz_detachable_world());
  EXPECT_EQ(event(w, "w::M1", 0).topic, "/model/M1/detachable_joint/detach");
  EXPECT_EQ(event(w, "w::M1", 1).topic, "/model/M1/detachable_joint/attach");
  EXPECT_FALSE(event(w, "w::M1", 0).any_type);  // detach: ignition.msgs.Empty
  EXPECT_TRUE(event(w, "w::M1", 1).any_type);   // attach: any message (Gazebo's ProtoMsg)
  EXPECT_EQ(state(w, "w::M1").topic, "/model/M2/detachable_joint/state");
  EXPECT_EQ(state(w, "w::M3").topic, "/model/__model__/detachable_joint/state");
  EXPECT_EQ(state(w, "w::M1").sequence, 0u);
  w.step(1);  // Gazebo attaches in the first PreUpdate
  EXPECT_EQ(state(w, "w::M1").value, "attached");
  EXPECT_EQ(state(w, "w::M1").sequence, 1u);
  send(w, "w::M1", 1);  // attach while attached: ignored
  w.step(1);
  EXPECT_EQ(state(w, "w::M1").sequence, 1u);
  send(w, "w::M1", 0);
  w.step(1);
  EXPECT_EQ(state(w, "w::M1").value, "detached");
  EXPECT_EQ(state(w, "w::M1").sequence, 2u);
  send(w, "w::M1", 0);  // detach while detached: ignored
  w.step(1);
  EXPECT_EQ(state(w, "w::M1").sequence, 2u);
  send(w, "w::M1", 1);
  w.step(1);
  EXPECT_EQ(state(w, "w::M1").value, "attached");
  EXPECT_EQ(state(w, "w::M1").sequence, 3u);
}

// StartConnected and LinksInSameModel: held while attached, falling once detached.
TEST(DetachableJoint, GazeboStartConnectedAndLinksInSameModel) {
  LoadedWorld w(gz_detachable_world());
  const Pose3d m2_0 = pose(w, "w::M2"), b2_0 = pose(w, "w::M3::body2");
  w.step(20);
  // M1 and body1 settle into MuJoCo's soft ground (DART: not at all); what they hold stays 4 m
  // and 5 m above them (the weld's give is micrometres).
  EXPECT_LT((pose(w, "w::M1").Pos() - Vector3d(0, 0, 1)).Length(), 5e-3);
  EXPECT_NEAR((pose(w, "w::M2").Pos() - pose(w, "w::M1").Pos()).Z(), 4, 1e-5);
  EXPECT_NEAR((pose(w, "w::M3::body2").Pos() - pose(w, "w::M3::body1").Pos()).Z(), 5, 1e-5);
  EXPECT_LT((pose(w, "w::M2").Pos() - m2_0.Pos()).Length(), 5e-3);
  EXPECT_LT((pose(w, "w::M3::body2").Pos() - b2_0.Pos()).Length(), 5e-3);

  send(w, "w::M1", 0);  // /model/M1/detachable_joint/detach
  send(w, "w::M3", 0);  // /model/M3/detachable_joint/detach
  w.step(1);
  const Pose3d m1 = pose(w, "w::M1"), m2 = pose(w, "w::M2"), b2 = pose(w, "w::M3::body2");
  w.step(99);
  const double fall = 0.5 * 9.8 * std::pow(99.0 / 1000, 2);  // Gazebo's expectation
  EXPECT_GT(m2.Pos().Z() - pose(w, "w::M2").Pos().Z(), fall);
  EXPECT_GT(b2.Pos().Z() - pose(w, "w::M3::body2").Pos().Z(), fall);
  EXPECT_LT((pose(w, "w::M1").Pos() - m1.Pos()).Length(), 5e-3);
}

// Two free bodies in free space, welded; a force on the parent only (off the pair's centre of
// mass: it spins as it goes); then the joint lets go. Linear momentum is F·T throughout and each
// body keeps the velocity it had.
TEST(DetachableJoint, DetachConservesMomentum) {
  LoadedWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>
    <model name="a">)" +
                box("body", "0 0 0 0 0 0", 2, 0.25) + plugin("body", "b", "body") +
                "</model><model name=\"b\"><pose>1 0 0 0 0 0</pose>" +
                box("body", "0 0 0 0 0 0", 3, 0.25) + "</model></world></sdf>");
  const Vector3d F(0, 10, 0);  // at a's origin, 0.6 m from the pair's centre of mass
  const auto momentum = [&] {
    return 2 * velocity(w, "w::a::body") + 3 * velocity(w, "w::b::body");
  };
  for (int i = 0; i < 500; ++i) {
    w.r().set<c::ExternalWorldWrenchCmd>(w.find("w::a::body"), {F, Vector3d::Zero});
    w.step(1);
  }
  const Vector3d p = momentum();
  EXPECT_LT((p - F * 0.5).Length(), 1e-9) << p;
  const double d0 = (pose(w, "w::b::body").Pos() - pose(w, "w::a::body").Pos()).Length();
  EXPECT_NEAR(d0, 1, 1e-4);  // the spin's centripetal load stretches the weld by 11 µm
  const Vector3d va = velocity(w, "w::a::body"), vb = velocity(w, "w::b::body");
  EXPECT_GT((va - vb).Length(), 0.1);  // spinning

  send(w, "w::a", 0);
  w.step(1);
  EXPECT_LT((momentum() - p).Length(), 1e-9);
  EXPECT_LT((velocity(w, "w::a::body") - va).Length(), 1e-9);  // no impulse at the release
  EXPECT_LT((velocity(w, "w::b::body") - vb).Length(), 1e-9);
  w.step(500);
  EXPECT_LT((momentum() - p).Length(), 1e-9);
  EXPECT_LT((velocity(w, "w::b::body") - vb).Length(), 1e-9);  // free: straight on
  EXPECT_GT((pose(w, "w::b::body").Pos() - pose(w, "w::a::body").Pos()).Length(), d0 + 0.1);
}

// ReAttach: detached, the parent moves away; attached again, the child is held where it then
// is and both move on together at the velocity momentum gives (m_a v / (m_a + m_b)).
TEST(DetachableJoint, ReAttachHoldsTheNewPoseAndConservesMomentum) {
  LoadedWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>
    <model name="a">)" +
                box("body", "0 0 0 0 0 0", 2, 0.25) +
                plugin("body", "b", "body",
                       "<detach_topic>/B1/detach</detach_topic><attach_topic>/B1/attach"
                       "</attach_topic><output_topic>/B1/state</output_topic>") +
                "</model><model name=\"b\"><pose>1 0 0 0 0 0</pose>" +
                box("body", "0 0 0 0 0 0", 3, 0.25) + "</model></world></sdf>");
  EXPECT_EQ(event(w, "w::a", 0).topic, "/B1/detach");
  EXPECT_EQ(event(w, "w::a", 1).topic, "/B1/attach");
  EXPECT_EQ(state(w, "w::a").topic, "/B1/state");
  w.step(10);
  send(w, "w::a", 0);
  w.step(1);
  w.r().add<c::WorldPoseCmd>(w.find("w::a"), c::WorldPoseCmd{Pose3d(-0.5, 0, 0, 0, 0, 0)});
  w.r().add<c::LinearVelocityCmd>(w.find("w::a"), c::LinearVelocityCmd{Vector3d(-1, 0, 0)});
  w.step(1);
  w.r().remove<c::LinearVelocityCmd>(w.find("w::a"));
  w.step(200);
  EXPECT_NEAR(velocity(w, "w::a::body").X(), -1, 1e-9);
  EXPECT_LT(velocity(w, "w::b::body").Length(), 1e-9);  // left behind
  send(w, "w::a", 1);
  w.step(1);
  const Vector3d gap = pose(w, "w::b::body").Pos() - pose(w, "w::a::body").Pos();
  w.step(300);
  const double v = 2 * -1.0 / (2 + 3);
  EXPECT_NEAR(velocity(w, "w::a::body").X(), v, 1e-6);
  EXPECT_NEAR(velocity(w, "w::b::body").X(), v, 1e-6);
  EXPECT_LT(((pose(w, "w::b::body").Pos() - pose(w, "w::a::body").Pos()) - gap).Length(), 1e-4);
  EXPECT_NEAR((2 * velocity(w, "w::a::body") + 3 * velocity(w, "w::b::body")).X(), -2, 1e-9);
}

TEST(DetachableJoint, ResetIsExact) {
  LoadedWorld w(gz_detachable_world());
  const auto run = [&] {
    std::vector<Pose3d> out;
    for (int i = 0; i < 300; ++i) {
      if (i == 100) send(w, "w::M1", 0);
      if (i == 200) send(w, "w::M1", 1);
      w.step(1);
      out.push_back(pose(w, "w::M2"));
    }
    return out;
  };
  const auto first = run();
  w.runner->reset_now();
  EXPECT_EQ(state(w, "w::M1").sequence, 0u);
  const auto second = run();
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) ASSERT_EQ(first[i], second[i]) << i;
  EXPECT_EQ(state(w, "w::M1").value, "attached");
}

TEST(DetachableJoint, BadParametersStopLoadingNamingTheModel) {
  const auto world = [](const std::string& p) {
    return testing::gz_world("<model name=\"M1\">" + box("body", "0 0 1 0 0 0") + p +
                             "</model><model name=\"M2\"><pose>0 0 5 0 0 0</pose>" +
                             box("body", "0 0 0 0 0 0") + "</model>");
  };
  const std::string head =
      R"(<plugin filename="gz-sim-detachable-joint-system" name="gz::sim::systems::DetachableJoint">)";
  EXPECT_THAT(testing::load_error(world(head + "<child_model>M2</child_model><child_link>body"
                                               "</child_link></plugin>")),
              ::testing::HasSubstr("DetachableJoint (model 'w::M1'): <parent_link> is required"));
  EXPECT_THAT(testing::load_error(world(plugin("nope", "M2", "body"))),
              ::testing::HasSubstr("nope"));
  EXPECT_THAT(testing::load_error(world(head + "<parent_link>body</parent_link><child_link>body"
                                               "</child_link></plugin>")),
              ::testing::HasSubstr("<child_model> is required"));
  EXPECT_THAT(testing::load_error(world(plugin("body", "M2", "body",
                                               "<topic>/a</topic><detach_topic>/b"
                                               "</detach_topic>"))),
              ::testing::HasSubstr("<topic> '/a' and <detach_topic> '/b' differ"));
  EXPECT_THAT(testing::load_error(world(plugin("body", "M2", "body", "<detach>/a</detach>"))),
              ::testing::HasSubstr("detach"));
  // <topic> alone names the detach topic.
  LoadedWorld w(world(plugin("body", "M2", "body", "<topic>/drop</topic>")));
  EXPECT_EQ(event(w, "w::M1", 0).topic, "/drop");
}

TEST(DetachableJoint, AMissingChildModelIsReportedUnlessSuppressed) {
  {
    testing::CapturedLog log;
    LoadedWorld w(testing::gz_world("<model name=\"M1\">" + box("body", "0 0 1 0 0 0") +
                                    plugin("body", "ghost", "body") + "</model>"));
    w.step(2);
    EXPECT_THAT(log.text(),
                ::testing::HasSubstr("child model 'ghost' with a link 'body' not found"));
    EXPECT_EQ(state(w, "w::M1").sequence, 0u);  // never attached
  }
  testing::CapturedLog log;
  LoadedWorld w(testing::gz_world(
      "<model name=\"M1\">" + box("body", "0 0 1 0 0 0") +
      plugin("body", "ghost", "body", "<suppress_child_warning>true</suppress_child_warning>") +
      "</model>"));
  EXPECT_EQ(log.text().find("ghost"), std::string::npos);
}

}  // namespace
}  // namespace kestrel::systems
