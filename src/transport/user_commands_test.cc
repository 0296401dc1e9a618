// UserCommands with systems: a spawned model brings its plugins (configured at the step
// boundary, removed with the model, dropped by reset), and the step thread never waits on
// ignition-transport's lock (a new command topic is subscribed while an in-process service
// callback holds that lock and waits for the step thread). Runs inside scripts/netns.
#include <sys/stat.h>

#include <cmath>

#include "kestrel/sdf/world_loader.h"
#include "testing/quad_world.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

std::string quad_sdf(const std::string& name) {
  systems::testing::QuadOptions o;
  o.name = name;
  o.z = 3;
  o.x = 5;
  return "<?xml version=\"1.0\"?><sdf version=\"1.9\">" + systems::testing::quad_model(o) +
         "</sdf>";
}

class UserCommandsTest : public TransportTest {
 protected:
  // Systems attached to the model named `name` or below it (0 when it does not exist).
  std::size_t systems_of(const std::string& name) {
    return *detail::on_step_thread<std::size_t>(
        *runner_,
        [name](sim::Runner& r) {
          const auto& reg = r.registry();
          const auto m = reg.child_by_name(r.world(), name);
          std::size_t n = 0;
          for (const auto& s : r.systems()) {
            for (auto e = s.entity; m != ecs::kNullEntity && e != ecs::kNullEntity;
                 e = reg.parent(e)) {
              if (e == m && s.active) {
                ++n;
                break;
              }
            }
          }
          return n;
        },
        std::chrono::seconds(5));
  }

  std::size_t system_count() {
    return *detail::on_step_thread<std::size_t>(
        *runner_, [](sim::Runner& r) { return r.systems().size(); }, std::chrono::seconds(5));
  }

  bool create(const std::string& sdf) {
    msgs::EntityFactory f;
    f.set_sdf(sdf);
    return call_bool("/world/tw/create", f);
  }

  // Publishes `velocity` on `topic` until the model's ActuatorCommands shows it.
  bool command(const std::string& topic, const std::string& model, double velocity) {
    auto pub = node_->Advertise<msgs::Actuators>(topic);
    msgs::Actuators a;
    for (int i = 0; i < 4; ++i) a.add_velocity(velocity);
    for (int i = 0; i < 500; ++i) {
      pub.Publish(a);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const bool seen = *detail::on_step_thread<bool>(
          *runner_,
          [&](sim::Runner& r) {
            const auto m = r.registry().child_by_name(r.world(), model);
            const auto* cmd = r.registry().try_get<c::ActuatorCommands>(m);
            return cmd && cmd->velocity.size() == 4 && cmd->velocity[0] == velocity;
          },
          std::chrono::seconds(5));
      if (seen) return true;
    }
    return false;
  }
};

TEST_F(UserCommandsTest, SpawnedModelBringsItsPluginsAndTakesThemAway) {
  start(false);
  const std::size_t before = system_count();
  ASSERT_TRUE(create(quad_sdf("x3")));
  EXPECT_EQ(systems_of("x3"), 4u) << "one MulticopterMotorModel per rotor";
  // In priority order: the motor models (pre-physics) run before Physics.
  const auto order = *detail::on_step_thread<std::vector<std::string>>(
      *runner_,
      [](sim::Runner& r) {
        std::vector<std::string> v;
        for (const auto& s : r.systems()) v.push_back(s.name);
        return v;
      },
      std::chrono::seconds(5));
  const auto motor =
      std::find(order.begin(), order.end(), "kestrel::systems::MulticopterMotorModel");
  const auto physics = std::find(order.begin(), order.end(), "kestrel::systems::Physics");
  ASSERT_NE(motor, order.end());
  EXPECT_LT(motor - order.begin(), physics - order.begin());

  // The motor models run: commanded speeds become rotor speeds and thrust.
  ASSERT_TRUE(command("/x3/command/motor_speed", "x3", 700));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    const auto m = r.registry().child_by_name(r.world(), "x3");
    const auto* w = r.registry().try_get<c::RotorVelocities>(m);
    return w && w->velocity.size() == 4 && w->velocity[0] > 600;
  }));

  // A clone would carry what the motor models wrote at configure: refused, loudly.
  msgs::EntityFactory clone;
  clone.set_clone_name("x3");
  clone.set_name("x3b");
  EXPECT_FALSE(call_bool("/world/tw/create", clone));
  EXPECT_EQ(model("x3b"), ecs::kNullEntity);

  // Removing the model removes its systems; the world keeps running.
  msgs::Entity rm;
  rm.set_name("x3");
  rm.set_type(msgs::Entity::MODEL);
  ASSERT_TRUE(call_bool("/world/tw/remove/blocking", rm));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    return r.registry().child_by_name(r.world(), "x3") == ecs::kNullEntity;
  }));
  EXPECT_EQ(system_count(), before);
  const auto it = iterations();
  ASSERT_TRUE(wait_for([it](sim::Runner& r) { return r.info().iterations > it + 10; }));

  // Spawned again, then reset: the initial world has neither the model nor its systems.
  ASSERT_TRUE(create(quad_sdf("x3")));
  EXPECT_EQ(systems_of("x3"), 4u);
  ASSERT_TRUE(control("pause: true reset { all: true }"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 0; }));
  EXPECT_EQ(system_count(), before);
  EXPECT_EQ(systems_of("x3"), 0u);
}

TEST_F(UserCommandsTest, SpawnedModelWithABadPluginIsRefusedWhole) {
  start(true);
  std::string unknown = quad_sdf("x3");
  unknown.replace(unknown.find("</model>"), 0,
                  "<plugin filename=\"libno_such_system.so\" name=\"no::Such\"/>");
  EXPECT_FALSE(create(unknown));
  std::string bad = quad_sdf("x3");
  const std::string dir = "<turningDirection>ccw</turningDirection>";
  bad.replace(bad.find(dir), dir.size(), "<turningDirection>sideways</turningDirection>");
  EXPECT_FALSE(create(bad));
  EXPECT_EQ(model("x3"), ecs::kNullEntity);
  EXPECT_EQ(systems_of("x3"), 0u);
  EXPECT_TRUE(create(quad_sdf("x3")));
}

// Nothing a client sends stops or stalls the world: each request below is answered false with
// its reason, the world is unchanged and keeps stepping (before: a symlink loop or a long path
// aborted the process, a FIFO blocked the step thread in open(), a mass of 1e308, a NaN
// orientation, set_pose x 1e300 and gravity -1e308 were answered true and stopped the run at
// the next step).
TEST_F(UserCommandsTest, HostileRequestsAreRefusedAndTheWorldRunsOn) {
  start(false);
  const fs::path loop = dir_ / "loop_a";
  fs::create_symlink(dir_ / "loop_b", loop);
  fs::create_symlink(loop, dir_ / "loop_b");
  const fs::path fifo = dir_ / "fifo.sdf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto by_file = [&](const std::string& f) {
    msgs::EntityFactory q;
    q.set_sdf_filename(f);
    return call_bool("/world/tw/create", q);
  };
  EXPECT_FALSE(by_file(loop.string()));
  EXPECT_FALSE(by_file("/tmp/" + std::string(5000, 'a')));
  EXPECT_FALSE(by_file(fifo.string()));
  EXPECT_FALSE(by_file("/dev/zero"));
  EXPECT_FALSE(by_file("/proc/self/status"));
  auto model_sdf = [](const std::string& name, const std::string& mass, const std::string& size) {
    return "<sdf version='1.9'><model name='" + name +
           "'><pose>0 5 3 0 0 0</pose><link name='l'><inertial><mass>" + mass +
           "</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>"
           "<collision name='c'><geometry><box><size>" +
           size + "</size></box></geometry></collision></link></model></sdf>";
  };
  EXPECT_FALSE(create(model_sdf("heavy", "1e308", "0.1 0.1 0.1")));
  EXPECT_FALSE(create(model_sdf("wide", "1", "1e308 1 1")));
  msgs::EntityFactory nan_pose;
  nan_pose.set_sdf(model_sdf("tilted", "1", "0.1 0.1 0.1"));
  nan_pose.mutable_pose()->mutable_orientation()->set_w(std::nan(""));
  EXPECT_FALSE(call_bool("/world/tw/create", nan_pose));
  msgs::EntityFactory far;
  far.set_sdf(model_sdf("far", "1", "0.1 0.1 0.1"));
  far.mutable_pose()->mutable_position()->set_x(1e300);
  EXPECT_FALSE(call_bool("/world/tw/create", far));
  msgs::Pose teleport;
  teleport.set_name("box");
  teleport.mutable_position()->set_x(1e300);
  EXPECT_FALSE(call_bool("/world/tw/set_pose", teleport));
  // A finite orientation whose norm overflows (the fuzzer's input) is the rotation it names,
  // not the zero quaternion that stopped physics at the next step.
  msgs::Pose huge;
  huge.set_name("box");
  huge.mutable_position()->set_z(2);
  huge.mutable_orientation()->set_x(1.5);
  huge.mutable_orientation()->set_z(1e185);
  EXPECT_TRUE(call_bool("/world/tw/set_pose", huge));
  msgs::Physics gravity;
  gravity.mutable_gravity()->set_z(-1e308);
  EXPECT_FALSE(call_bool("/world/tw/set_physics", gravity));
  // Two models in one request, the second one bad: neither stays.
  msgs::EntityFactory_V both;
  both.add_data()->set_sdf(model_sdf("fine", "1", "0.1 0.1 0.1"));
  both.add_data()->set_sdf(model_sdf("heavy2", "1e308", "0.1 0.1 0.1"));
  EXPECT_FALSE(call_bool("/world/tw/create_multiple", both));

  for (const char* n : {"heavy", "wide", "tilted", "far", "fine", "heavy2"}) {
    EXPECT_EQ(model(n), ecs::kNullEntity) << n;
  }
  EXPECT_TRUE(wait_for([](sim::Runner& r) {
    const auto* g = r.registry().try_get<c::Gravity>(r.world());
    return !g || g->value.Z() > -100;
  }));
  const auto it = iterations();
  ASSERT_TRUE(wait_for([it](sim::Runner& r) { return r.info().iterations > it + 50; }));
  // And a sound request still works.
  EXPECT_TRUE(create(model_sdf("ok", "1", "0.1 0.1 0.1")));
  const auto it2 = iterations();
  ASSERT_TRUE(wait_for([it2](sim::Runner& r) { return r.info().iterations > it2 + 50; }));
}

// A client spawning ever new models (each its own SDF text) does not grow the spool of their
// texts on disk without bound (the fuzzer ran the process out of memory the same way, through
// the parsed-model cache).
TEST_F(UserCommandsTest, SpawnedTextsAreKeptBounded) {
  start(false);
  auto spool_files = [] {
    std::size_t n = 0;
    const std::string prefix = "kestrel-spawn-" + std::to_string(getpid()) + "-";
    for (const auto& d : fs::directory_iterator(fs::temp_directory_path())) {
      if (d.path().filename().string().rfind(prefix, 0) != 0) continue;
      for (const auto& f : fs::directory_iterator(d.path())) n += f.path().extension() == ".sdf";
    }
    return n;
  };
  const int kSpawns = 150;
  for (int i = 0; i < kSpawns; ++i) {
    const std::string name = "m" + std::to_string(i);
    ASSERT_TRUE(create("<sdf version='1.9'><model name='" + name +
                       "'><static>true</static><pose>0 9 " + std::to_string(i) +
                       " 0 0 0</pose><link name='l'/></model></sdf>"))
        << name;
    msgs::Entity gone;
    gone.set_name(name);
    gone.set_type(msgs::Entity::MODEL);
    ASSERT_TRUE(call_bool("/world/tw/remove", gone)) << name;
  }
  EXPECT_GT(spool_files(), 0u);
  EXPECT_LE(spool_files(), sdf::TextSpool::kMaxFiles);
  // The oldest text's file is gone; spawning it again still works (written and parsed anew).
  EXPECT_TRUE(
      create("<sdf version='1.9'><model name='m0'><static>true</static><pose>0 9 0 0 0 "
             "0</pose><link name='l'/></model></sdf>"));
  EXPECT_NE(model("m0"), ecs::kNullEntity);
}

// An orientation of any finite size is normalised to the rotation it names; one that is not
// finite stays so, for pose_problem() to refuse.
TEST(PoseFromMessage, AnyFiniteOrientationIsTheRotationItNames) {
  auto rot = [](double w, double x, double y, double z) {
    msgs::Pose m;
    auto* q = m.mutable_orientation();
    q->set_w(w);
    q->set_x(x);
    q->set_y(y);
    q->set_z(z);
    return detail::from_msg(m).Rot();
  };
  const auto huge = rot(0, 1.5, 0, 1e185);
  EXPECT_NEAR(huge.W(), 0, 1e-12);
  EXPECT_NEAR(huge.X(), 0, 1e-12);
  EXPECT_NEAR(std::abs(huge.Z()), 1, 1e-12);
  const auto tiny = rot(1e-200, 1e-200, 0, 0);  // the squared norm underflows to 0
  EXPECT_NEAR(tiny.W(), std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(tiny.X(), std::sqrt(0.5), 1e-12);
  const auto big = rot(0, 0, 0, -1e308);
  EXPECT_NEAR(big.Z(), -1, 1e-12);
  const auto unset = rot(0, 0, 0, 0);
  EXPECT_EQ(unset.W(), 1);
  EXPECT_TRUE(std::isnan(rot(std::nan(""), 0, 0, 1).W()));
  EXPECT_TRUE(std::isinf(rot(0, INFINITY, 0, 1).X()));
}

// ignition-transport runs an in-process service callback under its own lock. Here a callback
// holds it while the world adds a command topic and steps on: the step thread must not call
// into transport itself (the subscription is made on the Outbox thread).
TEST_F(UserCommandsTest, StepThreadNeverWaitsOnTransportsLock) {
  ecs::Entity box = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) { box = r.registry().child_by_name(r.world(), "box"); });
  std::function<bool(const msgs::Empty&, msgs::Boolean&)> hold = [&](const msgs::Empty&,
                                                                     msgs::Boolean& rep) {
    auto added = detail::on_step_thread<bool>(
        *runner_,
        [box](sim::Runner& r) {
          r.registry().set<c::ActuatorCommandTopic>(box, {"/box/command/motor_speed"});
          return true;
        },
        std::chrono::seconds(5));
    const auto t0 = runner_->info().iterations;
    bool stepped = false;
    for (int i = 0; i < 200 && !stepped; ++i) {
      auto it = detail::on_step_thread<std::uint64_t>(
          *runner_, [](sim::Runner& r) { return r.info().iterations; }, std::chrono::seconds(5));
      stepped = it && *it > t0 + 20;
    }
    rep.set_data(added.value_or(false) && stepped);
    return true;
  };
  ASSERT_TRUE(node_->Advertise("/test/hold", hold));
  msgs::Boolean rep;
  bool result = false;
  ASSERT_TRUE(node_->Request("/test/hold", msgs::Empty(), 30000u, rep, result));
  EXPECT_TRUE(result && rep.data()) << "the step thread stalled while transport's lock was held";
  // The subscription was made afterwards, off the step thread: commands arrive.
  auto pub = node_->Advertise<msgs::Actuators>("/box/command/motor_speed");
  msgs::Actuators a;
  a.add_velocity(42);
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    pub.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = *detail::on_step_thread<bool>(
        *runner_,
        [box](sim::Runner& r) {
          const auto* cmd = r.registry().try_get<c::ActuatorCommands>(box);
          return cmd && cmd->velocity == std::vector<double>{42};
        },
        std::chrono::seconds(5));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace kestrel::transport
