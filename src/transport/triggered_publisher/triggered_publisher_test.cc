// TriggeredPublisher: gz-sim's triggered_publisher integration test expectations — matchers
// (full, field, negative logic, tolerance, repeated fields as sets, another input type), the
// delay in sim time — on the matchers and the delay queue directly, and end to end through
// transport (inside scripts/netns, own IGN_PARTITION): outputs on a match only, delayed ones no
// earlier than their sim time, the detach of a DetachableJoint as in gz-sim's
// triggered_publisher.sdf.
#include <gmock/gmock.h>
#include <ignition/msgs/altimeter.pb.h>
#include <ignition/msgs/int32.pb.h>
#include <ignition/msgs/int32_v.pb.h>
#include <ignition/msgs/stringmsg.pb.h>
#include <ignition/msgs/twist.pb.h>
#include <ignition/msgs/vector2d.pb.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"
#include "transport/common_test.h"
#include "transport/triggered_publisher/matcher.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases
using detail::InputMatchers;

InputMatchers matchers(const std::string& type, const std::string& matches) {
  static std::vector<std::shared_ptr<const Element>> keep;  // Elements outlive their children
  keep.push_back(
      Element::parse("<input type=\"" + type + "\" topic=\"/in\">" + matches + "</input>"));
  return InputMatchers(type, *keep.back());
}

std::string error_of(const std::string& type, const std::string& matches) {
  try {
    matchers(type, matches);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

msgs::Boolean boolean(bool v) {
  msgs::Boolean m;
  m.set_data(v);
  return m;
}
msgs::Int32 int32(int v) {
  msgs::Int32 m;
  m.set_data(v);
  return m;
}

// InputNoMatch / InputMatch... of gz-sim's test: no <match> matches any message of the type.
TEST(TriggeredPublisherMatch, AnyMessageOfTheTypeWithoutMatch) {
  const auto m = matchers("ignition.msgs.Boolean", "");
  EXPECT_TRUE(m.matches(boolean(true)));
  EXPECT_TRUE(m.matches(boolean(false)));
  EXPECT_FALSE(m.matches(int32(1)));  // another type never matches (Gazebo logs it)
}

TEST(TriggeredPublisherMatch, FullMatch) {
  const auto m = matchers("gz.msgs.Boolean", "<match>data: true</match>");  // Gazebo's new name
  EXPECT_EQ(m.type(), "gz.msgs.Boolean");
  EXPECT_TRUE(m.matches(boolean(true)));
  EXPECT_FALSE(m.matches(boolean(false)));
  // A full match compares every field: a Vector2d {x: 1} is not {x: 1, y: 2}.
  const auto v = matchers("ignition.msgs.Vector2d", "<match>x: 1.0 y: 2.0</match>");
  msgs::Vector2d in;
  in.set_x(1.0);
  EXPECT_FALSE(v.matches(in));
  in.set_y(2.0);
  EXPECT_TRUE(v.matches(in));
}

// Gazebo's MultipleMatchersAreAnded / FieldMatchers: every matcher must match.
TEST(TriggeredPublisherMatch, FieldMatchersAreAnded) {
  const auto m = matchers("ignition.msgs.Vector2d",
                          R"(<match field="x">1.0</match><match field="y">2.0</match>)");
  msgs::Vector2d in;
  in.set_x(1.0);
  in.set_y(3.0);
  EXPECT_FALSE(m.matches(in));
  in.set_y(2.0);
  EXPECT_TRUE(m.matches(in));
  in.mutable_header()->mutable_stamp()->set_sec(5);  // other fields do not matter
  EXPECT_TRUE(m.matches(in));
}

// Gazebo's logic_type="negative": fires when the input equals neither 1 nor 2.
TEST(TriggeredPublisherMatch, NegativeLogic) {
  const auto m = matchers("ignition.msgs.Int32", R"(<match logic_type="negative">data: 1</match>
      <match logic_type="negative">data: 2</match>)");
  EXPECT_FALSE(m.matches(int32(1)));
  EXPECT_FALSE(m.matches(int32(2)));
  EXPECT_TRUE(m.matches(int32(3)));
}

// Floats compare within `tol` (default 1e-8), as the Altimeter match of triggered_publisher.sdf.
TEST(TriggeredPublisherMatch, FloatsWithinTolerance) {
  const auto m =
      matchers("gz.msgs.Altimeter", R"(<match field="vertical_position" tol="0.2">-7.5</match>)");
  msgs::Altimeter a;
  a.set_vertical_position(-7.35);
  EXPECT_TRUE(m.matches(a));
  a.set_vertical_position(-7.71);
  EXPECT_FALSE(m.matches(a));
  const auto exact =
      matchers("ignition.msgs.Altimeter", R"(<match field="vertical_position">-7.5</match>)");
  a.set_vertical_position(-7.5 + 1e-9);
  EXPECT_TRUE(exact.matches(a));
  a.set_vertical_position(-7.5 + 1e-6);
  EXPECT_FALSE(exact.matches(a));
}

// Subfields by dotted path, and a repeated field as a set that must contain the values.
TEST(TriggeredPublisherMatch, SubfieldsAndRepeatedFields) {
  const auto t = matchers("ignition.msgs.Twist", R"(<match field="linear.x">0.5</match>)");
  msgs::Twist tw;
  tw.mutable_linear()->set_x(0.5);
  tw.mutable_angular()->set_z(1);
  EXPECT_TRUE(t.matches(tw));
  tw.mutable_linear()->set_x(0.4);
  EXPECT_FALSE(t.matches(tw));
  const auto v = matchers("ignition.msgs.Int32_V",
                          R"(<match field="data">1</match><match field="data">2</match>)");
  msgs::Int32_V in;
  in.add_data(3);
  in.add_data(2);
  EXPECT_FALSE(v.matches(in));
  in.add_data(1);
  EXPECT_TRUE(v.matches(in));  // contains 1 and 2, in any order, among others
  const auto full = matchers("ignition.msgs.Int32_V", "<match>data: 1 data: 2</match>");
  EXPECT_FALSE(full.matches(in));
}

TEST(TriggeredPublisherMatch, BadMatchersStopLoading) {
  EXPECT_THAT(
      error_of("ignition.msgs.Nope", ""),
      ::testing::HasSubstr("'ignition.msgs.Nope' is not a message type of ignition-msgs 8"));
  EXPECT_THAT(error_of("ignition.msgs.Boolean", "<match>dat: true</match>"),
              ::testing::HasSubstr("is not a ignition.msgs.Boolean in text form"));
  EXPECT_THAT(error_of("ignition.msgs.Boolean", R"(<match field="value">true</match>)"),
              ::testing::HasSubstr("field 'value' is not a field of ignition.msgs.Boolean"));
  EXPECT_THAT(error_of("ignition.msgs.Int32", R"(<match field="data">one</match>)"),
              ::testing::HasSubstr("'one' is not a value of field 'data'"));
  EXPECT_THAT(error_of("ignition.msgs.Int32", R"(<match logic_type="maybe">data: 1</match>)"),
              ::testing::HasSubstr("logic_type must be 'positive' or 'negative'"));
  EXPECT_THAT(error_of("ignition.msgs.Int32", R"(<match tol="-1">data: 1</match>)"),
              ::testing::HasSubstr("tol must be a number >= 0"));
  EXPECT_THAT(error_of("ignition.msgs.Int32", R"(<match fields="data">1</match>)"),
              ::testing::HasSubstr("fields"));
  EXPECT_THAT(error_of("ignition.msgs.Int32_V", R"(<match field="header.data.key">a</match>)"),
              ::testing::HasSubstr("a repeated message's subfields cannot be matched"));
}

// Gazebo's delay: counted down by each step's dt in PreUpdate; due when it reaches zero.
TEST(TriggeredPublisherDelay, DueAfterItsSimTime) {
  detail::DelayQueue q;
  const Duration dt{1'000'000};
  q.add(std::chrono::milliseconds(5));
  for (int i = 1; i < 5; ++i) EXPECT_EQ(q.advance(dt), 0u) << i;
  q.add(std::chrono::milliseconds(2));  // a second match 4 ms later
  EXPECT_EQ(q.advance(dt), 1u);         // 5 ms after the first
  EXPECT_EQ(q.advance(dt), 1u);         // 2 ms after the second
  EXPECT_EQ(q.advance(dt), 0u);
  q.add(std::chrono::milliseconds(3));
  EXPECT_EQ(q.advance(std::chrono::milliseconds(4)), 1u);  // a larger step passes it
  q.add(std::chrono::milliseconds(3));
  q.clear();  // reset
  EXPECT_EQ(q.advance(std::chrono::milliseconds(4)), 0u);
}

constexpr const char* kTriggerWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tp">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <plugin filename="gz-sim-triggered-publisher-system" name="gz::sim::systems::TriggeredPublisher">
      <input type="gz.msgs.Boolean" topic="/in"><match>data: true</match></input>
      <output type="gz.msgs.StringMsg" topic="/out">data: "fired"</output>
      <output type="gz.msgs.Empty" topic="/model/holder/detachable_joint/detach"/>
    </plugin>
    <plugin filename="gz-sim-triggered-publisher-system" name="gz::sim::systems::TriggeredPublisher">
      <input type="gz.msgs.Empty" topic="/reset_box"/>
      <service name="/world/tp/set_pose" reqType="gz.msgs.Pose" repType="gz.msgs.Boolean"
        timeout="3000" reqMsg="name: 'box', position: {x: -3, z: 9}"/>
    </plugin>
    <plugin filename="gz-sim-triggered-publisher-system" name="gz::sim::systems::TriggeredPublisher">
      <input type="ignition.msgs.Int32" topic="/in2"/>
      <delay_ms>200</delay_ms>
      <output type="ignition.msgs.Empty" topic="/out2"/>
    </plugin>
    <model name="holder"><static>true</static><pose>0 0 5 0 0 0</pose>
      <link name="body"/>
      <plugin filename="gz-sim-detachable-joint-system" name="gz::sim::systems::DetachableJoint">
        <parent_link>body</parent_link><child_model>box</child_model><child_link>body</child_link>
      </plugin>
    </model>
    <model name="box"><pose>0 0 4 0 0 0</pose>
      <link name="body">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
    </model>
  </world>
</sdf>)";

class TriggeredPublisherTest : public TransportTest {};

TEST_F(TriggeredPublisherTest, FiresOnAMatchOnlyAndAfterItsDelay) {
  world_text_ = kTriggerWorld;
  start(false);
  auto out = std::make_shared<Latest<msgs::StringMsg>>();
  auto out2 = std::make_shared<Latest<msgs::Empty>>();
  auto state = std::make_shared<Latest<msgs::StringMsg>>();
  auto out_cb = out->callback();
  auto out2_cb = out2->callback();
  auto state_cb = state->callback();
  ASSERT_TRUE(node_->Subscribe("/model/box/detachable_joint/state", state_cb));
  ASSERT_TRUE(node_->Subscribe("/out", out_cb));
  ASSERT_TRUE(node_->Subscribe("/out2", out2_cb));
  Unsubscribe unsubscribe{node_.get(), {"/out", "/out2", "/model/box/detachable_joint/state"}};
  const auto z_of = [](sim::Runner& r) {
    return r.registry().get<c::WorldPose>(r.registry().find_scoped("tp::box")).value.Pos().Z();
  };
  const auto box_z = [&] {
    return *detail::on_step_thread<double>(*runner_, z_of, std::chrono::seconds(5));
  };
  const auto sim_time = [&] {
    return *detail::on_step_thread<double>(
        *runner_, [](sim::Runner& r) { return to_seconds(r.info().sim_time); },
        std::chrono::seconds(5));
  };

  auto in = node_->Advertise<msgs::Boolean>("/in");
  for (int i = 0; i < 1000 && !in.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(in.HasConnections());
  // Non-matches first (in order on one publisher), then one match: exactly one output.
  for (int i = 0; i < 5; ++i) in.Publish(boolean(false));
  EXPECT_NEAR(box_z(), 4, 1e-3);  // held by the DetachableJoint
  in.Publish(boolean(true));
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return out->get().second > 0; }));
  EXPECT_EQ(out->get().first.data(), "fired");
  // The same match detached the box (gz-sim's triggered_publisher.sdf drops box1 this way).
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return state->get().first.data() == "detached"; }));
  const double z = box_z();
  ASSERT_TRUE(wait_for([&](sim::Runner& r) { return z_of(r) < z - 0.1; }));  // falling
  EXPECT_EQ(out->get().second, 1);

  // Delayed: any Int32; published no earlier than 0.2 s of sim time after it was sent.
  auto in2 = node_->Advertise<msgs::Int32>("/in2");
  for (int i = 0; i < 1000 && !in2.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(in2.HasConnections());
  const double sent = sim_time();
  in2.Publish(int32(7));
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return out2->get().second > 0; }));
  EXPECT_GE(sim_time() - sent, 0.2);
  EXPECT_EQ(out2->get().second, 1);

  // A <service> output: triggered_publisher.sdf's /reset_robot calls UserCommands' set_pose.
  auto reset = node_->Advertise<msgs::Empty>("/reset_box");
  for (int i = 0; i < 1000 && !reset.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(reset.HasConnections());
  reset.Publish(msgs::Empty());
  const auto x_of = [](sim::Runner& r) {
    return r.registry().get<c::WorldPose>(r.registry().find_scoped("tp::box")).value.Pos().X();
  };
  ASSERT_TRUE(wait_for([&](sim::Runner& r) { return std::abs(x_of(r) + 3) < 1e-9; }));
}

TEST(TriggeredPublisherConfig, BadParametersStopLoading) {
  const auto world = [](const std::string& body) {
    return std::string(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
      <plugin filename="gz-sim-triggered-publisher-system" name="gz::sim::systems::TriggeredPublisher">)") +
           body + "</plugin></world></sdf>";
  };
  const auto err = [&](const std::string& body) {
    return systems::testing::load_error(world(body));
  };
  const std::string out = R"(<output type="gz.msgs.Empty" topic="/o"/>)";
  EXPECT_THAT(err(out), ::testing::HasSubstr("needs exactly one <input>, found 0"));
  EXPECT_THAT(err(R"(<input topic="/i"/>)" + out), ::testing::HasSubstr("needs a type attribute"));
  EXPECT_THAT(err(R"(<input type="gz.msgs.Empty"/>)" + out),
              ::testing::HasSubstr("needs a topic attribute"));
  EXPECT_THAT(err(R"(<input type="gz.msgs.Empty" topic="/i"/>)"),
              ::testing::HasSubstr("no <output> and no <service>"));
  EXPECT_THAT(
      err(R"(<input type="gz.msgs.Empty" topic="/i"/><output type="gz.msgs.Twist" topic="/o">linear: {x: one}</output>)"),
      ::testing::HasSubstr("is not a ignition.msgs.Twist in text form"));
  EXPECT_THAT(err(R"(<input type="gz.msgs.Empty" topic="/i"/><delay_ms>0.5</delay_ms>)" + out),
              ::testing::HasSubstr("<delay_ms> must be a whole number of milliseconds"));
  EXPECT_THAT(
      err(R"(<input type="gz.msgs.Empty" topic="/i"/><service name="/s" reqType="gz.msgs.Pose" repType="gz.msgs.Boolean" reqMsg="name: 1" timeout="10"/>)"),
      ::testing::HasSubstr("is not a ignition.msgs.Pose in text form"));
  EXPECT_THAT(
      err(R"(<input type="gz.msgs.Empty" topic="/i"/><service name="/s" reqType="gz.msgs.Empty" repType="gz.msgs.Boolean" reqMsg=" " timeout="soon"/>)"),
      ::testing::HasSubstr("timeout must be a whole number of milliseconds"));
  EXPECT_THAT(
      err(R"(<input type="gz.msgs.Empty" topic="/i"/><service reqType="gz.msgs.Empty" repType="gz.msgs.Boolean" reqMsg=" " timeout="5"/>)"),
      ::testing::HasSubstr("<service> needs a name attribute"));
  EXPECT_EQ(
      err(R"(<input type="gz.msgs.Empty" topic="/i"/><service name="/s" reqType="gz.msgs.Empty" repType="gz.msgs.Boolean" reqMsg=" " timeout="5"/>)"),
      "(no error)");
  EXPECT_THAT(err(R"(<input type="gz.msgs.Empty" topic="/i"/><ouput/>)" + out),
              ::testing::HasSubstr("unknown parameter <ouput>"));
  EXPECT_EQ(err(R"(<input type="gz.msgs.Empty" topic="/i"/>)" + out), "(no error)");
}

}  // namespace
}  // namespace kestrel::transport
