// The transport systems in-process: a Runner on its own thread, requests from a test node.
// Runs inside the private network namespace (ctest runs under scripts/netns), each test on its
// own IGN_PARTITION. Waits poll the world's state with a generous deadline; no test asserts on
// durations.
#include <ignition/msgs/annotated_axis_aligned_2d_box_v.pb.h>
#include <ignition/msgs/annotated_oriented_3d_box_v.pb.h>
#include <ignition/msgs/camera_info.pb.h>
#include <ignition/msgs/image.pb.h>
#include <ignition/msgs/laserscan.pb.h>
#include <ignition/msgs/pointcloud_packed.pb.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kestrel/components/camera.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

constexpr const char* kSphereSdf = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <model name="ball">
    <pose>3 0 2 0 0 0</pose>
    <link name="link">
      <inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy><izz>0.004</izz></inertia></inertial>
      <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
    </link>
  </model>
</sdf>)";

// Unsubscribes on scope exit: declared after the variables its callbacks use, so no callback
// runs into a destroyed local (also when an ASSERT returns early).

TEST(TransportNetwork, DefaultsToLocalhostUnlessChosen) {
  const char* saved = std::getenv("IGN_IP");
  const std::string keep = saved ? saved : "";
  unsetenv("IGN_IP");
  EXPECT_EQ(configure_network(std::nullopt), "127.0.0.1");
  EXPECT_STREQ(std::getenv("IGN_IP"), "127.0.0.1");
  setenv("IGN_IP", "10.1.2.3", 1);
  EXPECT_EQ(configure_network(std::nullopt), "10.1.2.3");  // the user's choice stays
  EXPECT_EQ(configure_network(std::string("127.0.0.1")), "127.0.0.1");
  EXPECT_THROW(
      {
        try {
          configure_network(std::string("localhost:12"));
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("dotted IPv4"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  setenv("IGN_IP", "127.0.0.1", 1);
  if (!keep.empty()) setenv("IGN_IP", keep.c_str(), 1);
}

// ignition-transport binds its discovery sockets to 0.0.0.0 whatever IGN_IP says; on localhost
// Kestrel binds them to the loopback device, so no other host's discovery reaches them.
TEST(TransportNetwork, DiscoveryListensOnLoopbackOnly) {
  unsetenv("IGN_IP");
  configure_network(std::nullopt);
  std::vector<std::string> devices;
  for (const int fd : discovery_sockets()) {
    char dev[IFNAMSIZ] = "";
    socklen_t len = sizeof dev;
    getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len);
    devices.emplace_back(dev);
  }
  EXPECT_EQ(devices, (std::vector<std::string>{"lo", "lo"}));
  EXPECT_EQ(restrict_discovery_to_loopback(), 2);  // again: idempotent
}

TEST_F(TransportTest, MultiStepPauseAndResetThroughControl) {
  start(/*paused=*/true);
  ASSERT_TRUE(control("multi_step: 10 pause: true"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 10; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(iterations(), 10u) << "multi_step must pause after its steps";
  EXPECT_EQ(runner_->info().sim_time, Duration{10'000'000});  // exactly 10 × 1 ms

  ASSERT_TRUE(control("step: true pause: true"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 11; }));

  ASSERT_TRUE(control("pause: false"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations > 100; }));
  ASSERT_TRUE(control("pause: true"));
  const auto frozen = iterations();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(iterations(), frozen);

  ASSERT_TRUE(control("pause: true reset { all: true }"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 0; }));
  EXPECT_EQ(runner_->info().sim_time, Duration{0});
}

TEST_F(TransportTest, RunToSimTimeStopsThere) {
  start(true);
  ASSERT_TRUE(control("pause: true run_to_sim_time { sec: 0 nsec: 50000000 }"));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations == 50; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(iterations(), 50u);
}

TEST_F(TransportTest, UnsupportedControlIsRefused) {
  start(true);
  EXPECT_FALSE(control("pause: true reset { model_only: true }"));
}

TEST_F(TransportTest, SetPhysicsChangesOnlyTheFieldsGiven) {
  start(true);
  msgs::Physics p;
  p.set_real_time_factor(2.5);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", p));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.options().real_time_factor == 2.5; }));
  EXPECT_EQ(runner_->options().step_size, Duration{1'000'000});  // unchanged

  msgs::Physics q;
  q.set_max_step_size(0.002);
  ASSERT_TRUE(call_bool("/world/tw/set_physics", q));
  ASSERT_TRUE(
      wait_for([](sim::Runner& r) { return r.options().step_size == Duration{2'000'000}; }));
  EXPECT_EQ(runner_->options().real_time_factor, 2.5);  // unchanged

  // Gravity, magnetic field and RTF 0: world_transport_test.cc.
}

TEST_F(TransportTest, StatsClockAndWorlds) {
  start(false);
  msgs::StringMsg_V worlds;
  bool result = false;
  ASSERT_TRUE(node_->Request("/gazebo/worlds", msgs::Empty(), 5000u, worlds, result));
  ASSERT_TRUE(result);
  ASSERT_EQ(worlds.data_size(), 1);
  EXPECT_EQ(worlds.data(0), "tw");

  // Heap state: transport may still run a callback just after Unsubscribe returns.
  struct State {
    std::mutex m;
    std::condition_variable cv;
    std::vector<Duration> clocks;
    std::optional<msgs::WorldStatistics> stats;
  };
  auto st = std::make_shared<State>();
  auto& m = st->m;
  auto& cv = st->cv;
  auto& clocks = st->clocks;
  auto& stats = st->stats;
  std::function<void(const msgs::Clock&)> on_clock = [st](const msgs::Clock& k) {
    std::lock_guard l(st->m);
    st->clocks.push_back(detail::from_msg(k.sim()));
    st->cv.notify_all();
  };
  std::function<void(const msgs::WorldStatistics&)> on_stats =
      [st](const msgs::WorldStatistics& s) {
        std::lock_guard l(st->m);
        st->stats = s;
        st->cv.notify_all();
      };
  Unsubscribe guard{node_.get(), {"/clock", "/world/tw/stats"}};
  ASSERT_TRUE(node_->Subscribe("/clock", on_clock));
  ASSERT_TRUE(node_->Subscribe("/world/tw/stats", on_stats));
  std::unique_lock lock(m);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10),
                          [&] { return clocks.size() >= 20 && stats.has_value(); }));
  for (std::size_t i = 1; i < clocks.size(); ++i) {
    EXPECT_EQ((clocks[i] - clocks[i - 1]).count() % 1'000'000, 0) << "whole steps";
    EXPECT_GT(clocks[i], clocks[i - 1]);
  }
  EXPECT_EQ(stats->model_count(), 2);
  EXPECT_EQ(detail::from_msg(stats->step_size()), Duration{1'000'000});
  bool has_drops = false;
  for (const auto& d : stats->header().data()) has_drops |= d.key() == "dropped_messages";
  EXPECT_TRUE(has_drops) << "drop counters must be visible in stats";
}

TEST_F(TransportTest, SpawnBySdfStringAndCloneThenRemove) {
  start(false);
  msgs::EntityFactory f;
  f.set_sdf(kSphereSdf);
  ASSERT_TRUE(call_bool("/world/tw/create", f));
  const ecs::Entity ball = model("ball");
  ASSERT_NE(ball, ecs::kNullEntity);
  // The spawned ball falls under physics (it is simulated, not just listed).
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    const auto b = r.registry().child_by_name(r.world(), "ball");
    return r.registry().get<c::WorldPose>(b).value.Pos().Z() < 1.9;
  }));

  // Same name again: refused without allow_renaming, renamed with it.
  EXPECT_FALSE(call_bool("/world/tw/create", f));
  f.set_allow_renaming(true);
  ASSERT_TRUE(call_bool("/world/tw/create/blocking", f));
  EXPECT_NE(model("ball_0"), ecs::kNullEntity);

  msgs::EntityFactory cl;
  cl.set_clone_name("box");
  cl.set_name("box2");
  detail::to_msg(ignition::math::Pose3d(0, 5, 0.5, 0, 0, 0), cl.mutable_pose());
  ASSERT_TRUE(call_bool("/world/tw/create", cl));
  const ecs::Entity box2 = model("box2");
  ASSERT_NE(box2, ecs::kNullEntity);
  auto names = detail::on_step_thread<std::string>(
      *runner_,
      [box2](sim::Runner& r) {
        auto& reg = r.registry();
        const auto hinge = reg.child_by_name(box2, "hinge");
        const auto& jd = reg.get<c::JointData>(hinge);
        // The clone's joint connects the clone's links, not the source's.
        return reg.scoped_name(jd.parent) + " " + reg.scoped_name(jd.child);
      },
      std::chrono::seconds(5));
  EXPECT_EQ(*names, "tw::box2::body tw::box2::lid");
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    const auto b = r.registry().child_by_name(r.world(), "box2");
    const auto l = r.registry().child_by_name(b, "body");
    return r.registry().get<c::WorldPose>(l).value.Pos().Y() > 4.9;
  }));
  const auto sc = scene();
  std::vector<std::string> listed;
  for (const auto& m : sc.model()) listed.push_back(m.name());
  EXPECT_EQ(listed, (std::vector<std::string>{"ground", "box", "ball", "ball_0", "box2"}));

  msgs::Entity rm;
  rm.set_name("ball");
  rm.set_type(msgs::Entity::MODEL);
  ASSERT_TRUE(call_bool("/world/tw/remove/blocking", rm));
  msgs::Entity rm2;
  rm2.set_id(box2);
  ASSERT_TRUE(call_bool("/world/tw/remove", rm2));
  ASSERT_TRUE(wait_for([](sim::Runner& r) {
    return r.registry().child_by_name(r.world(), "ball") == ecs::kNullEntity &&
           r.registry().child_by_name(r.world(), "box2") == ecs::kNullEntity;
  }));
  ASSERT_TRUE(wait_for([](sim::Runner& r) { return r.info().iterations > 50; }));
}

TEST_F(TransportTest, BadRequestsAnswerFalseAndChangeNothing) {
  start(false);
  const auto count = [&] {
    return *detail::on_step_thread<std::size_t>(
        *runner_, [](sim::Runner& r) { return r.registry().size(); }, std::chrono::seconds(5));
  };
  const auto before = count();
  msgs::EntityFactory bad;
  bad.set_sdf(
      "<sdf version='1.9'><model name='x'><link name='l'><inertial><mass>oops</mass>"
      "</inertial></link></model></sdf>");
  EXPECT_FALSE(call_bool("/world/tw/create", bad));
  msgs::EntityFactory nothing;
  EXPECT_FALSE(call_bool("/world/tw/create", nothing));
  msgs::EntityFactory clone_missing;
  clone_missing.set_clone_name("nope");
  EXPECT_FALSE(call_bool("/world/tw/create", clone_missing));
  msgs::Entity rm;
  rm.set_name("nope");
  EXPECT_FALSE(call_bool("/world/tw/remove", rm));
  msgs::Entity rm_world;
  rm_world.set_id(runner_->world());
  EXPECT_FALSE(call_bool("/world/tw/remove", rm_world));
  msgs::Pose p;
  p.set_name("nope");
  EXPECT_FALSE(call_bool("/world/tw/set_pose", p));
  EXPECT_EQ(count(), before);
  // The world kept running.
  const auto it = iterations();
  ASSERT_TRUE(wait_for([it](sim::Runner& r) { return r.info().iterations > it + 10; }));
}

TEST_F(TransportTest, SetPoseShowsInPoseInfo) {
  start(false);
  struct State {  // on the heap: transport may run a callback just after Unsubscribe
    std::mutex m;
    std::condition_variable cv;
    std::optional<ignition::math::Pose3d> seen;
  };
  auto st = std::make_shared<State>();
  auto& m = st->m;
  auto& cv = st->cv;
  auto& seen = st->seen;
  std::function<void(const msgs::Pose_V&)> cb = [st](const msgs::Pose_V& v) {
    for (const auto& p : v.pose()) {
      if (p.name() != "box") continue;
      std::lock_guard l(st->m);
      st->seen = detail::from_msg(p);
      st->cv.notify_all();
    }
  };
  Unsubscribe guard{node_.get(), {"/world/tw/pose/info"}};
  ASSERT_TRUE(node_->Subscribe("/world/tw/pose/info", cb));
  msgs::Pose p;
  p.set_name("box");
  detail::to_msg(ignition::math::Pose3d(2, 3, 0.5, 0, 0, 0.5), &p);
  ASSERT_TRUE(call_bool("/world/tw/set_pose/blocking", p));
  std::unique_lock lock(m);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] {
    return seen && std::abs(seen->Pos().X() - 2) < 1e-3 && std::abs(seen->Pos().Y() - 3) < 1e-3;
  }));
  EXPECT_NEAR(seen->Rot().Yaw(), 0.5, 1e-3);
}

TEST_F(TransportTest, StateServiceListsEntities) {
  start(true);
  msgs::SerializedStepMap rep;
  bool result = false;
  ASSERT_TRUE(node_->Request("/world/tw/state", msgs::Empty(), 5000u, rep, result));
  ASSERT_TRUE(result);
  EXPECT_GE(rep.state().entities_size(), 1 + 2 + 3 + 1);  // world, models, links, joint
  EXPECT_TRUE(rep.state().entities().count(runner_->world()));
}

TEST_F(TransportTest, ActuatorCommandsArriveAtTheNextStep) {
  ecs::Entity box = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    box = r.registry().child_by_name(r.world(), "box");
    r.registry().add<c::ActuatorCommandTopic>(box, "/box/command/motor_speed");
  });
  auto pub = node_->Advertise<msgs::Actuators>("/box/command/motor_speed");
  msgs::Actuators a;
  a.add_velocity(100);
  a.add_velocity(-200.5);
  // Retry until the world saw one (discovery of a new publisher takes a moment).
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    pub.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = *detail::on_step_thread<bool>(
        *runner_,
        [&](sim::Runner& r) {
          const auto* cmd = r.registry().try_get<c::ActuatorCommands>(box);
          return cmd && cmd->velocity.size() == 2;
        },
        std::chrono::seconds(5));
  }
  ASSERT_TRUE(seen);
  auto v = detail::on_step_thread<std::vector<double>>(
      *runner_, [&](sim::Runner& r) { return r.registry().get<c::ActuatorCommands>(box).velocity; },
      std::chrono::seconds(5));
  EXPECT_EQ(*v, (std::vector<double>{100, -200.5}));
}

// Publishes `velocity` on `topic` until `e`'s ActuatorCommands shows it.
bool commands_arrive(Node& node, sim::Runner& runner, const std::string& topic, ecs::Entity e,
                     double velocity) {
  auto pub = node.Advertise<msgs::Actuators>(topic);
  msgs::Actuators a;
  a.add_velocity(velocity);
  for (int i = 0; i < 500; ++i) {
    pub.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto seen = detail::on_step_thread<bool>(
        runner,
        [&](sim::Runner& r) {
          const auto* cmd = r.registry().try_get<c::ActuatorCommands>(e);
          return cmd && cmd->velocity == std::vector<double>{velocity};
        },
        std::chrono::seconds(5));
    if (seen && *seen) return true;
  }
  return false;
}

// A model removed at one step boundary and another spawned at the next leave the number of
// topic components unchanged: the new one is subscribed all the same (the registry's
// new/removed lists), after the removed one's subscription of the same topic is dropped.
TEST_F(TransportTest, RemovedThenSpawnedInTheNextStepIsSubscribed) {
  ecs::Entity a = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    a = r.registry().child_by_name(r.world(), "box");
    r.registry().add<c::ActuatorCommandTopic>(a, "/a/command/motor_speed");
  });
  ASSERT_TRUE(commands_arrive(*node_, *runner_, "/a/command/motor_speed", a, 1));

  // Boundary k: `a` is removed (gone at the end of that step); boundary k+1: `b` appears with
  // the topic `a` had (a model removed and spawned again): the count of topic components is
  // back where it was.
  auto b = std::make_shared<ecs::Entity>(ecs::kNullEntity);
  const auto removed = detail::on_step_thread<bool>(
      *runner_,
      [a, b](sim::Runner& r) {
        r.registry().request_remove(a);
        r.post([b](sim::Runner& run) {
          *b = run.registry().create(run.world());
          run.registry().add<c::Name>(*b, "b");
          run.registry().add<c::ActuatorCommandTopic>(*b, "/a/command/motor_speed");
        });
        return true;
      },
      std::chrono::seconds(5));
  ASSERT_TRUE(removed && *removed);
  ASSERT_TRUE(wait_for([b](sim::Runner&) { return *b != ecs::kNullEntity; }));
  EXPECT_TRUE(commands_arrive(*node_, *runner_, "/a/command/motor_speed", *b, 2));
}

TEST_F(TransportTest, SensorReadingsArePublishedWhenTheirSequenceAdvances) {
  ecs::Entity sensor = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    const auto box = r.registry().child_by_name(r.world(), "box");
    sensor = r.registry().create(r.registry().child_by_name(box, "body"));
    r.registry().add<c::Name>(sensor, "imu");
    r.registry().add<c::SensorTopic>(sensor, "/test/imu");
  });
  struct State {
    std::mutex m;
    std::condition_variable cv;
    std::vector<msgs::IMU> got;
  };
  auto st = std::make_shared<State>();
  std::function<void(const msgs::IMU&)> cb = [st](const msgs::IMU& m) {
    std::lock_guard l(st->m);
    st->got.push_back(m);
    st->cv.notify_all();
  };
  Unsubscribe guard{node_.get(), {"/test/imu"}};
  ASSERT_TRUE(node_->Subscribe("/test/imu", cb));
  // Sample `seq` stamped seq µs, written at a step boundary.
  const auto write = [&](std::uint64_t seq) {
    detail::on_step_thread<bool>(
        *runner_,
        [&, seq](sim::Runner& r) {
          c::ImuReading x;
          x.sequence = seq;
          x.stamp = Duration{seq * 1000};
          x.linear_acceleration.Set(0, 0, 9.8);
          r.registry().set<c::ImuReading>(sensor, x);
          return true;
        },
        std::chrono::seconds(5));
  };
  const auto received = [&](std::uint64_t seq) {
    return std::count_if(st->got.begin(), st->got.end(), [&](const msgs::IMU& m) {
      return detail::from_msg(m.header().stamp()).count() == static_cast<std::int64_t>(seq * 1000);
    });
  };
  // Keep writing new samples until one arrives (the subscription needs a moment to connect).
  std::uint64_t seq = 0;
  for (int i = 0; i < 300; ++i) {
    write(++seq);
    std::unique_lock lock(st->m);
    if (st->cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return !st->got.empty(); })) {
      break;
    }
  }
  {
    std::lock_guard lock(st->m);
    ASSERT_FALSE(st->got.empty());
    const auto& m = st->got.front();
    EXPECT_EQ(m.entity_name(), "tw::box::body::imu");
    EXPECT_EQ(m.linear_acceleration().z(), 9.8);
    EXPECT_EQ(detail::from_msg(m.header().stamp()).count() % 1000, 0);
  }
  // The last sample stays unchanged for 200 steps, then a marker sample follows: the marker
  // arriving means everything published before it has arrived (one publisher, in order). The
  // unchanged sample was published once, not once per step.
  const std::uint64_t last = seq;
  const auto it = iterations();
  ASSERT_TRUE(wait_for([it](sim::Runner& r) { return r.info().iterations > it + 200; }));
  write(last + 1);
  std::unique_lock lock(st->m);
  ASSERT_TRUE(
      st->cv.wait_for(lock, std::chrono::seconds(30), [&] { return received(last + 1) > 0; }));
  EXPECT_EQ(received(last), 1);
  for (std::uint64_t k = 1; k <= last + 1; ++k) EXPECT_LE(received(k), 1) << "sample " << k;
}

// Writes readings with a growing sequence (write(seq)) until a message arrives on `topic` (or a
// minute has passed).
template <class M>
M receive(Node& node, sim::Runner& runner, const std::string& topic,
          const std::function<void(sim::Runner&, std::uint64_t)>& write) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    std::vector<M> got;
  };
  auto st = std::make_shared<State>();
  std::function<void(const M&)> cb = [st](const M& m) {
    std::lock_guard l(st->m);
    st->got.push_back(m);
    st->cv.notify_all();
  };
  Unsubscribe guard{&node, {topic}};
  EXPECT_TRUE(node.Subscribe(topic, cb));
  // A deadline in wall time, not a count of tries: discovery under a sanitizer on a loaded
  // machine took longer than 300 tries of 20 ms (CI).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (std::uint64_t seq = 1; std::chrono::steady_clock::now() < deadline; ++seq) {
    detail::on_step_thread<bool>(
        runner,
        [&, seq](sim::Runner& r) {
          write(r, seq);
          return true;
        },
        std::chrono::seconds(5));
    std::unique_lock lock(st->m);
    if (st->cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return !st->got.empty(); })) {
      break;
    }
  }
  std::lock_guard lock(st->m);
  EXPECT_FALSE(st->got.empty()) << "nothing on " << topic;
  return st->got.empty() ? M() : st->got.front();
}

TEST_F(TransportTest, CameraImagesInfoAndPointsAsGazeboPublishesThem) {
  ecs::Entity cam = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    const auto box = r.registry().child_by_name(r.world(), "box");
    cam = r.registry().create(r.registry().child_by_name(box, "body"));
    r.registry().add<c::Name>(cam, "cam");
    r.registry().add<c::CameraTopics>(
        cam, c::CameraTopics{"/t/depth", "/t/camera_info", "", "/t/depth/points", "", "", false});
  });
  auto write = [&](sim::Runner& r, std::uint64_t seq) {
    c::CameraReading x;
    x.sequence = seq;
    x.stamp = Duration{seq * 1000};
    x.frame_id = "cam_optical";
    x.info = {2, 1, 10, 11, 1, 0.5, 0, -0.1, 0.01, 0.001, 0.002, -0.003, 10, 11, 1, 0.5, 0, 0};
    x.image.width = 2, x.image.height = 1, x.image.format = c::PixelFormat::kRFloat32;
    const float d[2] = {2.5f, std::numeric_limits<float>::infinity()};
    x.image.data.resize(8);
    std::memcpy(x.image.data.data(), d, 8);
    x.points = {2.5f, 0.1f, 0.2f, d[1], d[1], d[1]};
    x.point_rgb = {10, 20, 30, 0, 0, 0};
    r.registry().set<c::CameraReading>(cam, x);
  };
  const auto img = receive<msgs::Image>(*node_, *runner_, "/t/depth", write);
  EXPECT_EQ(img.width(), 2u);
  EXPECT_EQ(img.step(), 8u);
  EXPECT_EQ(img.pixel_format_type(), msgs::PixelFormatType::R_FLOAT32);
  ASSERT_EQ(img.data().size(), 8u);
  float got[2];
  std::memcpy(got, img.data().data(), 8);
  EXPECT_EQ(got[0], 2.5f);
  EXPECT_TRUE(std::isinf(got[1]));
  EXPECT_EQ(img.header().data(0).key(), "frame_id");
  EXPECT_EQ(img.header().data(0).value(0), "cam_optical");
  const auto info = receive<msgs::CameraInfo>(*node_, *runner_, "/t/camera_info", write);
  ASSERT_EQ(info.intrinsics().k_size(), 9);
  EXPECT_EQ(info.intrinsics().k(0), 10);
  EXPECT_EQ(info.intrinsics().k(2), 1);
  EXPECT_EQ(info.intrinsics().k(4), 11);
  EXPECT_EQ(info.intrinsics().k(5), 0.5);
  ASSERT_EQ(info.distortion().k_size(), 5);  // k1 k2 p1 p2 k3
  EXPECT_EQ(info.distortion().k(0), -0.1);
  EXPECT_EQ(info.distortion().k(2), 0.002);
  EXPECT_EQ(info.distortion().k(4), 0.001);
  ASSERT_EQ(info.projection().p_size(), 12);
  EXPECT_EQ(info.projection().p(10), 1);
  EXPECT_EQ(info.rectification_matrix_size(), 9);
  const auto pts = receive<msgs::PointCloudPacked>(*node_, *runner_, "/t/depth/points", write);
  ASSERT_EQ(pts.field_size(), 4);
  EXPECT_EQ(pts.field(0).name(), "x");
  EXPECT_EQ(pts.field(3).name(), "rgb");
  EXPECT_EQ(pts.width(), 2u);
  ASSERT_EQ(pts.data().size(), 2u * pts.point_step());
  float x0;
  std::memcpy(&x0, pts.data().data() + pts.field(0).offset(), 4);
  EXPECT_EQ(x0, 2.5f);
  EXPECT_EQ(static_cast<std::uint8_t>(pts.data()[pts.field(3).offset()]), 30);  // B first
}

TEST_F(TransportTest, BoundingBoxesAsGazeboPublishesThem) {
  ecs::Entity cam2 = ecs::kNullEntity, cam3 = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    const auto box = r.registry().child_by_name(r.world(), "box");
    for (auto [e, name, three] : {std::tuple{&cam2, "bb2", false}, {&cam3, "bb3", true}}) {
      *e = r.registry().create(r.registry().child_by_name(box, "body"));
      r.registry().add<c::Name>(*e, name);
      c::CameraTopics t;
      t.boxes = std::string("/t/") + name;
      t.image = t.boxes + "_image";
      t.boxes_3d = three;
      r.registry().add<c::CameraTopics>(*e, t);
    }
  });
  auto write = [&](sim::Runner& r, std::uint64_t seq) {
    c::CameraReading x;
    x.sequence = seq;
    x.frame_id = "box::body::bb";
    x.image.width = 1, x.image.height = 1, x.image.data = {0, 255, 0};
    x.boxes_2d = {{3, 10, 20, 30.5, 40}};
    r.registry().set<c::CameraReading>(cam2, x);
    x.boxes_2d.clear();
    x.boxes_3d = {{7, {0, 0.5, -3}, {1, 2, 0.5}, {0.5, -0.5, 0.5, 0.5}}};
    r.registry().set<c::CameraReading>(cam3, x);
  };
  const auto b2 = receive<msgs::AnnotatedAxisAligned2DBox_V>(*node_, *runner_, "/t/bb2", write);
  ASSERT_EQ(b2.annotated_box_size(), 1);
  EXPECT_EQ(b2.annotated_box(0).label(), 3u);
  EXPECT_EQ(b2.annotated_box(0).box().min_corner().x(), 10);
  EXPECT_EQ(b2.annotated_box(0).box().min_corner().y(), 20);
  EXPECT_EQ(b2.annotated_box(0).box().max_corner().x(), 30.5);
  EXPECT_EQ(b2.annotated_box(0).box().max_corner().y(), 40);
  EXPECT_EQ(b2.header().data(0).value(0), "box::body::bb");
  const auto b3 = receive<msgs::AnnotatedOriented3DBox_V>(*node_, *runner_, "/t/bb3", write);
  ASSERT_EQ(b3.annotated_box_size(), 1);
  EXPECT_EQ(b3.annotated_box(0).label(), 7u);
  EXPECT_EQ(b3.annotated_box(0).box().center().z(), -3);
  EXPECT_EQ(b3.annotated_box(0).box().boxsize().y(), 2);
  EXPECT_EQ(b3.annotated_box(0).box().orientation().x(), -0.5);
  const auto img = receive<msgs::Image>(*node_, *runner_, "/t/bb2_image", write);
  EXPECT_EQ(img.pixel_format_type(), msgs::PixelFormatType::RGB_INT8);
}

TEST_F(TransportTest, LidarScanAndPointsAsGazeboPublishesThem) {
  ecs::Entity lidar = ecs::kNullEntity;
  start(false, [&](sim::Runner& r) {
    const auto box = r.registry().child_by_name(r.world(), "box");
    lidar = r.registry().create(r.registry().child_by_name(box, "body"));
    r.registry().add<c::Name>(lidar, "lidar");
    r.registry().add<c::LidarTopics>(lidar, c::LidarTopics{"/t/scan", "/t/scan/points"});
  });
  auto write = [&](sim::Runner& r, std::uint64_t seq) {
    c::LidarReading x;
    x.sequence = seq;
    x.frame_id = "box::body::lidar";
    x.count = 3, x.vertical_count = 1;
    x.angle_min = -1, x.angle_max = 1, x.angle_step = 1;
    x.range_min = 0.1, x.range_max = 10;
    x.ranges = {1, 2, std::numeric_limits<double>::infinity()};
    x.intensities = {0, 0, 0};
    r.registry().set<c::LidarReading>(lidar, x);
  };
  const auto scan = receive<msgs::LaserScan>(*node_, *runner_, "/t/scan", write);
  EXPECT_EQ(scan.count(), 3u);
  EXPECT_EQ(scan.angle_step(), 1);
  ASSERT_EQ(scan.ranges_size(), 3);
  EXPECT_EQ(scan.ranges(1), 2);
  EXPECT_TRUE(std::isinf(scan.ranges(2)));
  EXPECT_EQ(scan.frame(), "box::body::lidar");
  const auto pts = receive<msgs::PointCloudPacked>(*node_, *runner_, "/t/scan/points", write);
  ASSERT_EQ(pts.field_size(), 5);
  EXPECT_EQ(pts.field(4).name(), "ring");
  EXPECT_FALSE(pts.is_dense());
  float p[3];
  for (int k = 0; k < 3; ++k) {
    std::memcpy(&p[k], pts.data().data() + pts.point_step() + pts.field(k).offset(), 4);
  }
  EXPECT_FLOAT_EQ(p[0], 2);  // the middle ray, straight ahead
  EXPECT_FLOAT_EQ(p[1], 0);
}

}  // namespace
}  // namespace kestrel::transport
