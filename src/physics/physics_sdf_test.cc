// Physics on worlds loaded from SDF: inline worlds with analytic answers, and the Gazebo corpus
// in ../shared/worlds/gz (each world whose features MuJoCo supports runs 1000 steps).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "kestrel/components/joint_mimic.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/sim/runner.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;

struct Loaded {
  explicit Loaded(std::string_view sdf) {
    sim::Runner::Options o;
    o.real_time_factor = 0;
    runner = std::make_unique<sim::Runner>(o);
    desc = sdf::load_world_string(sdf, runner->registry(), runner->world());
  }
  explicit Loaded(const std::filesystem::path& file) {
    sim::Runner::Options o;
    o.real_time_factor = 0;
    runner = std::make_unique<sim::Runner>(o);
    desc = sdf::load_world_file(file, runner->registry(), runner->world());
  }
  void start() {
    runner->set_step_size(runner->registry().get<c::PhysicsParams>(runner->world()).max_step_size);
    runner->add_system(make_physics_system(), runner->world(), Element::empty("plugin"),
                       "kestrel::systems::Physics", "test");
    runner->configure();
  }
  ecs::Registry& r() { return runner->registry(); }
  std::unique_ptr<sim::Runner> runner;
  sdf::WorldDescription desc;
};

constexpr const char* kPendulum = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.8</gravity>
    <model name="pendulum">
      <pose>1 2 3 0 0 0.7</pose>
      <link name="bob">
        <pose>0 0 -0.5 0 0 0</pose>
        <inertial><mass>1</mass>
          <inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
                   <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>0.05</radius></sphere></geometry></collision>
      </link>
      <joint name="hinge" type="revolute">
        <parent>world</parent><child>bob</child>
        <pose>0 0 0.5 0 0 0</pose>
        <axis><xyz>1 0 0</xyz></axis>
      </joint>
    </model>
  </world>
</sdf>)";

TEST(PhysicsSdf, PendulumFromSdfHasTheCompoundPeriod) {
  Loaded w(std::string_view{kPendulum});
  w.start();
  const auto joint = w.r().find_scoped("w::pendulum::hinge");
  ASSERT_NE(joint, ecs::kNullEntity);
  w.r().add<c::JointPositionReset>(joint, std::vector<double>{0.05});
  std::vector<double> crossings;
  double prev = 0.05;
  for (int k = 1; k <= 5000; ++k) {
    w.runner->step_once();
    const double q = w.r().get<c::JointPosition>(joint).data.at(0);
    if (prev > 0 && q <= 0) crossings.push_back((k - 1 + prev / (prev - q)) * 1e-3);
    prev = q;
  }
  ASSERT_GE(crossings.size(), 2u);
  const double period = (crossings.back() - crossings.front()) / (crossings.size() - 1);
  const double expected = 2 * M_PI * std::sqrt((0.001 + 0.25) / (9.8 * 0.5));
  EXPECT_NEAR(period, expected, 2e-3 * expected);
  // The pivot stays where SDF put it: 0.5 m above the bob's initial position.
  const auto bob = w.r().find_scoped("w::pendulum::bob");
  const auto p = w.r().get<c::WorldPose>(bob).value.Pos();
  EXPECT_NEAR((p - ignition::math::Vector3d(1, 2, 3)).Length(), 0.5, 1e-6);
}

constexpr const char* kBoxOnGround = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <model name="ground"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal>
        <size>10 10</size></plane></geometry></collision></link>
    </model>
    <model name="box">
      <pose>0 0 0.25 0 0 0</pose>
      <link name="link">
        <inertial><mass>3</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>
          <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.5 0.5 0.5</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>)";

// A <limit> without <velocity> has no velocity limit (libsdformat reports infinity): only a
// finite one earns the "MuJoCo has none" warning.
TEST(PhysicsSdf, OnlyAFiniteJointVelocityLimitIsReported) {
  auto warnings = [](const std::string& limit) {
    std::string sdf = kPendulum;
    const std::string axis = "<axis><xyz>1 0 0</xyz>";
    sdf.insert(sdf.find(axis) + axis.size(), limit);
    Loaded w{std::string_view(sdf)};
    std::size_t n = 0;
    for (const auto& i : check_physics(w.r(), w.runner->world())) {
      n += i.message.find("joint velocity limit") != std::string::npos;
    }
    return n;
  };
  EXPECT_EQ(warnings(""), 0u);
  EXPECT_EQ(warnings("<limit><lower>-1e16</lower><upper>1e16</upper></limit>"), 0u);
  EXPECT_EQ(warnings("<limit><lower>-1</lower><upper>1</upper><velocity>5</velocity></limit>"), 1u);
}

// <lower> = <upper> locks a joint there, as in Gazebo (gz-sim's tracked_vehicle_simple.sdf
// and tire_drum.sdf do this): MuJoCo refused the model ("range[0] should be smaller than
// range[1]"). Under a torque of 0.5 N·m the locked hinge stays within 1e-3 rad of its limit,
// where the free one swings 0.13 rad.
TEST(PhysicsSdf, EqualJointLimitsLockTheJoint) {
  auto angle = [](const std::string& limit) {
    std::string sdf = kPendulum;
    const std::string axis = "<axis><xyz>1 0 0</xyz>";
    sdf.insert(sdf.find(axis) + axis.size(), limit);
    Loaded w{std::string_view(sdf)};
    w.start();
    const ecs::Entity hinge = w.r().find_scoped("w::pendulum::hinge");
    for (int i = 0; i < 1000; ++i) {
      w.r().set(hinge, c::JointForceCmd{{0.5}});
      w.runner->step_once();
    }
    return w.r().get<c::JointPosition>(hinge).data[0];
  };
  EXPECT_NEAR(angle("<limit><lower>0</lower><upper>0</upper></limit>"), 0.0, 1e-3);
  EXPECT_NEAR(angle("<limit><lower>-0</lower><upper>0</upper></limit>"), 0.0, 1e-3);
  EXPECT_NEAR(angle("<limit><lower>0.2</lower><upper>0.2</upper></limit>"), 0.2, 1e-3);
  EXPECT_GT(std::abs(angle("")), 0.1);  // free: 0.13 rad after 1 s
}

TEST(PhysicsSdf, BoxFromSdfRestsWithContactForceMg) {
  Loaded w(std::string_view{kBoxOnGround});
  w.start();
  w.runner->run(2000);
  const auto link = w.r().find_scoped("w::box::link");
  EXPECT_NEAR(w.r().get<c::WorldPose>(link).value.Pos().Z(), 0.25, 1e-3);
  double fz = 0;
  for (const auto& p : w.r().get<c::Contacts>(w.r().find_scoped("w::box::link::c")).points) {
    fz += p.force.Z();
  }
  EXPECT_NEAR(fz, 3 * 9.8, 0.01 * 3 * 9.8);
}

// A binary STL of the axis-aligned box [lo, hi] (12 triangles, outward normals).
void write_box_stl(const std::filesystem::path& file, const std::array<float, 3>& lo,
                   const std::array<float, 3>& hi) {
  std::ofstream out(file, std::ios::binary);
  const char header[80] = "kestrel test box";
  out.write(header, 80);
  const std::uint32_t n = 12;
  out.write(reinterpret_cast<const char*>(&n), 4);
  auto corner = [&](int i) {
    return std::array<float, 3>{i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1],
                                i & 4 ? hi[2] : lo[2]};
  };
  // Faces as corner indices (counter-clockwise seen from outside) and their normals.
  const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  const float normals[6][3] = {{0, 0, -1}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0, 0}};
  for (int f = 0; f < 6; ++f) {
    for (const auto& tri : {std::array<int, 3>{faces[f][0], faces[f][1], faces[f][2]},
                            std::array<int, 3>{faces[f][0], faces[f][2], faces[f][3]}}) {
      out.write(reinterpret_cast<const char*>(normals[f]), 12);
      for (int v : tri) out.write(reinterpret_cast<const char*>(corner(v).data()), 12);
      const std::uint16_t attr = 0;
      out.write(reinterpret_cast<const char*>(&attr), 2);
    }
  }
}

// A mesh collision given by a relative URI, scaled, and offset from the link origin: the link
// origin is the mesh's bottom face, so the block rests with its origin on the ground.
TEST(PhysicsSdf, MeshCollisionFromRelativeUriRestsOnItsScaledHull) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kestrel_mesh_" + std::to_string(::getpid()));
  fs::create_directories(dir / "meshes");
  write_box_stl(dir / "meshes" / "block.stl", {-0.1f, -0.1f, 0.0f}, {0.1f, 0.1f, 0.1f});
  std::string world(kBoxOnGround);
  const std::string box = "<box><size>0.5 0.5 0.5</size></box>";
  world.replace(world.find(box), box.size(),
                "<mesh><uri>meshes/block.stl</uri><scale>2 2 2</scale></mesh>");
  world.replace(world.find("<pose>0 0 0.25 0 0 0</pose>"), 27, "<pose>0 0 0.5 0 0 0</pose>");
  std::ofstream(dir / "w.sdf") << world;
  Loaded w(dir / "w.sdf");
  EXPECT_FALSE(w.desc.findings.has_errors());
  w.start();
  w.runner->run(2000);
  const auto link = w.r().find_scoped("w::box::link");
  EXPECT_NEAR(w.r().get<c::WorldPose>(link).value.Pos().Z(), 0.0, 2e-3);
  double fz = 0;
  for (const auto& p : w.r().get<c::Contacts>(w.r().find_scoped("w::box::link::c")).points) {
    fz += p.force.Z();
  }
  EXPECT_NEAR(fz, 3 * 9.8, 0.01 * 3 * 9.8);
  fs::remove_all(dir);
}

// <fdir1 gz:expressed_in='base'>: the first friction direction in another link's frame. A cube
// whose collision has μ 1 along fdir1 and none across (<mu2>0), on a link welded to a base turned
// 90°: fdir1 = x of the base is the world's y, so pushed along the world's x the cube slides
// freely; the same fdir1 in the collision's own frame holds it.
TEST(PhysicsSdf, FrictionDirectionExpressedInAnotherLink) {
  auto velocity_x = [](const std::string& attribute) {
    const std::string sdf = R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
  <model name="ground"><static>true</static><link name="l"><collision name="c">
    <geometry><plane><normal>0 0 1</normal></plane></geometry></collision></link></model>
  <model name="cart"><pose>0 0 0.1 0 0 0</pose>
    <link name="base"><pose>0 0 0 0 0 1.5707963267948966</pose>
      <inertial><mass>0.1</mass><inertia><ixx>1e-3</ixx><iyy>1e-3</iyy><izz>1e-3</izz></inertia></inertial>
    </link>
    <link name="body">
      <inertial><mass>2</mass><inertia><ixx>0.013</ixx><iyy>0.013</iyy><izz>0.013</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry>
        <surface><friction><ode><mu>1</mu><mu2>0</mu2>
          <fdir1 )" + attribute + R"(>1 0 0</fdir1></ode></friction></surface></collision>
    </link>
    <joint name="weld" type="fixed"><parent>base</parent><child>body</child></joint>
  </model>
</world></sdf>)";
    Loaded w{std::string_view(sdf)};
    EXPECT_FALSE(w.desc.findings.has_errors());
    w.start();
    const auto body = w.r().find_scoped("w::cart::body");
    for (int k = 0; k < 300; ++k) w.runner->step_once();
    w.r().add<c::ExternalWorldWrenchCmd>(body);
    for (int k = 0; k < 1000; ++k) {
      w.r().get<c::ExternalWorldWrenchCmd>(body).force = {3, 0, 0};
      w.runner->step_once();
    }
    return w.r().get<c::WorldLinearVelocity>(body).value.X();
  };
  EXPECT_NEAR(velocity_x("gz:expressed_in=\"base\""), 3 / 2.1, 2e-3);  // F / m for 1 s
  EXPECT_LT(std::abs(velocity_x("")), 1e-3);
}

TEST(PhysicsSdf, GazeboCorpusRunsWhereSupported) {
  const std::filesystem::path dir = std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() == ".sdf") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  int ran = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    std::unique_ptr<Loaded> w;
    try {
      w = std::make_unique<Loaded>(f);
    } catch (const Error& e) {
      std::cout << f.filename().string() << ": not loadable: " << e.what() << "\n";
      continue;
    }
    const auto issues = check_physics(w->r(), w->runner->world());
    std::string errors;
    for (const auto& i : issues) {
      if (i.severity == PhysicsIssue::Severity::kError) errors += "\n  " + format_issue(i);
    }
    if (!errors.empty()) {
      std::cout << f.filename().string() << ": not simulated:" << errors << "\n";
      continue;
    }
    EXPECT_NO_THROW({
      w->start();
      w->runner->run(1000);
    });
    ++ran;
  }
  std::cout << ran << " of " << files.size() << " corpus worlds ran 1000 steps\n";
  EXPECT_GE(ran, 32);  // all of the corpus today; a regression shows here
}

// A joint that declares a force_torque sensor gets JointTransmittedWrench from Physics (its
// reader needs it); a joint without one does not (the wrench costs an extra pass per step).
TEST(PhysicsSdf, ForceTorqueSensorJointGetsTheTransmittedWrench) {
  constexpr const char* kTwoPendulums = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.8</gravity>
    <model name="sensed">
      <link name="bob">
        <pose>0 0 -0.5 0 0 0</pose>
        <inertial><mass>2</mass>
          <inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
                   <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      </link>
      <joint name="hinge" type="revolute">
        <parent>world</parent><child>bob</child>
        <pose>0 0 0.5 0 0 0</pose>
        <axis><xyz>1 0 0</xyz></axis>
        <sensor name="ft" type="force_torque"><update_rate>100</update_rate></sensor>
      </joint>
    </model>
    <model name="plain">
      <pose>2 0 0 0 0 0</pose>
      <link name="bob">
        <pose>0 0 -0.5 0 0 0</pose>
        <inertial><mass>2</mass>
          <inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
                   <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      </link>
      <joint name="hinge" type="revolute">
        <parent>world</parent><child>bob</child>
        <pose>0 0 0.5 0 0 0</pose>
        <axis><xyz>1 0 0</xyz></axis>
      </joint>
    </model>
  </world>
</sdf>)";
  Loaded w(std::string_view{kTwoPendulums});
  w.start();
  w.runner->run(10);
  const auto sensed = w.r().find_scoped("w::sensed::hinge");
  const auto plain = w.r().find_scoped("w::plain::hinge");
  ASSERT_NE(sensed, ecs::kNullEntity);
  ASSERT_NE(plain, ecs::kNullEntity);
  ASSERT_TRUE(w.r().has<c::JointTransmittedWrench>(sensed));
  EXPECT_FALSE(w.r().has<c::JointTransmittedWrench>(plain));
  EXPECT_NEAR(w.r().get<c::JointTransmittedWrench>(sensed).force.Z(), 2 * 9.8, 1e-6);
  // After a reset the rule still holds (the component comes back with the snapshot).
  w.runner->reset_now();
  w.runner->run(10);
  ASSERT_TRUE(w.r().has<c::JointTransmittedWrench>(sensed));
  EXPECT_NEAR(w.r().get<c::JointTransmittedWrench>(sensed).force.Z(), 2 * 9.8, 1e-6);
}

}  // namespace
}  // namespace kestrel::physics

namespace kestrel::physics {
namespace {

// A gripper: a palm fixed to the world, one driven finger on revolute `drive`, and six
// followers coupled to it by SDF 1.11 <mimic> (libsdformat 12 does not know the element; the
// loader reads it from the file): revolute fingers with multipliers ±1, 0.5 and −2, one with
// a reference and an offset, and a prismatic jaw at 0.02 m/rad. No gravity, so the only load
// on the followers is their own inertia; the leader is free, not servoed.
struct Follower {
  const char* name;
  const char* type;
  double multiplier, offset, reference;
};
constexpr Follower kFollowers[] = {
    {"f1", "revolute", 1, 0, 0},     {"f2", "revolute", -1, 0, 0},
    {"f3", "revolute", 0.5, 0.1, 0}, {"f4", "revolute", -2, -0.05, 0},
    {"f5", "revolute", 1, 0.3, 0.2}, {"f6", "prismatic", 0.02, 0.01, 0}};

std::string gripper_world(const std::string& mimic_of_f1 = "") {
  std::string s = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="gripper">
      <link name="palm"><inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
      <joint name="mount" type="fixed"><parent>world</parent><child>palm</child></joint>
)";
  const auto finger = [&](const std::string& name, double x) {
    s +=
        "      <link name=\"" + name + "_link\"><pose>" + std::to_string(x) +
        R"( 0 0.05 0 0 0</pose><inertial><mass>0.05</mass><inertia><ixx>1e-5</ixx><iyy>1e-5</iyy><izz>1e-5</izz></inertia></inertial></link>
)";
  };
  finger("drive", 0);
  s += R"(      <joint name="drive" type="revolute"><parent>palm</parent><child>drive_link</child>
        <axis><xyz>0 1 0</xyz></axis></joint>
)";
  for (std::size_t i = 0; i < std::size(kFollowers); ++i) {
    const auto& f = kFollowers[i];
    finger(f.name, 0.02 * (i + 1));
    s += std::string("      <joint name=\"") + f.name + "\" type=\"" + f.type +
         "\"><parent>palm</parent><child>" + f.name + "_link</child>\n        <axis><xyz>" +
         (f.type == std::string("prismatic") ? "1 0 0" : "0 1 0") + "</xyz>\n" +
         (i == 0 && !mimic_of_f1.empty()
              ? mimic_of_f1
              : "          <mimic joint=\"drive\"><multiplier>" + std::to_string(f.multiplier) +
                    "</multiplier><offset>" + std::to_string(f.offset) + "</offset><reference>" +
                    std::to_string(f.reference) + "</reference></mimic>\n") +
         "        </axis></joint>\n";
  }
  return s + "    </model>\n  </world>\n</sdf>\n";
}

// The gripper of gripper_world() (SDF) or test/worlds/urdf_gripper.urdf, its model's scoped
// name `m`: the followers keep the coupling at rest and while the leader closes.
void expect_gripper_follows_its_coupling(Loaded& w, const std::string& m) {
  const ecs::Entity drive = w.r().find_scoped(m + "::drive");
  ASSERT_NE(drive, ecs::kNullEntity);
  const auto* m3 = w.r().try_get<c::JointMimics>(w.r().find_scoped(m + "::f3"));
  ASSERT_TRUE(m3 && m3->data.size() == 1u);
  EXPECT_EQ(m3->data[0].axis, 0u);
  EXPECT_EQ(m3->data[0].leader, drive);
  EXPECT_EQ(m3->data[0].multiplier, 0.5);
  EXPECT_EQ(m3->data[0].offset, 0.1);
  const auto q = [&](const std::string& j) {
    return w.r().get<c::JointPosition>(w.r().find_scoped(m + "::" + j)).data.at(0);
  };
  const auto worst = [&] {
    double e = 0;
    for (const auto& f : kFollowers) {
      e = std::max(e, std::abs(q(f.name) - (f.multiplier * (q("drive") - f.reference) + f.offset)));
    }
    return e;
  };
  // At rest: the followers settle onto the coupling (their offsets pull the free leader too;
  // the constraint's time constant is 2 ms) and stay there.
  w.runner->run(200);
  EXPECT_LT(worst(), 1e-6);
  const double rest = q("drive");
  w.runner->run(100);
  EXPECT_NEAR(q("drive"), rest, 1e-6);
  // Closing under a torque of 2e-4 N·m on the leader for 0.5 s: within 1e-5 rad (m) of the
  // coupling throughout.
  double moving = 0;
  for (int k = 0; k < 500; ++k) {
    w.r().set(drive, c::JointForceCmd{{2e-4}});
    w.runner->step_once();
    moving = std::max(moving, worst());
  }
  EXPECT_GT(q("drive") - rest, 0.1);
  EXPECT_LT(moving, 1e-5);
  EXPECT_NEAR(q("f4"), -2 * q("drive") - 0.05, 1e-4);
  EXPECT_NEAR(q("f6"), 0.02 * q("drive") + 0.01, 1e-4);
}

TEST(PhysicsSdf, MimicJointsFollowTheirLeaderAsTheCouplingSays) {
  Loaded w(std::string_view{gripper_world()});
  for (const auto& f : w.desc.findings.items()) {
    EXPECT_EQ(f.message.find("mimic"), std::string::npos) << sdf::format_finding(f);
  }
  ASSERT_FALSE(w.desc.findings.has_errors());
  w.start();
  expect_gripper_follows_its_coupling(w, "w::gripper");
}

// The same gripper written as URDF (test/worlds/urdf_gripper.urdf): libsdformat 12's conversion
// drops its <mimic>s, which Kestrel reads from the URDF and makes the same constraints
// (follower = multiplier · drive + offset: URDF has no reference, so f5's offset there is
// 0.3 − 0.2). Gravity is on (a URDF cannot turn it off); every finger's centre of mass is on its
// axis, so only the torque moves them.
TEST(PhysicsSdf, UrdfMimicJointsFollowTheirLeaderAsTheCouplingSays) {
  Loaded w(std::filesystem::path(KESTREL_SOURCE_DIR) / "test/worlds/urdf_gripper.urdf");
  for (const auto& f : w.desc.findings.items()) ADD_FAILURE() << sdf::format_finding(f);
  w.start();
  expect_gripper_follows_its_coupling(w, "empty::gripper");
}

TEST(PhysicsSdf, MimicProblemsAreErrorsAtTheirLine) {
  const auto findings = [](const std::string& mimic) {
    Loaded w{std::string_view(gripper_world(mimic))};
    std::string out;
    for (const auto& f : w.desc.findings.items()) out += sdf::format_finding(f) + "\n";
    return out;
  };
  // The line of f1's <mimic> in the world text.
  const std::string text = gripper_world();
  const std::string at =
      ":" + std::to_string(1 + std::count(text.begin(), text.begin() + text.find("<mimic"), '\n')) +
      ": [w::gripper::f1] ";
  using ::testing::HasSubstr;
  EXPECT_THAT(findings("<mimic joint=\"nope\"/>\n"),
              HasSubstr(at + "<mimic joint='nope'>: no joint 'nope' in model 'w::gripper' "
                             "(joints: mount, drive, f1"));
  EXPECT_THAT(findings("<mimic/>\n"), HasSubstr(at + "<mimic> needs a joint"));
  EXPECT_THAT(findings("<mimic joint=\"drive\" axis=\"axis2\"/>\n"),
              HasSubstr("joint 'drive' has no axis2"));
  EXPECT_THAT(findings("<mimic joint=\"f1\"/>\n"), HasSubstr("an axis cannot follow itself"));
  EXPECT_THAT(findings("<mimic joint=\"drive\"><multipler>2</multipler></mimic>\n"),
              HasSubstr("<multipler> is not an element of <mimic>"));
  EXPECT_THAT(findings("<mimic joint=\"drive\"><offset>x</offset></mimic>\n"), HasSubstr(at));
  // Understood: not reported as an unknown element.
  EXPECT_THAT(findings("<mimic joint=\"drive\"/>\n"), ::testing::Not(HasSubstr("mimic")));
}

}  // namespace
}  // namespace kestrel::physics
