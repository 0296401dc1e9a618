#include "kestrel/sdf/world_loader.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kestrel/components/fluid.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics_islands.h"
#include "kestrel/components/world.h"

namespace kestrel::sdf {
namespace {

namespace c = components;
namespace fs = std::filesystem;
using ignition::math::Pose3d;
using ignition::math::Vector3d;
using ::testing::HasSubstr;
using ::testing::Not;

struct Loaded {
  ecs::Registry reg;
  ecs::Entity world = ecs::kNullEntity;
  WorldDescription d;
};

std::unique_ptr<Loaded> load(const std::string& sdf, const LoadOptions& o = {}) {
  auto l = std::make_unique<Loaded>();
  l->world = l->reg.create();
  l->d = load_world_string(sdf, l->reg, l->world, o, "test.sdf");
  return l;
}

std::string messages(const WorldDescription& d) {
  std::string s;
  for (const auto& f : d.findings.items()) s += format_finding(f) + "\n";
  return s;
}

void expect_pose_near(const Pose3d& a, const Pose3d& b) {
  EXPECT_NEAR(a.Pos().Distance(b.Pos()), 0, 1e-12) << a << " vs " << b;
  EXPECT_NEAR(std::abs(a.Rot().Dot(b.Rot())), 1, 1e-12) << a << " vs " << b;
}

const char* kInertial = R"(<inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy>
  <izz>0.1</izz></inertia></inertial>)";

std::string world(const std::string& body) {
  return "<?xml version='1.0'?><sdf version='1.9'><world name='w'>" + body + "</world></sdf>";
}

TEST(WorldLoader, WorldDataAndPhysics) {
  auto l = load(world(R"(
    <physics name='p' type='ode'><max_step_size>0.004</max_step_size>
      <real_time_factor>2</real_time_factor></physics>
    <gravity>0 0 -3.7</gravity>
    <magnetic_field>1e-6 2e-6 3e-6</magnetic_field>
    <spherical_coordinates><latitude_deg>47.1</latitude_deg><longitude_deg>8.5</longitude_deg>
      <elevation>400</elevation></spherical_coordinates>)"));
  EXPECT_EQ(messages(l->d), "");
  EXPECT_EQ(l->d.name, "w");
  EXPECT_TRUE(l->d.physics_declared);
  EXPECT_EQ(l->d.physics.max_step_size, Duration{4'000'000});
  EXPECT_EQ(l->d.physics.real_time_factor, 2.0);
  EXPECT_EQ(l->d.physics.sdf_type, "ode");
  EXPECT_EQ(l->reg.get<c::Name>(l->world).value, "w");
  EXPECT_TRUE(l->reg.has<c::World>(l->world));
  EXPECT_EQ(l->reg.get<c::Gravity>(l->world).value, ignition::math::Vector3d(0, 0, -3.7));
  EXPECT_EQ(l->reg.get<c::PhysicsParams>(l->world).max_step_size, Duration{4'000'000});
  EXPECT_DOUBLE_EQ(l->reg.get<c::SphericalCoordinates>(l->world).latitude_deg, 47.1);
  EXPECT_DOUBLE_EQ(l->reg.get<c::SphericalCoordinates>(l->world).elevation, 400);
  EXPECT_EQ(l->reg.get<c::MagneticField>(l->world).value,
            ignition::math::Vector3d(1e-6, 2e-6, 3e-6));
}

// Two <plugin>s with the same name on one line (a generated world) each keep their own
// parameters: the original element is told apart by its content, not taken by line alone.
TEST(WorldLoader, PluginsOnOneLineKeepTheirOwnParameters) {
  auto l = load(world(std::string("<model name='m'><static>true</static><link name='a'/>") +
                      "<plugin filename='f' name='p'><link>a</link></plugin>"
                      "<plugin filename='f' name='p'><link>b</link></plugin>"
                      "<plugin filename='f' name='q'><k>1</k></plugin></model>"));
  ASSERT_EQ(l->d.plugins.size(), 3u) << messages(l->d);
  EXPECT_EQ(l->d.plugins[0].config->get<std::string>("link"), "a");
  EXPECT_EQ(l->d.plugins[1].config->get<std::string>("link"), "b");
  EXPECT_EQ(l->d.plugins[2].config->get<int>("k"), 1);
  EXPECT_THAT(l->d.plugins[1].config->where(), HasSubstr("test.sdf:1"));
}

// <kestrel:physics_islands/> forces islands on, "false" off; anything else is an error.
TEST(WorldLoader, PhysicsIslandsOnOffOrError) {
  namespace c = kestrel::components;
  for (const auto& [text, on] :
       {std::pair{"<kestrel:physics_islands/>", true},
        {"<kestrel:physics_islands>true</kestrel:physics_islands>", true},
        {"<kestrel:physics_islands> false </kestrel:physics_islands>", false}}) {
    auto l = load(world(text));
    EXPECT_EQ(l->d.findings.count(Severity::kError), 0u) << messages(l->d);
    ASSERT_TRUE(l->reg.has<c::PhysicsIslands>(l->world)) << text;
    EXPECT_EQ(l->reg.get<c::PhysicsIslands>(l->world).enabled, on) << text;
  }
  EXPECT_FALSE(load(world(""))->reg.has<c::PhysicsIslands>(load(world(""))->world));
  auto bad = load(world("\n<kestrel:physics_islands>maybe</kestrel:physics_islands>"));
  EXPECT_THAT(messages(bad->d), HasSubstr(":2: [w] <kestrel:physics_islands> takes true, false "
                                          "or nothing (true), found 'maybe'"));
}

// Inline models that differ only in name and <pose> (16 or more) are built from one parse of
// the first: the same entities, poses and source lines as libsdformat would give, unsupported
// elements still found (once, at the first twin's line); a twin something refers to, one with
// a relative pose, and a model of another shape go through libsdformat.
TEST(WorldLoader, TwinInlineModelsAreBuiltFromOneParse) {
  std::string body = "\n<model name='solo'><link name='l'/></model>";
  for (int i = 0; i < 20; ++i) {
    body += fmt::format(
        "\n<model name='s{}'><pose>{} 0 0.5 0 0 {}</pose><link name='link'><inertial><mass>2"
        "</mass></inertial><collision name='c'><geometry><sphere><radius>0.5</radius></sphere>"
        "</geometry></collision><bogus/></link></model>",
        i, 1.5 * i, 0.1 * i);
  }
  body +=
      "\n<model name='rel'><pose relative_to='s3'>0 1 0 0 0 0</pose><link name='link'>"
      "<inertial><mass>2</mass></inertial><collision name='c'><geometry><sphere><radius>0.5"
      "</radius></sphere></geometry></collision><bogus/></link></model>"
      "\n<frame name='f' attached_to='s7'/>";
  auto l = load(world(body));
  const std::string m = messages(l->d);
  EXPECT_EQ(l->d.findings.count(Severity::kError), 0u) << m;
  EXPECT_EQ(l->d.instanced, 18u) << "s3 and s7 are referred to";
  for (int i = 0; i < 20; ++i) {
    const auto link = l->reg.find_scoped(fmt::format("w::s{}::link", i));
    ASSERT_NE(link, ecs::kNullEntity) << i;
    expect_pose_near(l->reg.get<c::WorldPose>(link).value, Pose3d(1.5 * i, 0, 0.5, 0, 0, 0.1 * i));
    const auto& loc = l->reg.get<c::SourceLocation>(l->reg.find_scoped(fmt::format("w::s{}", i)));
    EXPECT_EQ(loc.line, i == 3 || i == 7 ? 3 + i : 3) << i << ": the first twin's line, or its own";
    EXPECT_NEAR(
        std::get<c::SphereShape>(
            l->reg.get<c::Geometry>(l->reg.find_scoped(fmt::format("w::s{}::link::c", i))).shape)
            .radius,
        0.5, 0);
  }
  expect_pose_near(l->reg.get<c::WorldPose>(l->reg.find_scoped("w::rel::link")).value,
                   Pose3d(4.5 - std::sin(0.3), std::cos(0.3), 0.5, 0, 0, 0.3));
  EXPECT_NE(l->reg.find_scoped("w::solo::l"), ecs::kNullEntity);
  EXPECT_THAT(m, HasSubstr(":3: [w::s0::link] unsupported element <bogus> in <link>"));
}

// A latitude beyond the pole (a swapped latitude/longitude, a typo) is an error at its line.
TEST(WorldLoader, SphericalCoordinatesOutOfRangeAreErrors) {
  auto l = load(world(R"(
    <spherical_coordinates><latitude_deg>147.4</latitude_deg>
      <longitude_deg>-181</longitude_deg></spherical_coordinates>)"));
  const std::string m = messages(l->d);
  EXPECT_EQ(l->d.findings.count(Severity::kError), 2u) << m;
  EXPECT_THAT(m, HasSubstr(":2: [w] <spherical_coordinates><latitude_deg> must be within ±90 "
                           "degrees; found 147.4"));
  EXPECT_THAT(m, HasSubstr(":3: [w] <spherical_coordinates><longitude_deg> must be within ±180"));
}

// Nested models and relative_to frames: world poses are the exact composition.
TEST(WorldLoader, NestedModelsAndRelativeToPosesCompose) {
  auto l = load(world(std::string(R"(
    <model name='outer'>
      <pose>1 2 3 0 0 1.5707963267948966</pose>
      <frame name='f'><pose>0 0 1 0 0 0</pose></frame>
      <link name='base'>)") +
                      kInertial + R"(<pose relative_to='f'>1 0 0 0 0 0</pose></link>
      <model name='inner'>
        <pose relative_to='base'>0 1 0 0 0 0</pose>
        <link name='l'>)" +
                      kInertial + R"(<pose>0 0 0.5 0 0 0</pose>
          <collision name='c'><pose>0.1 0 0 0 0 0</pose><geometry><box><size>1 2 3</size></box></geometry></collision>
          <sensor name='imu' type='imu'><pose>0 0 0.2 0 0 0</pose><update_rate>100</update_rate></sensor>
        </link>
      </model>
      <joint name='j' type='revolute'><parent>base</parent><child>inner::l</child>
        <pose>0 0 0.3 0 0 0</pose><axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
    </model>)"));
  EXPECT_EQ(messages(l->d), "");
  auto& r = l->reg;
  const auto outer = r.find_scoped("w::outer");
  const auto base = r.find_scoped("w::outer::base");
  const auto inner = r.find_scoped("w::outer::inner");
  const auto link = r.find_scoped("w::outer::inner::l");
  const auto col = r.find_scoped("w::outer::inner::l::c");
  const auto imu = r.find_scoped("w::outer::inner::l::imu");
  const auto joint = r.find_scoped("w::outer::j");
  ASSERT_NE(outer, ecs::kNullEntity);
  ASSERT_NE(col, ecs::kNullEntity);
  ASSERT_NE(joint, ecs::kNullEntity);
  const Pose3d X_WO(1, 2, 3, 0, 0, 1.5707963267948966);
  const Pose3d X_OB = Pose3d(0, 0, 1, 0, 0, 0) * Pose3d(1, 0, 0, 0, 0, 0);  // via frame f
  const Pose3d X_OI = X_OB * Pose3d(0, 1, 0, 0, 0, 0);
  const Pose3d X_IL(0, 0, 0.5, 0, 0, 0);
  expect_pose_near(r.get<c::Pose>(base).value, X_OB);
  expect_pose_near(r.get<c::Pose>(inner).value, X_OI);
  expect_pose_near(r.get<c::Pose>(link).value, X_IL);
  expect_pose_near(r.get<c::WorldPose>(link).value, X_WO * X_OI * X_IL);
  expect_pose_near(r.get<c::WorldPose>(col).value, X_WO * X_OI * X_IL * Pose3d(0.1, 0, 0, 0, 0, 0));
  expect_pose_near(r.get<c::WorldPose>(imu).value, X_WO * X_OI * X_IL * Pose3d(0, 0, 0.2, 0, 0, 0));
  // Joint pose is relative to its child link in SDF; Kestrel stores it relative to the model.
  expect_pose_near(r.get<c::Pose>(joint).value, X_OI * X_IL * Pose3d(0, 0, 0.3, 0, 0, 0));
  const auto& jd = r.get<c::JointData>(joint);
  EXPECT_EQ(jd.type, c::JointType::kRevolute);
  EXPECT_EQ(jd.parent, base);
  EXPECT_EQ(jd.child, link);
  EXPECT_EQ(jd.axis.lower, -1);
  EXPECT_EQ(std::get<c::BoxShape>(r.get<c::Geometry>(col).shape).size,
            ignition::math::Vector3d(1, 2, 3));
  EXPECT_EQ(r.get<c::Sensor>(imu).type, "imu");
  EXPECT_EQ(r.get<c::Sensor>(imu).update_rate, 100);
  EXPECT_EQ(r.get<c::SourceLocation>(col).file, "test.sdf");
  EXPECT_GT(r.get<c::SourceLocation>(col).line, 1);
  EXPECT_EQ(r.parent(link), inner);
  EXPECT_EQ(l->d.counts.models, 2u);
  EXPECT_EQ(l->d.counts.links, 2u);
  EXPECT_EQ(l->d.counts.frames, 1u);
}

TEST(WorldLoader, InertiaProblemsAreErrorsNamingTheLink) {
  auto l = load(world(R"(
    <model name='m'>
      <link name='none'/>
      <link name='zero'><inertial><mass>0</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
      <link name='nan'><inertial><mass>1</mass><inertia><ixx>nan</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
      <link name='tri'><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>3</izz></inertia></inertial></link>
      <link name='neg'><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>-1</izz></inertia></inertial></link>
    </model>)"));
  const std::string m = messages(l->d);
  EXPECT_THAT(m, HasSubstr("link 'none' has no <inertial>"));
  EXPECT_THAT(m, HasSubstr("link 'zero' has mass 0"));
  EXPECT_THAT(m, HasSubstr("test.sdf:5: [w::m::nan] <ixx> expected a finite number, found 'nan'"));
  EXPECT_THAT(m, HasSubstr("link 'tri' violates the triangle inequality"));
  EXPECT_THAT(m, HasSubstr("link 'neg' is not positive definite"));
  EXPECT_EQ(l->d.findings.count(Severity::kError), 4u) << m;
  EXPECT_EQ(l->d.findings.count(Severity::kWarning), 1u) << m;  // missing: loud default
}

// <ode>'s <mu2>, <slip1>, <slip2> and <fdir1> (in the collision's frame, or a link's through
// gz:expressed_in / ignition:expressed_in) are read; bad values are errors at their line.
TEST(WorldLoader, FrictionDirectionsAndSlipAreRead) {
  auto surface_of = [](const std::string& ode) {
    return "<model name='m'><link name='base'>" + std::string(kInertial) +
           "</link><link name='wheel'>" + kInertial +
           "<collision name='c'><geometry><sphere><radius>0.1</radius></sphere></geometry>"
           "<surface><friction><ode>" +
           ode + "</ode></friction></surface></collision></link></model>";
  };
  auto l = load(world(surface_of(
      "<mu>0.9</mu><mu2>0.2</mu2><slip1>0.03</slip1><slip2>0.01</slip2>"
      "<fdir1 gz:expressed_in='base'>0 0 2</fdir1>")));
  EXPECT_EQ(messages(l->d), "");
  const auto& s = l->reg.get<c::Surface>(l->reg.find_scoped("w::m::wheel::c"));
  EXPECT_EQ(s.mu, 0.9);
  EXPECT_EQ(s.mu2, 0.2);
  EXPECT_EQ(s.slip1, 0.03);
  EXPECT_EQ(s.slip2, 0.01);
  EXPECT_EQ(s.fdir1, Vector3d(0, 0, 1));
  EXPECT_EQ(s.fdir1_link, l->reg.find_scoped("w::m::base"));
  l = load(world(surface_of("<fdir1 ignition:expressed_in='wheel'>1 0 0</fdir1>")));
  EXPECT_EQ(messages(l->d), "");
  EXPECT_EQ(l->reg.get<c::Surface>(l->reg.find_scoped("w::m::wheel::c")).fdir1_link,
            l->reg.find_scoped("w::m::wheel"));
  l = load(world(surface_of("<fdir1>0 0 0</fdir1>")));  // SDF's default: none
  EXPECT_EQ(l->reg.get<c::Surface>(l->reg.find_scoped("w::m::wheel::c")).fdir1, Vector3d::Zero);
  const std::string m = messages(
      load(world(surface_of("<slip1>-0.1</slip1><fdir1 gz:expressed_in='chassis'>1 0 0</fdir1>")))
          ->d);
  EXPECT_THAT(m, HasSubstr("test.sdf:3: [w::m::wheel::c] <slip1> -0.1 and <slip2> 0: slip "
                           "compliances are finite and >= 0 [m/s/N]"));
  EXPECT_THAT(m, HasSubstr("<fdir1 expressed_in='chassis'>: no link 'chassis' in model 'w::m' "
                           "(links: base, wheel)"));
  EXPECT_THAT(messages(load(world(surface_of("<fdir1 frame='x'>1 0 0</fdir1>")))->d),
              HasSubstr("frame"));
}

TEST(WorldLoader, StaticModelsNeedNoInertial) {
  auto l = load(world("<model name='g'><static>true</static><link name='l'/></model>"));
  EXPECT_EQ(messages(l->d), "");
  EXPECT_TRUE(l->reg.get<c::Static>(l->reg.find_scoped("w::g")).value);
}

TEST(WorldLoader, JointToMissingLinkIsAnError) {
  auto l = load(world(std::string("<model name='m'><link name='a'>") + kInertial +
                      "</link><joint name='j' type='revolute'><parent>a</parent><child>b</child>"
                      "<axis><xyz>0 0 1</xyz></axis></joint></model>"));
  const std::string m = messages(l->d);
  EXPECT_THAT(m, HasSubstr("child link 'b' does not exist in model 'm'"));
  // One error, by name: not libsdformat's frame-graph consequences (unresolvable joint pose
  // and axis, "PoseRelativeToGraph ... vertex with id", eight more in a real model).
  EXPECT_EQ(l->d.findings.count(Severity::kError), 1u) << m;
}

// A zero joint axis is an error at the <xyz> line, naming the joint (libsdformat's own message
// has neither).
TEST(WorldLoader, ZeroJointAxisIsAnErrorAtItsLine) {
  auto l = load(world(std::string("<model name='m'><link name='a'>") + kInertial +
                      "</link><link name='b'>" + kInertial +
                      "</link><joint name='j' type='revolute'><parent>a</parent><child>b</child>"
                      "\n<axis>\n<xyz>0 0 0</xyz></axis></joint></model>"));
  const std::string m = messages(l->d);
  EXPECT_EQ(l->d.findings.count(Severity::kError), 1u) << m;
  EXPECT_THAT(m, HasSubstr(":5: [w::m::j] joint 'j': <axis><xyz> is 0 0 0; expected a non-zero "
                           "direction"));
}

// SDF 1.10's <fluid_added_mass> (newer than libsdformat 12) is read from the original text:
// the upper triangle mirrored, absent entries 0, no "unknown element" warning; an entry that is
// not one of the 21 or not a number is an error at its line.
TEST(WorldLoader, FluidAddedMassIsReadAndBadEntriesAreErrorsAtTheirLine) {
  auto l = load(world(R"(<model name='m'><link name='hull'><inertial><mass>1</mass>
      <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia>
      <fluid_added_mass><xx>0.5</xx><yy>2</yy><yr>0.25</yr><zq>-0.25</zq><qq>3</qq>
      </fluid_added_mass></inertial></link></model>)"));
  EXPECT_EQ(messages(l->d), "");
  const auto hull = l->reg.find_scoped("w::m::hull");
  ASSERT_TRUE(l->reg.has<c::FluidAddedMass>(hull));
  const auto& a = l->reg.get<c::FluidAddedMass>(hull);
  EXPECT_EQ(a(0, 0), 0.5);
  EXPECT_EQ(a(1, 1), 2);
  EXPECT_EQ(a(1, 5), 0.25);
  EXPECT_EQ(a(5, 1), 0.25);
  EXPECT_EQ(a(2, 4), -0.25);
  EXPECT_EQ(a(4, 2), -0.25);
  EXPECT_EQ(a(4, 4), 3);
  EXPECT_EQ(a(3, 3), 0);
  EXPECT_EQ(a(0, 5), 0);

  auto bad = load(world(R"(<model name='m'><link name='hull'><inertial><mass>1</mass>
      <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia>
      <fluid_added_mass>
        <yx>1</yx>
        <zz>nan</zz>
      </fluid_added_mass></inertial></link></model>)"));
  const std::string m = messages(bad->d);
  EXPECT_THAT(m, HasSubstr("test.sdf:4: [w::m::hull] <fluid_added_mass> of link 'hull' has no "
                           "entry <yx>"));
  EXPECT_THAT(m, HasSubstr("test.sdf:5: [w::m::hull] <zz> expected a finite number, found "
                           "'nan'"));
}

TEST(WorldLoader, UnsupportedAndPlaceholdersAndDuplicates) {
  auto l = load(world(std::string(R"(<model name='m'><link name='a'>)") + kInertial +
                      R"(<velocity_decay/><sensor name='s' type='wide_angle_camera'/></link>
      </model><model name='d'><link name='a'>)" +
                      kInertial + R"(</link><link name='a'>)" + kInertial + R"(</link></model>
      <model name='p'><static>1</static><link name='l'><sensor name='x' type='imu'>
        <topic>__default__</topic></sensor></link></model>)"));
  const std::string m = messages(l->d);
  EXPECT_THAT(m, HasSubstr("test.sdf:2: [w::m::a] unsupported element <velocity_decay>"));
  EXPECT_THAT(m, HasSubstr("sensor type 'wide_angle_camera' is not supported"));
  EXPECT_THAT(m, HasSubstr("duplicate name 'a'"));
  EXPECT_THAT(m, HasSubstr("placeholder value '__default__'"));
}

// libsdformat 12 renames a joint that has a sibling link's name in a file older than SDF 1.7
// (PX4's rover_differential, SDF 1.6, names its caster joint after the caster link); in 1.7 and
// later it is an error, and two joints of one name are an error in every version.
TEST(WorldLoader, PreSdf17JointNamedLikeALinkIsRenamedAsLibsdformatDoes) {
  const auto model = [](const std::string& version, const std::string& extra) {
    return "<?xml version='1.0'?><sdf version='" + version +
           "'><world name='w'><model name='m'><link name='a'>" + kInertial +
           "</link><joint name='b' type='ball'><parent>a</parent><child>b</child></joint><link "
           "name='b'>" +
           kInertial + "</link>" + extra + "</model></world></sdf>";
  };
  auto old = load(model("1.6", ""));
  const std::string m = messages(old->d);
  EXPECT_EQ(old->d.findings.count(Severity::kError), 0u) << m;
  EXPECT_THAT(m, HasSubstr("test.sdf:2: <joint name='b'> has the name of a sibling declared at "
                           "line 2: libsdformat renames it 'b_joint' in a file older than SDF 1.7 "
                           "(this one is SDF 1.6)"));
  EXPECT_NE(old->reg.find_scoped("w::m::b_joint"), ecs::kNullEntity);
  EXPECT_NE(old->reg.find_scoped("w::m::b"), ecs::kNullEntity);

  auto twice = load(model("1.6",
                          "<joint name='b' type='ball'><parent>a</parent><child>b</child>"
                          "</joint>"));
  EXPECT_THAT(messages(twice->d), HasSubstr("duplicate name 'b': <joint>"));

  auto current = load(model("1.7", ""));
  EXPECT_THAT(messages(current->d), HasSubstr("duplicate name 'b'"));
  EXPECT_GE(current->d.findings.count(Severity::kError), 1u);
}

// An element SDF does not define where it stands, within a small edit distance of one it does,
// is a misspelling: an error naming its line and the element meant (a warning would let the run
// use the default: 1 kg, 1 ms). Other unknown elements stay warnings.
TEST(WorldLoader, MisspeltElementsAreErrorsWithTheElementMeant) {
  auto l = load(world(R"(
    <physics name='p' type='ode'><max_setp_size>0.004</max_setp_size></physics>
    <model name='m'><link name='a'>
      <inertial><mas>2</mas><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      <velocity_decay/><flux_capacitor>1</flux_capacitor><kestrel:mas>1</kestrel:mas>
    </link></model>
    <gravty>0 0 -1</gravty>)"));
  const std::string m = messages(l->d);
  EXPECT_THAT(m, HasSubstr("error: test.sdf:2: [w] <max_setp_size> is not an element of "
                           "<physics>: did you mean <max_step_size>?"));
  EXPECT_THAT(m, HasSubstr("error: test.sdf:4: [w::m::a] <mas> is not an element of <inertial>: "
                           "did you mean <mass>?"));
  EXPECT_THAT(m, HasSubstr("error: test.sdf:7: [w] <gravty> is not an element of <world>: did "
                           "you mean <gravity>?"));
  EXPECT_THAT(m, HasSubstr("warning: test.sdf:5: [w::m::a] unsupported element <velocity_decay>"));
  EXPECT_THAT(m, HasSubstr("warning: test.sdf:5: [w::m::a] unsupported element <flux_capacitor>"));
  EXPECT_THAT(m, Not(HasSubstr("<kestrel:mas> is not an element")));
  EXPECT_THAT(m, Not(HasSubstr("did you mean <velocity")));
  EXPECT_EQ(l->d.findings.count(Severity::kError), 3u) << m;
}

TEST(WorldLoader, UnreadableInputThrows) {
  ecs::Registry reg;
  const auto w = reg.create();
  EXPECT_THROW(load_world_string("", reg, w), UnreadableWorld);
  EXPECT_THROW(load_world_string("<sdf><world name='x'>", reg, w), UnreadableWorld);
  EXPECT_THROW(load_world_string(
                   "<sdf version='1.9'><model name='m'><link name='l'/></model></sdf>", reg, w),
               UnreadableWorld);
  EXPECT_THROW(load_world_file("/nonexistent/world.sdf", reg, w), UnreadableWorld);
  try {
    load_world_file("/nonexistent/world.sdf", reg, w);
  } catch (const UnreadableWorld& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/world.sdf: file does not exist"));
  }
  LoadOptions small;
  small.max_file_bytes = 10;
  EXPECT_THROW(load_world_string(world(""), reg, w, small), UnreadableWorld);
}

// Files that are not regular files are refused at once, never waited on (a FIFO's open blocks
// until a writer comes) or read without end (/dev/zero); a symlink loop says so.
TEST(WorldLoader, FifosDevicesAndLoopsAreRefusedWithoutWaiting) {
  ecs::Registry reg;
  const auto w = reg.create();
  const fs::path dir =
      fs::temp_directory_path() / ("kestrel_sdf_fifo_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_EQ(mkfifo((dir / "fifo.sdf").c_str(), 0600), 0);
  fs::create_symlink(dir / "b.sdf", dir / "a.sdf");
  fs::create_symlink(dir / "a.sdf", dir / "b.sdf");
  auto message = [&](const fs::path& p) {
    try {
      load_world_file(p, reg, w);
    } catch (const UnreadableWorld& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_THAT(message(dir / "fifo.sdf"), HasSubstr("is a FIFO, expected a regular file"));
  EXPECT_THAT(message("/dev/zero"), HasSubstr("is a character device"));
  EXPECT_THAT(message(dir / "a.sdf"), HasSubstr("Too many levels of symbolic links"));
  EXPECT_THAT(message("/proc/self/status"), HasSubstr("file is empty"));
  fs::remove_all(dir);
}

// A step size the integer clock cannot hold is reported with the value written and the range
// (it was "found 0 ns" for 1e-12 s and "-9223372036854775808 ns" for 1e308 s).
TEST(WorldLoader, StepSizesOutsideTheClockNameTheValueAndTheRange) {
  for (const char* step : {"1e-12", "1e308", "-1", "0"}) {
    auto l = load(world(std::string("<physics name='p' type='ode'><max_step_size>") + step +
                        "</max_step_size></physics>"));
    EXPECT_THAT(messages(l->d),
                HasSubstr(std::string("<max_step_size> must be a step size from 1 ns to "
                                      "9223372036.854775807 s (about 292 years; Kestrel's clock "
                                      "counts integer nanoseconds), found ") +
                          (std::string(step) == "1e308" ? "1e+308" : step) + " s"))
        << step;
  }
}

// libsdformat 12 keeps megabytes per model and builds its document in one call: a world that
// would not fit is refused before it is parsed, with the numbers.
TEST(WorldLoader, AWorldTooBigForTheMemoryIsRefusedBeforeItIsParsed) {
  std::string body;
  for (int i = 0; i < 100; ++i) {
    body += "<model name='m" + std::to_string(i) + "'><static>true</static><link name='l" +
            std::to_string(i) + "'/></model>";  // all different: twins would be parsed once
  }
  setenv("KESTREL_MEMORY_LIMIT", "100M", 1);
  try {
    load(world(body));
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("not enough memory to load this world: libsdformat 12 would "
                                    "take ~260.0 MiB"));
    EXPECT_THAT(e.what(), HasSubstr("KESTREL_MEMORY_LIMIT=100M"));
  }
  setenv("KESTREL_MEMORY_LIMIT", "lots", 1);
  EXPECT_THAT([&] { load(world(body)); },
              ::testing::ThrowsMessage<Error>(HasSubstr("KESTREL_MEMORY_LIMIT must be a size")));
  unsetenv("KESTREL_MEMORY_LIMIT");
  EXPECT_NO_THROW(load(world(body)));
}

class IncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kestrel_sdf_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "models" / "box");
    write(dir_ / "models" / "box" / "model.config",
          "<?xml version='1.0'?><model><name>box</name><sdf version='1.9'>box.sdf</sdf></model>");
    write(dir_ / "models" / "box" / "box.sdf",
          std::string("<?xml version='1.0'?><sdf version='1.9'><model name='box'>"
                      "<link name='l'><pose>0 0 1 0 0 0</pose>") +
              kInertial + "</link><plugin filename='p' name='n'><k>1</k></plugin></model></sdf>");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }
  // Loads dir_/w.sdf with dir_/models on the resource path.
  WorldDescription load(ecs::Registry& reg) {
    const auto w = reg.create();
    LoadOptions o;
    o.resource_paths = {dir_ / "models"};
    return load_world_file(dir_ / "w.sdf", reg, w, o);
  }
  fs::path dir_;
};

TEST_F(IncludeTest, ModelUriResolvesOnResourcePath) {
  write(dir_ / "w.sdf", world(R"(
    <include><uri>model://box</uri><name>b1</name><pose>1 0 0 0 0 0</pose></include>
    <include><uri>model://box</uri><name>b2</name><pose>2 0 0 0 0 0</pose></include>)"));
  ecs::Registry reg;
  const auto d = load(reg);
  EXPECT_EQ(messages(d), "");
  const auto l2 = reg.find_scoped("w::b2::l");
  ASSERT_NE(l2, ecs::kNullEntity);
  expect_pose_near(reg.get<c::WorldPose>(l2).value, Pose3d(2, 0, 1, 0, 0, 0));
  EXPECT_THAT(reg.get<c::SourceLocation>(l2).file, HasSubstr("box.sdf"));
  ASSERT_EQ(d.plugins.size(), 2u);
  EXPECT_EQ(d.plugins[0].filename, "p");
  EXPECT_EQ(d.plugins[1].entity, reg.find_scoped("w::b2"));
  EXPECT_EQ(d.plugins[0].config->get<int>("k"), 1);
  EXPECT_THAT(d.plugins[0].config->where(), HasSubstr("box.sdf:2"));
}

// sdformat trims <uri> text: a URI on lines of its own resolves, whether the include is built
// from one parse of the file or left to libsdformat (a pose relative to another model).
TEST_F(IncludeTest, UriWithSurroundingWhitespaceIsTrimmed) {
  write(dir_ / "w.sdf", world(R"(
    <include>
      <uri>
        model://box
      </uri>
      <name>b1</name>
    </include>
    <include>
      <uri>
        model://box
      </uri>
      <name>b2</name><pose relative_to='b1'>1 0 0 0 0 0</pose>
    </include>
    <include><uri>  model://box  </uri><name>b3</name></include>)"));
  ecs::Registry reg;
  const auto d = load(reg);
  EXPECT_EQ(messages(d), "");
  EXPECT_EQ(d.instanced, 1u) << "b3 (b1 and b2 go through libsdformat: a relative_to)";
  const auto w = reg.entities().front();
  for (const char* name : {"b1", "b2", "b3"}) {
    EXPECT_NE(reg.child_by_name(w, name), ecs::kNullEntity) << name;
  }
}

// PX4's x500_depth: a model file merging a model that itself merges another (by model://).
TEST_F(IncludeTest, NestedMergeIncludesResolveOnTheResourcePath) {
  fs::create_directories(dir_ / "models" / "frame");
  fs::create_directories(dir_ / "models" / "vehicle");
  write(dir_ / "models" / "frame" / "model.config",
        "<?xml version='1.0'?><model><name>frame</name><sdf version='1.9'>model.sdf</sdf></model>");
  write(dir_ / "models" / "frame" / "model.sdf",
        std::string("<?xml version='1.0'?><sdf version='1.9'><model name='frame'>"
                    "<link name='base_link'>") +
            kInertial + "</link></model></sdf>");
  write(dir_ / "models" / "vehicle" / "model.config",
        "<?xml version='1.0'?><model><name>vehicle</name><sdf version='1.9'>model.sdf</sdf>"
        "</model>");
  write(dir_ / "models" / "vehicle" / "model.sdf",
        "<?xml version='1.0'?><sdf version='1.9'><model name='vehicle'><include merge='true'>"
        "<uri>model://frame</uri></include></model></sdf>");
  write(dir_ / "w.sdf", world(R"(<model name='v2'><include merge='true'><uri>model://vehicle</uri>
    </include><include merge='true'><uri>model://box</uri></include></model>)"));
  ecs::Registry reg;
  const auto d = load(reg);
  EXPECT_EQ(messages(d), "");
  EXPECT_NE(reg.find_scoped("w::v2::base_link"), ecs::kNullEntity);
  EXPECT_NE(reg.find_scoped("w::v2::l"), ecs::kNullEntity);
}

TEST_F(IncludeTest, RepeatedIncludesAreBuiltFromOneParse) {
  fs::create_directories(dir_ / "local");
  write(dir_ / "local" / "rock.obj", "v 0 0 0\n");
  // Line numbers matter: the world's first line is "<sdf ...><world name='w'>" (see world()).
  write(dir_ / "w.sdf", world(R"(
    <model name='ground'><static>true</static><link name='l'><collision name='c'><geometry><mesh><uri>local/rock.obj</uri></mesh></geometry></collision></link></model>
    <include><uri>model://box</uri><name>b0</name><pose>1 0 0 0 0 0</pose><static>true</static>
      <plugin filename='q' name='m'><v>7</v></plugin>
    </include>
    <include><uri>model://box</uri><name>b1</name><pose>2 0 0 0 0 1.5707963267948966</pose></include>
    <include><uri>model://box</uri></include>
    <include><uri>model://box</uri><name>near</name><pose relative_to='ground'>0 3 0 0 0 0</pose></include>
    <include><uri>model://box</uri><name>held</name></include>
    <frame name='f' attached_to='held'/>)"));
  ecs::Registry reg;
  const auto d = load(reg);
  EXPECT_EQ(messages(d), "");
  // The world itself went to libsdformat as text: its relative mesh URI still resolves from it.
  EXPECT_EQ(
      std::get<c::MeshShape>(reg.get<c::Geometry>(reg.find_scoped("w::ground::l::c")).shape).path,
      fs::canonical(dir_ / "local/rock.obj").string());
  // b0, b1 and box from one parse; 'near' (pose relative to a model) and 'held' (a frame is
  // attached to it) need libsdformat's frame graph and stay with it.
  EXPECT_EQ(d.instanced, 3u);
  expect_pose_near(reg.get<c::WorldPose>(reg.find_scoped("w::b0::l")).value,
                   Pose3d(1, 0, 1, 0, 0, 0));
  expect_pose_near(reg.get<c::WorldPose>(reg.find_scoped("w::b1::l")).value,
                   Pose3d(2, 0, 1, 0, 0, 1.5707963267948966));
  expect_pose_near(reg.get<c::WorldPose>(reg.find_scoped("w::box::l")).value,
                   Pose3d(0, 0, 1, 0, 0, 0));
  expect_pose_near(reg.get<c::WorldPose>(reg.find_scoped("w::near::l")).value,
                   Pose3d(0, 3, 1, 0, 0, 0));
  ASSERT_NE(reg.find_scoped("w::held::l"), ecs::kNullEntity);
  EXPECT_TRUE(reg.get<c::Static>(reg.find_scoped("w::b0")).value);
  EXPECT_FALSE(reg.get<c::Static>(reg.find_scoped("w::b1")).value);
  EXPECT_EQ(d.counts.models, 6u);
  // Every instance has the model's plugin; b0 also the one its <include> adds, from the world.
  ASSERT_EQ(d.plugins.size(), 6u);
  std::size_t from_model = 0;
  for (const auto& p : d.plugins) {
    if (p.filename == "p") {
      ++from_model;
      EXPECT_THAT(p.config->where(), HasSubstr("box.sdf:2"));
    } else {
      EXPECT_EQ(p.filename, "q");
      EXPECT_EQ(p.entity, reg.find_scoped("w::b0"));
      EXPECT_EQ(p.config->get<int>("v"), 7);
      EXPECT_THAT(p.config->where(), HasSubstr("w.sdf:4"));
    }
  }
  EXPECT_EQ(from_model, 5u);
}

TEST_F(IncludeTest, InstancedIncludeProblemsNameTheWorldLine) {
  write(dir_ / "w.sdf", world(R"(
    <model name='b0'><static>true</static><link name='l'/></model>
    <include><uri>model://box</uri><name>b0</name></include>
    <include><uri>model://box</uri><name>b1</name><plugin name='nofile'/></include>)"));
  ecs::Registry reg;
  const auto d = load(reg);
  const std::string m = messages(d);
  EXPECT_EQ(d.findings.count(Severity::kError), 2u) << m;
  EXPECT_THAT(m, HasSubstr("w.sdf:3: duplicate name 'b0'"));
  EXPECT_THAT(m, HasSubstr("w.sdf:4: [w::b1] <plugin name='nofile'> has no filename attribute"));
}

TEST_F(IncludeTest, UnresolvedIncludeNamesEveryPathSearched) {
  write(dir_ / "w.sdf", world("<include><uri>model://nothere</uri></include>"));
  ecs::Registry reg;
  const auto d = load(reg);
  const std::string m = messages(d);
  EXPECT_THAT(m, HasSubstr("cannot resolve <include> 'model://nothere'"));
  EXPECT_THAT(m, HasSubstr((dir_ / "models" / "nothere").string()));
  EXPECT_EQ(d.findings.count(Severity::kError), 1u) << m;
}

TEST_F(IncludeTest, MeshUrisResolveLikeIncludesAndMissingOnesAreReported) {
  fs::create_directories(dir_ / "models" / "box" / "meshes");
  write(dir_ / "models" / "box" / "meshes" / "hull.stl", "solid x\nendsolid x\n");
  fs::create_directories(dir_ / "local");
  write(dir_ / "local" / "rock.obj", "v 0 0 0\n");
  const std::string geo = [] {
    std::string out;
    const char* uris[] = {"model://box/meshes/hull.stl", "local/rock.obj", "model://box/nope.stl",
                          "https://fuel.gazebosim.org/1.0/x/models/y/1/files/meshes/z.dae"};
    for (int i = 0; i < 4; ++i) {
      out += "<collision name='c" + std::to_string(i) + "'><geometry><mesh><uri>" + uris[i] +
             "</uri></mesh></geometry></collision>";
    }
    return out +
           "<visual name='v'><geometry><mesh><uri>missing.dae</uri></mesh></geometry>"
           "</visual>";
  }();
  write(dir_ / "w.sdf",
        world("<model name='m'><static>true</static><link name='l'>" + geo + "</link></model>"));
  ecs::Registry reg;
  const auto d = load(reg);
  auto mesh = [&](const char* name) {
    return std::get<c::MeshShape>(reg.get<c::Geometry>(reg.find_scoped(name)).shape);
  };
  EXPECT_EQ(mesh("w::m::l::c0").path, fs::canonical(dir_ / "models/box/meshes/hull.stl").string());
  EXPECT_EQ(mesh("w::m::l::c1").path, fs::canonical(dir_ / "local/rock.obj").string());
  EXPECT_EQ(mesh("w::m::l::c2").path, "");
  EXPECT_EQ(mesh("w::m::l::c3").path, "");
  const std::string m = messages(d);
  EXPECT_EQ(d.findings.count(Severity::kError), 2u) << m;
  EXPECT_EQ(d.findings.count(Severity::kWarning), 1u) << m;
  EXPECT_THAT(m, HasSubstr("collision file 'model://box/nope.stl' was not found (searched " +
                           (dir_ / "models" / "box/nope.stl").string()));
  EXPECT_THAT(m, HasSubstr("Kestrel never downloads"));
  EXPECT_THAT(m, HasSubstr("visual file 'missing.dae' was not found"));
  EXPECT_THAT(m, HasSubstr("w.sdf:"));
}

// `kestrel run world.sdf` in the world's own folder: a bare file name has no parent path, and
// paths relative to it (includes, instanced or not, and meshes) still resolve from ".". The
// world's name is one of libsdformat's own specification files, which it would take instead.
TEST_F(IncludeTest, RelativePathsResolveForAWorldGivenByABareFileName) {
  write(dir_ / "part.sdf",
        std::string("<?xml version='1.0'?><sdf version='1.9'><model name='part'><link name='l'>") +
            kInertial +
            "<collision name='c'><geometry><mesh><uri>rock.obj</uri></mesh></geometry>"
            "</collision></link></model></sdf>");
  write(dir_ / "rock.obj", "v 0 0 0\n");
  write(dir_ / "world.sdf", world(R"(
    <model name='ground'><static>true</static><link name='l'/></model>
    <include><uri>part.sdf</uri><name>a</name></include>
    <include><uri>part.sdf</uri><name>b</name></include>
    <include><uri>part.sdf</uri><name>c</name><pose relative_to='ground'>0 1 0 0 0 0</pose></include>)"));
  auto load_here = [&](ecs::Registry& reg) {
    const fs::path cwd = fs::current_path();
    fs::current_path(dir_);
    WorldDescription d;
    EXPECT_NO_THROW(d = load_world_file("world.sdf", reg, reg.create()));
    fs::current_path(cwd);
    EXPECT_EQ(messages(d), "");
    return d;
  };
  auto expect_mesh = [&](const ecs::Registry& reg, const char* name) {
    const auto e = reg.find_scoped(name);
    ASSERT_NE(e, ecs::kNullEntity) << name;
    EXPECT_EQ(std::get<c::MeshShape>(reg.get<c::Geometry>(e).shape).path,
              fs::canonical(dir_ / "rock.obj").string())
        << name;
  };
  {
    ecs::Registry reg;
    EXPECT_EQ(load_here(reg).instanced, 2u);  // a and b; c needs libsdformat's frame graph
    for (const char* m : {"w::a::l::c", "w::b::l::c", "w::c::l::c"}) expect_mesh(reg, m);
  }
  // Without instanced includes libsdformat reads the world file itself.
  write(dir_ / "world.sdf", world(R"(
    <model name='ground'><static>true</static><link name='l'/></model>
    <include><uri>part.sdf</uri><name>c</name><pose relative_to='ground'>0 1 0 0 0 0</pose></include>)"));
  ecs::Registry reg;
  EXPECT_EQ(load_here(reg).instanced, 0u);
  expect_mesh(reg, "w::c::l::c");
}

// A value of the wrong type is reported once, at the world file's line: not as libsdformat's
// "<data-string>" with the whole (instanced) world text, nor with its URDF retry's noise.
TEST_F(IncludeTest, UnparsableValueNamesTheWorldFileAndLineOnly) {
  for (const bool with_include : {false, true}) {
    write(dir_ / "w.sdf", world(std::string("\n    <gravity>0 0 abc</gravity>") +
                                (with_include ? "<include><uri>model://box</uri></include>" : "")));
    ecs::Registry reg;
    testing::internal::CaptureStderr();
    std::string what;
    try {
      load(reg);
    } catch (const UnreadableWorld& e) {
      what = e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_THAT(what, HasSubstr((dir_ / "w.sdf").string() + ":2: cannot parse SDF: "))
        << with_include;
    EXPECT_THAT(what, HasSubstr("[0 0 abc ] for key[gravity]"));
    EXPECT_THAT(what, Not(HasSubstr("<data-string>")));
    EXPECT_THAT(what, Not(HasSubstr("<world name=")));  // the text libsdformat was given
    EXPECT_THAT(what, Not(HasSubstr("URDF")));
    EXPECT_EQ(err, "");  // nothing printed behind Kestrel's back
  }
}

TEST_F(IncludeTest, RecursiveIncludeIsUnreadable) {
  write(dir_ / "a.sdf",
        "<sdf version='1.9'><model name='a'><include><uri>b.sdf</uri></include></model></sdf>");
  write(dir_ / "b.sdf",
        "<sdf version='1.9'><model name='b'><include><uri>a.sdf</uri></include></model></sdf>");
  write(dir_ / "w.sdf", world("<include><uri>a.sdf</uri></include>"));
  ecs::Registry reg;
  const auto w = reg.create();
  try {
    load_world_file(dir_ / "w.sdf", reg, w);
    FAIL() << "expected UnreadableWorld";
  } catch (const UnreadableWorld& e) {
    EXPECT_THAT(e.what(), HasSubstr("recursive <include>"));
  }
}

TEST_F(IncludeTest, ModelCacheParsesOnce) {
  ecs::Registry reg;
  const auto w = reg.create();
  reg.add<c::WorldPose>(w);
  ModelCache cache;
  for (int i = 0; i < 5; ++i) {
    const auto m = cache.spawn(dir_ / "models" / "box", reg, w, "box" + std::to_string(i),
                               Pose3d(i, 0, 0, 0, 0, 0));
    expect_pose_near(reg.get<c::WorldPose>(reg.child_by_name(m, "l")).value,
                     Pose3d(i, 0, 1, 0, 0, 0));
  }
  EXPECT_EQ(cache.parse_count(), 1u);
  EXPECT_THROW(cache.spawn(dir_ / "models" / "box", reg, w, "box0", Pose3d()), Error);
}

// An edited model file is parsed again (never spawned stale), and the cache keeps at most its
// capacity of parsed files, dropping the one used longest ago.
TEST_F(IncludeTest, ModelCacheRereadsEditedFilesAndStaysBounded) {
  ecs::Registry reg;
  const auto w = reg.create();
  reg.add<c::WorldPose>(w);
  auto model = [](double z) {
    return std::string("<?xml version='1.0'?><sdf version='1.9'><model name='m'><link name='l'>") +
           "<pose>0 0 " + std::to_string(z) + " 0 0 0</pose>" + kInertial + "</link></model></sdf>";
  };
  ModelCache cache({}, 2);
  const fs::path a = dir_ / "a.sdf", b = dir_ / "b.sdf", c3 = dir_ / "c.sdf";
  write(a, model(1));
  write(b, model(2));
  write(c3, model(3));
  auto link_z = [&](ecs::Entity m) {
    return reg.get<c::WorldPose>(reg.child_by_name(m, "l")).value.Pos().Z();
  };
  EXPECT_EQ(link_z(cache.spawn(a, reg, w, "a0", Pose3d())), 1);
  write(a, model(10));  // edited: another size
  EXPECT_EQ(link_z(cache.spawn(a, reg, w, "a1", Pose3d())), 10);
  EXPECT_EQ(cache.parse_count(), 2u);
  EXPECT_EQ(cache.size(), 2u);  // both versions of a, the old one now unused
  cache.spawn(b, reg, w, "b0", Pose3d());
  cache.spawn(c3, reg, w, "c0", Pose3d());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.parse_count(), 4u);
  cache.spawn(c3, reg, w, "c1", Pose3d());  // kept: no parse
  EXPECT_EQ(cache.parse_count(), 4u);
  EXPECT_EQ(link_z(cache.spawn(a, reg, w, "a2", Pose3d())), 10);  // dropped before: parsed again
  EXPECT_EQ(cache.parse_count(), 5u);
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace kestrel::sdf
