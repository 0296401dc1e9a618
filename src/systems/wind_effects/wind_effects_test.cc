#include "systems/wind_effects/wind_effects.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
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
  // F = k m (w - v) and nothing else: v(t) = w (1 - exp(-k t)) for a body starting at rest.
  TestWorld w(world(true));
  add_wind(w, "<plugin><force_approximation_scaling_factor>2</force_approximation_scaling_factor>"
              "</plugin>");
  w.start();
  w.step(1000);
  const ignition::math::Vector3d wind(4, -2, 0.5);
  expect_near(w.r().get<c::Wind>(w.runner->world()).linear_velocity, wind, 1e-12);
  const auto v = w.r().get<c::WorldLinearVelocity>(w.find("w::m::l")).value;
  // Explicit integration of v' = k (w - v) with dt: v_n = w (1 - (1 - k dt)^n) (±1e-3 relative).
  expect_near(v, wind * (1 - std::exp(-2.0 * 1.0)), 2e-3);
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
  w.step(2999);  // t = 3 s: the lag k = dt/(dt + tau) has risen to 1 - (1 - k)^3000; sine ~0
  const double mean = std::hypot(4, -2), k = 0.001 / 1.001;
  EXPECT_NEAR(std::hypot(wind.X(), wind.Y()), mean * (1 - std::pow(1 - k, 3000)), mean * 0.005);
  w.step(500);  // mid-gust: + 6 m/s up
  EXPECT_NEAR(wind.Z(), 0.5 + 6, 0.25);
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
  add_wind(w, "<plugin><force_aproximation_scaling_factor>1</force_aproximation_scaling_factor>"
              "</plugin>");
  EXPECT_THROW(w.start(), Error);
}

}  // namespace
}  // namespace kestrel::systems
