#include "systems/wind_effects/wind_effects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/core/log.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using sensors::testing::expect_near;
using sensors::testing::TestWorld;

std::string world(bool enable_wind) {
  return std::string(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <wind><linear_velocity>4 -2 0.5</linear_velocity></wind>
    <model name="m"><pose>0 0 10 0 0 0</pose><link name="l"><gravity>false</gravity>)") +
         "<enable_wind>" + (enable_wind ? "true" : "false") + R"(</enable_wind>
      <inertial><mass>3</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
    </link></model></world></sdf>)";
}

void add_wind(TestWorld& w, const std::string& plugin) {
  w.runner->add_system(make_wind_effects_system(), w.runner->world(), Element::parse(plugin),
                       "WindEffects", "test");
}

TEST(WindEffects, DragFollowsTheForceFormula) {
  // F = k m (w - v) and nothing else: v(t) = w (1 - exp(-k t)) for a body starting at rest. The
  // lags' time_for_rise at one step (k = dt/τ = 1): the wind is the mean from the first step.
  TestWorld w(world(true));
  add_wind(w,
           "<plugin><force_approximation_scaling_factor>2</force_approximation_scaling_factor>"
           "<horizontal><magnitude><time_for_rise>0.001</time_for_rise></magnitude>"
           "<direction><time_for_rise>0.001</time_for_rise></direction></horizontal>"
           "<vertical><time_for_rise>0.001</time_for_rise></vertical></plugin>");
  w.start();
  w.step(1000);
  const ignition::math::Vector3d wind(4, -2, 0.5);
  expect_near(w.r().get<c::Wind>(w.runner->world()).linear_velocity, wind, 1e-12);
  const auto v = w.r().get<c::WorldLinearVelocity>(w.find("w::m::l")).value;
  // Explicit integration of v' = k (w - v) with dt: v_n = w (1 - (1 - k dt)^n) (±1e-3 relative).
  expect_near(v, wind * (1 - std::exp(-2.0 * 1.0)), 2e-3);
}

TEST(WindEffects, AFaultsGustBlowsOnTopOfTheWindItWrites) {
  // components::WindGust (a wind_gust fault) pushes like wind; Wind stays the world's own.
  TestWorld w(world(true));
  add_wind(w,
           "<plugin><force_approximation_scaling_factor>2</force_approximation_scaling_factor>"
           "<horizontal><magnitude><time_for_rise>0.001</time_for_rise></magnitude>"
           "<direction><time_for_rise>0.001</time_for_rise></direction></horizontal>"
           "<vertical><time_for_rise>0.001</time_for_rise></vertical></plugin>");
  w.start();
  const ignition::math::Vector3d wind(4, -2, 0.5), gust(-6, 0, 1);
  w.r().set(w.runner->world(), c::WindGust{gust});
  w.step(1000);
  expect_near(w.r().get<c::Wind>(w.runner->world()).linear_velocity, wind, 1e-12);
  const auto v = w.r().get<c::WorldLinearVelocity>(w.find("w::m::l")).value;
  expect_near(v, (wind + gust) * (1 - std::exp(-2.0 * 1.0)), 2e-3);
}

TEST(WindEffects, LinksWithoutEnableWindAreNotPushed) {
  TestWorld w(world(false));
  add_wind(w, "<plugin/>");
  w.start();
  w.step(100);
  expect_near(w.r().get<c::WorldLinearVelocity>(w.find("w::m::l")).value, {0, 0, 0}, 1e-12);
}

TEST(WindEffects, RiseSineNoiseAndGust) {
  TestWorld w(world(false), 3);
  add_wind(w, R"(<plugin><horizontal><magnitude><time_for_rise>1</time_for_rise>
      <sin><amplitude_percent>0.1</amplitude_percent><period>2</period></sin></magnitude>
      <direction><noise type="gaussian"><stddev>1</stddev></noise></direction></horizontal>
      <vertical><noise type="gaussian"><stddev>0.05</stddev></noise></vertical>
      <gust><start>3</start><duration>1</duration><velocity>0 0 6</velocity></gust></plugin>)");
  w.start();
  const auto& wind = w.r().get<c::Wind>(w.runner->world()).linear_velocity;
  w.step(1);
  EXPECT_LT(std::hypot(wind.X(), wind.Y()), 0.01);  // rises from calm
  w.step(2999);  // t = 3 s: Gazebo's lag (k = dt/τ) has risen to 1 - (1 - k)^3000; sine ~0
  const double mean = std::hypot(4, -2), k = 0.001 / 1.0;
  EXPECT_NEAR(std::hypot(wind.X(), wind.Y()), mean * (1 - std::pow(1 - k, 3000)), mean * 0.005);
  w.step(500);  // mid-gust: + 6 m/s up; the vertical mean also rises with Gazebo's default τ 1 s
  EXPECT_NEAR(wind.Z(), 0.5 * (1 - std::pow(1 - k, 3500)) + 6, 0.25);
  w.step(600);  // after the gust
  EXPECT_NEAR(wind.Z(), 0.5, 0.25);
  // Reset reproduces a fresh run.
  std::vector<double> a, b;
  w.runner->reset_now();
  for (int i = 0; i < 50; ++i) {
    w.step();
    a.push_back(wind.X());
    a.push_back(wind.Z());
  }
  TestWorld fresh(world(false), 3);
  add_wind(fresh, R"(<plugin><horizontal><magnitude><time_for_rise>1</time_for_rise>
      <sin><amplitude_percent>0.1</amplitude_percent><period>2</period></sin></magnitude>
      <direction><noise type="gaussian"><stddev>1</stddev></noise></direction></horizontal>
      <vertical><noise type="gaussian"><stddev>0.05</stddev></noise></vertical>
      <gust><start>3</start><duration>1</duration><velocity>0 0 6</velocity></gust></plugin>)");
  fresh.start();
  const auto& wind2 = fresh.r().get<c::Wind>(fresh.runner->world()).linear_velocity;
  for (int i = 0; i < 50; ++i) {
    fresh.step();
    b.push_back(wind2.X());
    b.push_back(wind2.Z());
  }
  EXPECT_EQ(a, b);
}

TEST(WindEffects, RunTimeSeedRestartsTheNoise) {
  // Noise only (no lag, no sine): after the seed change the wind depends only on the new seed.
  const char* plugin = R"(<plugin><horizontal><direction><noise type="gaussian"><stddev>1</stddev>
      </noise></direction></horizontal><vertical><noise type="gaussian"><stddev>0.05</stddev>
      </noise></vertical></plugin>)";
  auto run = [&](std::uint64_t start_seed, std::optional<std::uint64_t> new_seed) {
    TestWorld w(world(false), start_seed);
    add_wind(w, plugin);
    w.start();
    w.step(100);
    if (new_seed) w.runner->set_seed(*new_seed);
    w.step();  // the seed changes at the end of this step
    const auto& wind = w.r().get<c::Wind>(w.runner->world()).linear_velocity;
    std::vector<double> out;
    for (int i = 0; i < 50; ++i) {
      w.step();
      out.push_back(wind.Y());
      out.push_back(wind.Z());
    }
    return out;
  };
  const auto a = run(3, 7);
  EXPECT_EQ(a, run(5, 7)) << "same new seed at the same sim time: the same wind afterwards";
  EXPECT_NE(a, run(3, std::nullopt)) << "the new seed changed the streams";
  EXPECT_NE(a, run(3, 8));
}

TEST(WindEffects, UnknownParameterIsAnError) {
  TestWorld w(world(true));
  add_wind(w,
           "<plugin><force_aproximation_scaling_factor>1</force_aproximation_scaling_factor>"
           "</plugin>");
  EXPECT_THROW(w.start(), Error);
}

// The 1-based line of the first occurrence of `what` in `text`.
int line_of(std::string_view text, std::string_view what) {
  const auto at = text.find(what);
  EXPECT_NE(at, std::string_view::npos) << what;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

// A static post, a roof welded to the world with a plate welded under it, a bob hanging from the
// plate on a ball joint, and a free body, all with <enable_wind>.
constexpr std::string_view kImmobile = R"(<?xml version="1.0"?><sdf version="1.9">
<world name="w">
  <physics type="ode"><max_step_size>0.001</max_step_size></physics>
  <wind><linear_velocity>0 5 0</linear_velocity></wind>
  <model name="post"><static>true</static><enable_wind>true</enable_wind>
    <link name="link"><collision name="c"><geometry><box><size>0.1 0.1 1</size></box></geometry>
    </collision></link>
  </model>
  <model name="rig"><enable_wind>true</enable_wind><pose>2 0 0 0 0 0</pose>
    <link name="roof"><pose>0 0 2 0 0 0</pose>
      <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    </link>
    <joint name="weld" type="fixed"><parent>world</parent><child>roof</child></joint>
    <link name="plate"><pose>0 0 1.9 0 0 0</pose>
      <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    </link>
    <joint name="plate_weld" type="fixed"><parent>roof</parent><child>plate</child></joint>
    <link name="bob"><pose>0 0 1 0 0 0</pose>
      <inertial><mass>0.5</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
      </inertia></inertial>
    </link>
    <joint name="swing" type="ball"><pose>0 0 0.9 0 0 0</pose><!-- the pivot, at the plate -->
      <parent>plate</parent><child>bob</child></joint>
  </model>
  <model name="free"><pose>-2 0 5 0 0 0</pose><link name="l"><gravity>false</gravity>
    <enable_wind>true</enable_wind>
    <inertial><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
  </link></model>
</world></sdf>)";

TEST(WindEffects, LinksThatCannotMoveAreNamedOnceAndNotPushed) {
  sensors::testing::LogCapture log;
  TestWorld w(kImmobile);
  // No lag (time_for_rise of one step), so the free body follows the formula from the start.
  add_wind(w,
           "<plugin><horizontal><magnitude><time_for_rise>0.001</time_for_rise></magnitude>"
           "<direction><time_for_rise>0.001</time_for_rise></direction></horizontal></plugin>");
  w.start();
  // Configure names them (so `kestrel check`, which configures, shows them), in entity order.
  auto warned = log.lines();
  ASSERT_EQ(warned.size(), 3u) << ::testing::PrintToString(warned);
  const std::string file = w.r().get<c::SourceLocation>(w.find("w::post::link")).file;
  auto at = [&](std::string_view link) {
    return file + ":" + std::to_string(line_of(kImmobile, link)) + ": ";
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(warned[0], HasSubstr("warning: " + at("<link name=\"link\"") + "[w::post::link]"));
  EXPECT_THAT(warned[0], HasSubstr("it cannot move (model 'w::post' is static)"));
  EXPECT_THAT(warned[1], HasSubstr(at("<link name=\"roof\"") + "[w::rig::roof]"));
  EXPECT_THAT(warned[1], HasSubstr("(fixed joint 'w::rig::weld' welds it to the world)"));
  EXPECT_THAT(warned[2], HasSubstr(at("<link name=\"plate\"") + "[w::rig::plate]"));
  EXPECT_THAT(warned[2], HasSubstr("(fixed joints hold it to 'w::rig::roof', which fixed joint "
                                   "'w::rig::weld' welds to the world)"));
  // Physics accepts every wind wrench (it refuses one on a link that cannot move).
  ASSERT_NO_THROW(w.step(300));
  for (const char* l : {"w::post::link", "w::rig::roof", "w::rig::plate"}) {
    EXPECT_FALSE(w.r().has<c::ExternalWorldWrenchCmd>(w.find(l))) << l;
  }
  // The bob swings downwind; the free body is pushed by F = k m (w - v).
  const auto bob = w.find("w::rig::bob");
  EXPECT_GT(w.r().get<c::WorldPose>(bob).value.Pos().Y(), 0.01);
  EXPECT_NEAR(w.r().get<c::WorldLinearVelocity>(w.find("w::free::l")).value.Y(),
              5 * (1 - std::exp(-0.3)), 5e-3);
  // Said once: neither more steps nor a reset repeat it.
  w.runner->reset_now();
  w.step(10);
  EXPECT_EQ(log.lines().size(), 3u) << ::testing::PrintToString(log.lines());
}

TEST(WindEffects, GazeboWindDemoRunsWithItsWeldedRoof) {
  // Gazebo's wind demo: a roof welded to the world (its model has <enable_wind>) holding a chain
  // of ten spheres on ball joints; wind 10 m/s along +y rising with a 10 s lag.
  const auto file = std::filesystem::path(KESTREL_SHARED_DIR) / "worlds/gz/wind.sdf";
  if (!std::filesystem::exists(file)) {
    GTEST_SKIP() << "the Gazebo corpus (" << file.string() << ") is absent";
  }
  sensors::testing::LogCapture log;
  TestWorld w(TestWorld::FromFile{}, file, 0);
  const PluginDecl* decl = nullptr;
  for (const auto& p : w.desc.plugins) {
    if (p.name == "gz::sim::systems::WindEffects") decl = &p;
  }
  ASSERT_NE(decl, nullptr) << "wind.sdf declares WindEffects";
  w.runner->add_system(make_wind_effects_system(), w.runner->world(), decl->config, "WindEffects",
                       file.string());
  w.start();
  const auto warned = log.lines();
  ASSERT_EQ(warned.size(), 1u) << ::testing::PrintToString(warned);
  EXPECT_THAT(warned[0], ::testing::HasSubstr("warning: " + file.string() +
                                              ":70: [wind_demo::wind_model::roof]"));
  EXPECT_THAT(warned[0], ::testing::HasSubstr("welds it to the world"));
  const auto roof = w.find("wind_demo::wind_model::roof");
  const auto last = w.find("wind_demo::wind_model::sphere_10");
  const auto roof0 = w.r().get<c::WorldPose>(roof).value;
  ASSERT_NO_THROW(w.step(500));
  EXPECT_EQ(w.r().get<c::WorldPose>(roof).value, roof0) << "the roof is welded";
  const auto& pos = w.r().get<c::WorldPose>(last).value.Pos();
  EXPECT_GT(pos.Y(), 1e-3) << "the chain's end is blown downwind (+y)";
  EXPECT_NEAR(pos.X(), 0, 1e-3) << "and not sideways";
  EXPECT_EQ(log.lines().size(), 1u);
}

}  // namespace
}  // namespace kestrel::systems

// ---- gz-sim's wind_effects integration test WindForce, ported --------------------------------
// Its world, test/worlds/wind_effects.sdf, is not in ../shared: the same WindEffects block, wind
// and box (gravity off) written inline. After 3000 steps (the filters settled) the box's
// acceleration magnitude decreases at every one of the next 3000 steps by more than 1e-6.

namespace kestrel::systems {
namespace {

TEST(GazeboWindEffectsTest, WindForce) {
  TestWorld w(R"(<?xml version="1.0"?><sdf version="1.6"><world name="wind_demo">
    <gravity>0 0 0</gravity>
    <physics name="fast" type="ignored"><real_time_factor>0</real_time_factor></physics>
    <wind><linear_velocity>10 0 10</linear_velocity></wind>
    <model name="wind_test1"><enable_wind>true</enable_wind>
      <link name="box_test1"><pose>0 0 1 0 0 0</pose>
        <inertial><mass>1</mass><inertia><ixx>0.667</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.667</iyy>
          <iyz>0</iyz><izz>0.667</izz></inertia></inertial>
        <collision name="collision"><geometry><box><size>2.0 2.0 2.0</size></box></geometry>
          <surface><friction><ode><mu>0.0</mu><mu2>0.0</mu2></ode></friction></surface>
        </collision>
      </link>
    </model>
  </world></sdf>)");
  add_wind(w, R"(<plugin>
      <force_approximation_scaling_factor>1</force_approximation_scaling_factor>
      <horizontal>
        <magnitude><time_for_rise>1</time_for_rise>
          <sin><amplitude_percent>0.05</amplitude_percent><period>60</period></sin></magnitude>
        <direction><time_for_rise>1</time_for_rise>
          <sin><amplitude>5</amplitude><period>20</period></sin></direction>
      </horizontal></plugin>)");
  w.start();
  const auto box = w.find("wind_demo::wind_test1::box_test1");
  w.step(3000);
  double last = w.r().get<c::WorldLinearAcceleration>(box).value.Length();
  int not_decreasing = 0;
  for (int i = 1; i < 3000; ++i) {
    w.step();
    const double a = w.r().get<c::WorldLinearAcceleration>(box).value.Length();
    if (!(last - a > 1e-6)) ++not_decreasing;
    last = a;
  }
  EXPECT_EQ(not_decreasing, 0);
}

}  // namespace
}  // namespace kestrel::systems
