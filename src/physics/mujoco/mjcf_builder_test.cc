// MJCF generation: what each registry feature becomes, and what is reported.

#include "physics/mujoco/mjcf_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include "physics/test_worlds.h"

namespace kestrel::physics::mujoco {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using physics::testing::link_of;
using physics::testing::TestWorld;
using ::testing::HasSubstr;

std::string messages(const MjcfModel& m) {
  std::string out;
  for (const auto& i : m.issues) out += format_issue(i) + "\n";
  return out;
}

TEST(MjcfBuilder, BoxOnGroundBecomesFreeBodyAndStaticPlane) {
  TestWorld w;
  w.ground();
  c::Surface s;
  s.mu = s.mu2 = 0.7;
  s.collide_bitmask = 0x5;
  w.box("box", {0, 0, 1}, {0.2, 0.4, 0.6}, 2.0, s);
  const MjcfModel m = build_mjcf(w.r(), w.world());
  EXPECT_TRUE(m.issues.empty()) << messages(m);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(m.xml.c_str()), tinyxml2::XML_SUCCESS);
  auto* root = doc.FirstChildElement("mujoco");
  EXPECT_STREQ(root->FirstChildElement("compiler")->Attribute("angle"), "radian");
  EXPECT_STREQ(root->FirstChildElement("option")->Attribute("timestep"), "0.001");
  EXPECT_STREQ(root->FirstChildElement("option")->Attribute("gravity"), "0 0 -9.8");
  auto* wb = root->FirstChildElement("worldbody");
  auto* ground = wb->FirstChildElement("body");
  EXPECT_STREQ(ground->Attribute("name"), "test::ground::link");
  EXPECT_EQ(ground->FirstChildElement("freejoint"), nullptr);
  EXPECT_STREQ(ground->FirstChildElement("geom")->Attribute("type"), "plane");
  auto* box = ground->NextSiblingElement("body");
  EXPECT_STREQ(box->Attribute("pos"), "0 0 1");
  ASSERT_NE(box->FirstChildElement("freejoint"), nullptr);
  auto* in = box->FirstChildElement("inertial");
  EXPECT_STREQ(in->Attribute("mass"), "2");
  auto* g = box->FirstChildElement("geom");
  EXPECT_STREQ(g->Attribute("size"), "0.1 0.2 0.3");
  EXPECT_STREQ(g->Attribute("friction"), "0.7 0 0.0001");
  EXPECT_EQ(g->IntAttribute("contype"), 5);
  EXPECT_EQ(g->IntAttribute("conaffinity"), 5);
  // 1 m up no contact can occur yet: the room alone (grown when the box lands)
  EXPECT_EQ(root->FirstChildElement("size")->IntAttribute("nconmax"), 4);
}

TEST(MjcfBuilder, UnsupportedFeaturesAreReportedByName) {
  TestWorld w;
  const auto model = w.model("robot", Pose3d::Zero);
  const auto a = w.link(model, "a", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
  const auto b = w.link(model, "b", Pose3d(0, 0, 1, 0, 0, 0), 1, {0.1, 0.1, 0.1});
  w.joint(model, "screw", c::JointType::kScrew, a, b, Pose3d::Zero);
  c::MeshShape dae;
  dae.uri = "model://robot/meshes/body.dae";
  dae.path = "/tmp/body.dae";
  w.collision(a, "mesh", c::Geometry{dae});
  w.collision(a, "terrain", c::Geometry{c::HeightmapShape{}});
  c::Surface s;
  s.mu2 = 0.3;  // two friction directions: supported, nothing to report
  w.collision(b, "aniso", c::Geometry{c::SphereShape{0.1}}, Pose3d::Zero, s);
  w.collision(b, "plane", c::Geometry{c::PlaneShape{}});
  const auto text = messages(build_mjcf(w.r(), w.world()));
  EXPECT_THAT(text, HasSubstr("error: test::robot::screw: joint type 'screw' is not supported"));
  // Checked before any reader sees it (src/physics/mujoco/mesh_file.h).
  EXPECT_THAT(text, HasSubstr("error: test::robot::a::mesh: mesh 'model://robot/meshes/body.dae' "
                              "(/tmp/body.dae): the mesh file cannot be read"));
  EXPECT_THAT(text, HasSubstr("test::robot::a::terrain: heightmap"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("aniso")));
  EXPECT_THAT(text, HasSubstr("test::robot::b::plane: plane collision on a moving link"));
}

// The millimetre cube of physics_test without its <scale>: 1000× too big for its 1 kg.
TEST(MjcfBuilder, CollisionMeshTooBigForItsLinkIsReported) {
  TestWorld w;
  const auto model = w.model("cube", Pose3d::Zero);
  const double I = 0.2 * 0.2 / 6;
  const auto link = w.link(model, "link", Pose3d::Zero, 1.0, {I, I, I});
  c::MeshShape mesh;
  mesh.uri = "model://cube/cube_mm.ply";
  mesh.path = physics::testing::millimetre_cube_ply();
  w.collision(link, "collision", c::Geometry{mesh});
  const MjcfModel m = build_mjcf(w.r(), w.world());
  EXPECT_THAT(messages(m), HasSubstr("warning: test::cube::link::collision: collision mesh is "
                                     "200 x 200 x 200 m for a link of 1 kg (radius of gyration "
                                     "0.1 m): 1.25e-07 kg/m³ over its box is implausible"));
  ASSERT_EQ(m.meshes.size(), 1u);
  EXPECT_EQ(m.meshes[0].vfs_name, "mesh0.msh");
  // At its <scale> nothing is said but the convex hull.
  mesh.scale = {0.001, 0.001, 0.001};
  w.r().get<c::Geometry>(w.r().child_by_name(link, "collision")).shape = mesh;
  EXPECT_EQ(messages(build_mjcf(w.r(), w.world())),
            "warning: test::cube::link::collision: mesh collision uses the mesh's convex hull "
            "(MuJoCo collides convex meshes only)\n");
}

TEST(MjcfBuilder, BadInertiaAndMassAreErrorsNamingTheLink) {
  TestWorld w;
  const auto model = w.model("m", Pose3d::Zero);
  w.link(model, "zero", Pose3d::Zero, 0, {0.1, 0.1, 0.1});
  w.link(model, "triangle", Pose3d::Zero, 1, {0.1, 0.1, 1.0});
  const auto text = messages(build_mjcf(w.r(), w.world()));
  EXPECT_THAT(text, HasSubstr("test::m::zero: mass must be positive"));
  EXPECT_THAT(text, HasSubstr("test::m::triangle: inertia must be finite, positive definite and "
                              "satisfy the triangle inequality"));
  EXPECT_THROW(throw_on_errors(build_mjcf(w.r(), w.world()).issues), Error);
}

TEST(MjcfBuilder, SelfCollideOffExcludesLinkPairsOfAModel) {
  TestWorld w;
  const auto model = w.model("m", Pose3d::Zero);
  const auto a = w.link(model, "a", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
  const auto b = w.link(model, "b", Pose3d(1, 0, 0, 0, 0, 0), 1, {0.1, 0.1, 0.1});
  w.collision(a, "c", c::Geometry{c::SphereShape{0.1}});
  w.collision(b, "c", c::Geometry{c::SphereShape{0.1}});
  EXPECT_THAT(build_mjcf(w.r(), w.world()).xml,
              HasSubstr(R"(<exclude body1="test::m::a" body2="test::m::b"/>)"));
  w.r().add<c::SelfCollide>(model, true);
  EXPECT_THAT(build_mjcf(w.r(), w.world()).xml, ::testing::Not(HasSubstr("exclude")));
}

// kp/kd become MuJoCo's direct solref per unit link mass (k = kp/m, b = kd/m); a stiffness
// above MuJoCo's two-step limit 1/(4 dt²) is capped there and then damped at least critically,
// b = 2·√k (PX4's kp 1e8 without kd), which is MuJoCo's standard solref "2·dt 1".
TEST(MjcfBuilder, ContactStiffnessIsCappedAndTheCappedContactCriticallyDamped) {
  TestWorld w;  // 1 ms steps: the cap is 1/(4e-6) = 250000
  const auto model = w.model("m", Pose3d::Zero);
  const auto soft = w.link(model, "soft", Pose3d::Zero, 2, {0.1, 0.1, 0.1});
  const auto hard = w.link(model, "hard", Pose3d(1, 0, 0, 0, 0, 0), 2, {0.1, 0.1, 0.1});
  const auto damped = w.link(model, "damped", Pose3d(2, 0, 0, 0, 0, 0), 2, {0.1, 0.1, 0.1});
  c::Surface s;
  s.kp = 1e4;  // uncapped: 5000, kd as given (0)
  w.collision(soft, "c", c::Geometry{c::SphereShape{0.1}}, Pose3d::Zero, s);
  s.kp = 1e8;  // capped: 250000, damped 2·√250000 = 1000
  w.collision(hard, "c", c::Geometry{c::SphereShape{0.1}}, Pose3d::Zero, s);
  s.kd = 4000;  // capped, but kd/m = 2000 is above critical and kept
  w.collision(damped, "c", c::Geometry{c::SphereShape{0.1}}, Pose3d::Zero, s);
  const auto xml = build_mjcf(w.r(), w.world()).xml;
  EXPECT_THAT(xml, HasSubstr(R"(solref="-5000 -0")"));
  EXPECT_THAT(xml, HasSubstr(R"(solref="-250000 -1000")"));
  EXPECT_THAT(xml, HasSubstr(R"(solref="-250000 -2000")"));
}

TEST(MjcfBuilder, JointLimitsDampingFrictionSpring) {
  TestWorld w;
  const auto model = w.model("m", Pose3d::Zero);
  const auto a = w.link(model, "a", Pose3d::Zero, 1, {0.1, 0.1, 0.1});
  const auto b = w.link(model, "b", Pose3d(0, 0, 1, 0, 0, 0), 1, {0.1, 0.1, 0.1});
  c::JointAxisData ax;
  ax.xyz = {1, 0, 0};
  ax.lower = -0.5;
  ax.upper = 0.25;
  ax.damping = 0.1;
  ax.friction = 0.2;
  ax.spring_stiffness = 3;
  ax.spring_reference = 0.1;
  w.joint(model, "j", c::JointType::kRevolute, a, b, Pose3d(0, 0, 0.5, 0, 0, 0), ax);
  const auto m = build_mjcf(w.r(), w.world());
  EXPECT_THAT(m.xml, HasSubstr(R"(<joint name="test::m::j" type="hinge" pos="0 0 -0.5" )"
                               R"(axis="1 0 0" limited="true" range="-0.5 0.25" )"
                               R"(solreflimit="0.002 1" damping="0.1" )"
                               R"(frictionloss="0.2" stiffness="3" springref="0.1"/>)"));
  // b is nested in a (relative pose), a is a free root.
  EXPECT_THAT(m.xml, HasSubstr(R"(<body name="test::m::b" pos="0 0 1" quat="1 0 0 0">)"));
}

TEST(MjcfBuilder, ExportedMjcfIsWhatCheckAndTheEngineUse) {
  TestWorld w;
  w.ground();
  w.box("box", {0, 0, 1}, {0.2, 0.2, 0.2}, 1.0);
  EXPECT_EQ(export_mjcf(w.r(), w.world()), build_mjcf(w.r(), w.world()).xml);
  EXPECT_TRUE(check_physics(w.r(), w.world()).empty());
  auto engine = make_mujoco_engine();
  engine->build(w.r(), w.world());
  EXPECT_EQ(engine->model_text(), export_mjcf(w.r(), w.world()));
}

}  // namespace
}  // namespace kestrel::physics::mujoco
