#include "kestrel/world/setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::world {
namespace {

using namespace ::kestrel::sdf;  // the loader under test with its findings

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class Fake : public System {};
std::unique_ptr<System> make_fake() { return std::make_unique<Fake>(); }

const world::BuiltinSystem kTestBuiltins[] = {
    {"Physics", &make_fake, true, ""},
    {"UserCommands", &make_fake, true, ""},
    {"Imu", &make_fake, false, "imu"},
    {"MulticopterMotorModel", &make_fake, false, ""},
};

struct Planned {
  ecs::Registry reg;
  ecs::Entity world;
  WorldDescription d;
  Findings findings;
  std::vector<PlannedSystem> systems;
  std::vector<MissingSystem> missing;
};

std::unique_ptr<Planned> plan(const std::string& body, ResolveOptions ro = {}) {
  auto p = std::make_unique<Planned>();
  p->world = p->reg.create();
  p->d = load_world_string("<sdf version='1.9'><world name='w'>" + body + "</world></sdf>", p->reg,
                           p->world, {}, "w.sdf");
  if (ro.builtins.data() == world::builtin_systems().data()) ro.builtins = kTestBuiltins;
  p->systems = plan_systems(p->d, p->world, p->reg, ro, p->findings, &p->missing);
  return p;
}

std::string messages(const Findings& f) {
  std::string s;
  for (const auto& x : f.items()) s += format_finding(x) + "\n";
  return s;
}

std::vector<std::string> names(const std::vector<PlannedSystem>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.name + "@" + s.origin);
  return out;
}

const char* kBox = R"(<model name='m'><link name='l'><inertial><mass>1</mass><inertia>
  <ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>%s</model>)";

std::string model(const std::string& inner) {
  std::string s = kBox;
  return s.replace(s.find("%s"), 2, inner);
}

TEST(PluginResolution, GazeboAndKestrelSpellingsMapToBuiltins) {
  auto p = plan(R"(
    <plugin filename='gz-sim-physics-system' name='gz::sim::systems::Physics'/>
    <plugin filename='libignition-gazebo6-imu-system.so' name='ignition::gazebo::systems::Imu'/>
    <plugin filename='ignored' name='kestrel::systems::UserCommands'/>)" +
                model("<plugin filename='gz-sim-multicopter-motor-model-system' "
                      "name='gz::sim::systems::MulticopterMotorModel'><a>1</a></plugin>"));
  EXPECT_EQ(messages(p->findings), "");
  EXPECT_THAT(
      names(p->systems),
      ::testing::ElementsAre("kestrel::systems::Physics@w.sdf:2", "kestrel::systems::Imu@w.sdf:3",
                             "kestrel::systems::UserCommands@w.sdf:4",
                             "kestrel::systems::MulticopterMotorModel@w.sdf:5"));
  // Model-level plugins attach to their model and keep their element.
  EXPECT_EQ(p->systems[3].entity, p->reg.find_scoped("w::m"));
  EXPECT_EQ(p->systems[3].config->get<int>("a"), 1);
  EXPECT_EQ(p->systems[0].entity, p->world);
}

TEST(PluginResolution, DefaultsAreMergedEvenWhenOtherPluginsAreDeclared) {
  auto p = plan("<plugin filename='gz-sim-imu-system' name='gz::sim::systems::Imu'/>" + model(""));
  EXPECT_THAT(names(p->systems), ::testing::ElementsAre("kestrel::systems::Imu@w.sdf:1",
                                                        "kestrel::systems::Physics@default",
                                                        "kestrel::systems::UserCommands@default"));
  EXPECT_EQ(p->systems[1].source, SystemSource::kDefault);
}

TEST(PluginResolution, OptOutOfDefaultsLeavesNoPhysicsError) {
  auto p = plan("<kestrel:no_default_systems/>" + model(""));
  EXPECT_TRUE(p->systems.empty());
  EXPECT_FALSE(p->d.default_systems);
  EXPECT_THAT(messages(p->findings), HasSubstr("error: w.sdf: the world has no physics"));
}

// A world runs with every system it declares or not at all (Gazebo's buoyancy world without
// its Buoyancy system: the submarines sink): an unresolved plugin is an error naming every path
// searched, unless missing systems are allowed; then it is a warning and listed as missing.
TEST(PluginResolution, UnresolvedPluginIsAnErrorUnlessMissingSystemsAreAllowed) {
  ResolveOptions ro;
  ro.plugin_paths = {"/nonexistent/dir"};
  const std::string body =
      model("<plugin filename='gz-sim-buoyancy-system' name='gz::sim::systems::Buoyancy'/>");
  auto p = plan(body, ro);
  const std::string m = messages(p->findings);
  EXPECT_THAT(m, HasSubstr("error: w.sdf:2: [w::m] plugin 'gz::sim::systems::Buoyancy' (filename "
                           "'gz-sim-buoyancy-system') cannot be resolved"));
  EXPECT_THAT(m, HasSubstr("/nonexistent/dir/libgz-sim-buoyancy-system.so"));
  EXPECT_THAT(m, HasSubstr("--allow-missing-systems"));
  EXPECT_TRUE(p->missing.empty());
  ro.allow_missing = true;
  auto a = plan(body, ro);
  EXPECT_THAT(messages(a->findings), HasSubstr("warning: w.sdf:2: [w::m] plugin "
                                               "'gz::sim::systems::Buoyancy'"));
  EXPECT_EQ(a->findings.count(Severity::kError), 0u);
  ASSERT_EQ(a->missing.size(), 1u);
  EXPECT_EQ(a->missing[0].name, "gz::sim::systems::Buoyancy");
  EXPECT_EQ(a->missing[0].entity, "w::m");
  EXPECT_EQ(a->missing[0].origin, "w.sdf:2");
  ro.strict = true;
  auto s = plan(body, ro);
  EXPECT_EQ(s->findings.count(Severity::kError), 1u) << "--strict wins";
}

// Gazebo's log player reads a format Kestrel does not: the error says what to use instead. The
// wheel-slip systems, refused by an earlier Kestrel for
// want of slip compliance, resolve by either name.
TEST(PluginResolution, SystemsKestrelCannotProvideSayWhatToDoInstead) {
  ResolveOptions ro;
  ro.plugin_paths = {"/nonexistent/dir"};
  const struct {
    const char *file, *name, *missing;
  } kCases[] = {
      {"ignition-gazebo-log-system", "ignition::gazebo::systems::LogPlayback",
       "which Kestrel does not read: replay a Kestrel recording with `kestrel replay FILE.mcap`"},
  };
  for (const auto& c : kCases) {
    auto p = plan(model(std::string("<plugin filename='") + c.file + "' name='" + c.name + "'/>"),
                  ro);
    const std::string m = messages(p->findings);
    EXPECT_THAT(m, HasSubstr(std::string("plugin '") + c.name + "' (filename '" + c.file +
                             "') cannot be resolved"));
    EXPECT_THAT(m, HasSubstr(c.missing)) << c.name;
    EXPECT_EQ(p->findings.count(Severity::kError), 1u) << c.name;
  }
  // The real list (a copy: plan() swaps the list itself for the test's).
  const std::vector<world::BuiltinSystem> all(world::builtin_systems().begin(),
                                              world::builtin_systems().end());
  ro.builtins = all;
  for (const auto& [file, name] :
       {std::pair{"gz-sim-wheel-slip-system", "gz::sim::systems::WheelSlip"},
        {"libignition-gazebo6-wheel-slip-system.so", "ignition::gazebo::systems::WheelSlip"},
        {"gz-sim-lookup-wheel-slip-system", "gz::sim::systems::LookupWheelSlip"}}) {
    auto p = plan(model(std::string("<plugin filename='") + file + "' name='" + name + "'/>"), ro);
    EXPECT_EQ(p->findings.count(Severity::kError), 0u) << messages(p->findings);
    EXPECT_TRUE(p->missing.empty()) << name;
  }
}

// A system that only serves Gazebo's GUI or OGRE rendering (CameraVideoRecorder) is reported
// once and does not block, however often it is declared.
TEST(PluginResolution, RenderOnlySystemsAreReportedOnceAndDoNotBlock) {
  auto p = plan(
      "<plugin filename='gz-sim-camera-video-recorder-system' "
      "name='gz::sim::systems::CameraVideoRecorder'/>\n"
      "<plugin filename='libignition-gazebo6-camera-video-recorder-system.so' "
      "name='ignition::gazebo::systems::CameraVideoRecorder'/>" +
      model(""));
  const std::string m = messages(p->findings);
  EXPECT_EQ(p->findings.count(Severity::kError), 0u) << m;
  EXPECT_EQ(p->findings.count(Severity::kWarning), 1u) << m;
  EXPECT_THAT(m, HasSubstr("warning: w.sdf:1: [w] plugin 'gz::sim::systems::CameraVideoRecorder' "
                           "(filename 'gz-sim-camera-video-recorder-system') only serves "
                           "Gazebo's GUI or its OGRE rendering"));
  EXPECT_EQ(p->missing.size(), 2u);
}

TEST(PluginResolution, SensorWithoutItsSystemIsReported) {
  auto p =
      plan(model("<link name='s'><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy>"
                 "<izz>1</izz></inertia></inertial><sensor name='mag' type='magnetometer'/>"
                 "<sensor name='imu' type='imu'/></link>"));
  const std::string m = messages(p->findings);
  EXPECT_THAT(m, HasSubstr("sensor 'w::m::s::mag' (magnetometer) will produce no data"));
  EXPECT_THAT(m, HasSubstr("gz-sim-magnetometer-system"));
  EXPECT_THAT(m, HasSubstr("sensor 'w::m::s::imu' (imu) will produce no data"));
  auto q = plan("<plugin filename='gz-sim-imu-system' name='gz::sim::systems::Imu'/>" +
                model("<link name='s'><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy>"
                      "<izz>1</izz></inertia></inertial><sensor name='imu' type='imu'/></link>"));
  EXPECT_EQ(messages(q->findings), "");
}

fs::path plugin_dir() { return fs::path(KESTREL_BINARY_DIR) / "plugins"; }

TEST(ExternalSystems, WindDisturbanceLoadsAndPushesTheLink) {
  ResolveOptions ro;
  ro.plugin_paths = {plugin_dir()};
  auto p = plan(model("<plugin filename='wind_disturbance' "
                      "name='kestrel::examples::WindDisturbance'><link_name>l</link_name>"
                      "<force>1.5 0 -2</force></plugin>"),
                ro);
  ASSERT_EQ(messages(p->findings), "");
  ASSERT_EQ(p->systems.size(), 3u);  // wind + 2 defaults
  auto& wind = p->systems[0];
  EXPECT_EQ(wind.source, SystemSource::kExternal);
  EXPECT_THAT(wind.library, HasSubstr("libwind_disturbance.so"));
  auto* cfg = dynamic_cast<ISystemConfigure*>(wind.system.get());
  auto* pre = dynamic_cast<ISystemPreUpdate*>(wind.system.get());
  ASSERT_NE(cfg, nullptr);
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(wind.system->priority(), priority::kPrePhysics);
  sim::EventBus bus;
  cfg->configure(wind.entity, *wind.config, p->reg, bus);
  UpdateInfo info;
  info.dt = Duration{1'000'000};
  pre->pre_update(info, p->reg);
  pre->pre_update(info, p->reg);  // accumulates until physics consumes it
  const auto link = p->reg.find_scoped("w::m::l");
  EXPECT_EQ(p->reg.get<components::ExternalWorldWrenchCmd>(link).force,
            ignition::math::Vector3d(3, 0, -4));
}

TEST(ExternalSystems, WindDisturbanceRejectsBadParameters) {
  ResolveOptions ro;
  ro.plugin_paths = {plugin_dir()};
  auto p = plan(model("<plugin filename='wind_disturbance' "
                      "name='kestrel::examples::WindDisturbance'><link_name>nope</link_name>"
                      "<force>1 0 0</force></plugin>"),
                ro);
  auto* cfg = dynamic_cast<ISystemConfigure*>(p->systems[0].system.get());
  sim::EventBus bus;
  try {
    cfg->configure(p->systems[0].entity, *p->systems[0].config, p->reg, bus);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("w.sdf:2: WindDisturbance: model w::m has no link 'nope'"));
  }
}

TEST(ExternalSystems, WrongSystemNameInLibraryIsAnErrorListingWhatItHas) {
  ResolveOptions ro;
  ro.plugin_paths = {plugin_dir()};
  auto p = plan("<plugin filename='wind_disturbance' name='Other'/>" + model(""), ro);
  EXPECT_THAT(messages(p->findings), HasSubstr("has no system named 'Other'; it provides: "
                                               "kestrel::examples::WindDisturbance"));
}

TEST(WorldSetup, LoadsIntoRunnerWithSystemsAndPhysics) {
  const fs::path dir = fs::temp_directory_path() / ("kestrel_setup_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "w.sdf")
      << "<sdf version='1.9'><world name='windy'><physics type='ode'><max_step_size>0.002"
         "</max_step_size><real_time_factor>0</real_time_factor></physics>" +
             model(
                 "<plugin filename='wind_disturbance' name='kestrel::examples::WindDisturbance'>"
                 "<link_name>l</link_name><force>1 0 0</force></plugin>") +
             "</world></sdf>";
  sim::Runner::Options ropt;
  sim::Runner runner(ropt);
  WorldSetupOptions o;
  o.resolve.builtins = kTestBuiltins;
  o.resolve.plugin_paths = {plugin_dir()};
  const auto setup = load_world_into_runner(dir / "w.sdf", runner, o);
  EXPECT_EQ(runner.registry().get<components::Name>(runner.world()).value, "windy");
  ASSERT_EQ(setup.systems.size(), 3u);
  EXPECT_EQ(setup.systems[0].name, "kestrel::examples::WindDisturbance");
  EXPECT_EQ(runner.systems().size(), 3u);
  runner.configure();
  runner.step_once();
  const auto link = runner.registry().find_scoped("windy::m::l");
  ASSERT_NE(link, ecs::kNullEntity);
  // The fake physics does not consume the command, so one step leaves exactly one push.
  EXPECT_EQ(runner.registry().get<components::ExternalWorldWrenchCmd>(link).force,
            ignition::math::Vector3d(1, 0, 0));
  EXPECT_EQ(runner.info().dt, Duration{2'000'000});

  // A world with errors does not load.
  std::ofstream(dir / "bad.sdf") << "<sdf version='1.9'><world name='b'><model name='m'><link "
                                    "name='l'><inertial><mass>-1</mass></inertial></link>"
                                    "</model></world></sdf>";
  sim::Runner r2(ropt);
  try {
    load_world_into_runner(dir / "bad.sdf", r2, o);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("link 'l' has mass -1"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kestrel::world
