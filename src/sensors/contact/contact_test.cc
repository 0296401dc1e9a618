#include <gtest/gtest.h>

#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::TestWorld;

constexpr const char* kDrop = R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
  <gravity>0 0 -9.81</gravity>
  <model name="ground"><static>true</static><link name="l">
    <collision name="plane"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
  </link></model>
  <model name="box"><pose>0 0 0.3 0 0 0</pose><link name="l">
    <inertial><mass>1.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
    <sensor name="touch" type="contact"><update_rate>100</update_rate>
      <contact><collision>c</collision></contact></sensor>
  </link></model></world></sdf>)";

TEST(Contact, EmptyWhileFreeThenContactsWithForcesAndBeginEndEvents) {
  TestWorld w(kDrop);
  w.add(make_contact_system());
  w.start();
  const ecs::Entity s = w.find("w::box::l::touch");
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic, "/world/w/model/box/link/l/sensor/touch/contact");
  w.step(100);  // 0.1 s: still falling (needs ~0.2 s to land)
  const auto& r = w.r().get<c::ContactReading>(s);
  EXPECT_EQ(r.sequence, 10u);  // published every sample although nothing touches
  EXPECT_TRUE(r.contacts.empty());
  w.step(1400);  // landed and settled
  ASSERT_EQ(r.contacts.size(), 1u);
  const auto& sc = r.contacts[0];
  EXPECT_EQ(sc.collision_name, "w::box::l::c");
  EXPECT_EQ(sc.other_name, "w::ground::l::plane");
  ASSERT_FALSE(sc.positions.empty());
  EXPECT_EQ(sc.positions.size(), sc.normals.size());
  EXPECT_EQ(sc.positions.size(), sc.depths.size());
  EXPECT_EQ(sc.positions.size(), sc.forces.size());
  // At rest the solver's contact forces carry the weight (the wrench is filled).
  ignition::math::Vector3d total;
  for (const auto& f : sc.forces) total += f;
  EXPECT_NEAR(total.Z(), 1.5 * 9.81, 0.05);
  EXPECT_NEAR(sc.normals[0].Z(), 1.0, 1e-6);  // from the plane into the box
  EXPECT_TRUE(r.began.empty());               // already touching at the previous sample

  // Lift the box away: the next sample reports the end of the contact, then stays empty.
  w.r().set<c::WorldPoseCmd>(w.find("w::box"), {ignition::math::Pose3d(0, 0, 5, 0, 0, 0)});
  std::size_t ends = 0;
  for (std::uint64_t seq = r.sequence, samples = 0; samples < 5;) {
    w.step();
    if (r.sequence == seq) continue;
    seq = r.sequence;
    ++samples;
    ends += r.ended.size();
    if (!r.ended.empty()) {
      EXPECT_EQ(r.ended[0].other_name, "w::ground::l::plane");
    }
  }
  EXPECT_EQ(ends, 1u);
  EXPECT_TRUE(r.contacts.empty());
}

TEST(Contact, BeginEventExactlyOnceWhenLanding) {
  TestWorld w(kDrop);
  w.add(make_contact_system());
  w.start();
  const auto& r = w.r().get<c::ContactReading>(w.find("w::box::l::touch"));
  std::uint64_t last = 0;
  std::size_t begins = 0;
  for (int i = 0; i < 1500; ++i) {
    w.step();
    if (r.sequence != last) {
      last = r.sequence;
      begins += r.began.size();
    }
  }
  EXPECT_EQ(begins, 1u);
}

TEST(Contact, UnknownCollisionIsAnError) {
  std::string sdf = kDrop;
  sdf.replace(sdf.find("<collision>c</collision>"), 24, "<collision>nope</collision>");
  TestWorld w(sdf);
  w.add(make_contact_system());
  EXPECT_THROW(w.start(), Error);
}

}  // namespace
}  // namespace kestrel::sensors
