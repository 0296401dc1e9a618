// TouchPlugin: gz-sim's touch_plugin integration test (OneLink, MultiLink, StartDisabled)
// on an equivalent world with the same step counts, and the touch time measured against the
// contacts themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

std::string box(const std::string& name, const std::string& pose, double size,
                const std::string& inside = "", const std::string& link = "link") {
  const std::string s = std::to_string(size);
  return R"(<link name=")" + link + R"("><pose>)" + pose + R"(</pose>
      <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      <collision name="collision"><geometry><box><size>)" +
         s + " " + s + " " + s + R"(</size></box></geometry></collision>)" + inside + "</link>";
  (void)name;
}

std::string sensor(const std::string& name) {
  return R"(<sensor name=")" + name +
         R"(" type="contact"><contact><collision>collision</collision></contact></sensor>)";
}

std::string touch(const std::string& target, double time, const std::string& ns, bool enabled) {
  return R"(<plugin filename="gz-sim-touchplugin-system" name="gz::sim::systems::TouchPlugin">
      <target>)" +
         target + "</target><time>" + std::to_string(time) + "</time><namespace>" + ns +
         "</namespace>" + (enabled ? "<enabled>true</enabled>" : "") + "</plugin>";
}

std::string world() {
  return std::string(R"(<?xml version="1.0"?><sdf version="1.9"><world name="touch_plugin">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="ground_plane"><static>true</static><link name="link">
      <collision name="collision"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
    </link></model>
    <model name="white_box"><pose>0 0 4 0 0 0</pose>)") +
         box("", "0 0 0 0 0 0", 0.5, sensor("white_box_sensor")) +
         touch("green_box_for_white", 3, "white_touches_only_green", true) + R"(</model>
    <model name="red_yellow_box"><pose>4 0 4 0 0 0</pose>)" +
         box("", "0 0 0 0 0 0", 1, sensor("red_box_sensor"), "red") +
         box("", "0 2 0 0 0 0", 1, sensor("yellow_box_sensor"), "yellow") +
         touch("green_box_for_red_yellow", 2, "red_and_yellow_touch_only_green", true) +
         R"(</model>
    <model name="blue_box"><pose>8 0 4 0 0 0</pose>)" +
         box("", "0 0 0 0 0 0", 1, sensor("blue_box_sensor")) +
         touch("green_box_for_blue", 2, "blue_touches_only_green", false) + R"(</model>
    <model name="green_box_for_white"><static>true</static><pose>0 0 0.5 0 0 0</pose>)" +
         box("", "0 0 0 0 0 0", 1) + R"(</model>
    <model name="green_box_for_red_yellow"><static>true</static><pose>4 1 0.5 0 0 0</pose>)" +
         R"(<link name="link"><collision name="collision"><geometry><box><size>1 3 1</size></box>
         </geometry></collision></link></model>
    <model name="green_box_for_blue"><static>true</static><pose>8 0 0.5 0 0 0</pose>)" +
         box("", "0 0 0 0 0 0", 1) + "</model></world></sdf>";
}

// Messages published so far on the model's /NS/touched (the bridge publishes one per sequence).
std::uint64_t touched(LoadedWorld& w, const std::string& model) {
  const auto& ch = w.r().get<c::TopicOutputs>(w.find(model)).boolean.at(0);
  if (ch.sequence) {
    EXPECT_TRUE(ch.value);
  }
  return ch.sequence;
}

void enable(LoadedWorld& w, const std::string& model, bool on) {
  auto& en = w.r().get<c::TopicInputs>(w.find(model)).boolean_service.at(0);
  en.value = on;
  ++en.count;
}

TEST(TouchPlugin, GazeboOneLink) {
  LoadedWorld w(world());
  const std::string m = "touch_plugin::white_box";
  EXPECT_EQ(w.r().get<c::TopicOutputs>(w.find(m)).boolean.at(0).topic,
            "/white_touches_only_green/touched");
  EXPECT_EQ(w.r().get<c::TopicInputs>(w.find(m)).boolean_service.at(0).topic,
            "/white_touches_only_green/enable");
  w.step(1000);
  EXPECT_EQ(touched(w, m), 0u);
  w.step(3100);
  EXPECT_EQ(touched(w, m), 1u);
  w.step(3100);  // it disabled itself
  EXPECT_EQ(touched(w, m), 1u);
  enable(w, m, true);
  w.step(3100);
  EXPECT_EQ(touched(w, m), 2u);
}

TEST(TouchPlugin, GazeboMultiLink) {
  LoadedWorld w(world());
  const std::string m = "touch_plugin::red_yellow_box";
  w.step(1000);
  EXPECT_EQ(touched(w, m), 0u);
  w.step(2100);
  EXPECT_EQ(touched(w, m), 1u);
}

TEST(TouchPlugin, GazeboStartDisabled) {
  LoadedWorld w(world());
  const std::string m = "touch_plugin::blue_box";
  w.step(3000);
  EXPECT_EQ(touched(w, m), 0u);
  enable(w, m, true);
  w.step(3000);
  EXPECT_EQ(touched(w, m), 1u);
}

// The message comes in the first step whose end is more than <time> after the step in which
// the uninterrupted touch began (Gazebo's comparison, strict).
TEST(TouchPlugin, FiresAfterTheConfiguredTimeOfUninterruptedTouch) {
  LoadedWorld w(world());
  const std::string m = "touch_plugin::white_box";
  const auto col = w.find("touch_plugin::white_box::link::collision");
  const auto green = w.find("touch_plugin::green_box_for_white::link::collision");
  double start = -1;
  for (int k = 1; k <= 6000 && touched(w, m) == 0; ++k) {
    w.step(1);
    bool touching = false;
    for (const auto& p : w.r().get<c::Contacts>(col).points) touching |= p.other == green;
    if (!touching) start = -1;
    if (touching && start < 0) start = w.t();
  }
  ASSERT_EQ(touched(w, m), 1u);
  ASSERT_GT(start, 0);
  EXPECT_NEAR(w.t() - start, 3.001, 1e-9);
}

TEST(TouchPlugin, ResetIsExact) {
  LoadedWorld w(world());
  const std::string m = "touch_plugin::white_box";
  w.step(4100);
  EXPECT_EQ(touched(w, m), 1u);
  w.runner->reset_now();
  EXPECT_EQ(touched(w, m), 0u);
  w.step(4100);
  EXPECT_EQ(touched(w, m), 1u);
}

TEST(TouchPlugin, WithoutAContactSensorItIsRefused) {
  EXPECT_THAT(testing::load_error(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <model name="b"><link name="link"><collision name="collision"><geometry><box><size>1 1 1</size>
    </box></geometry></collision></link>)" +
                                  touch("x", 1, "ns", true) + "</model></world></sdf>"),
              ::testing::HasSubstr("has no collision observed by a contact sensor"));
}

}  // namespace
}  // namespace kestrel::systems
