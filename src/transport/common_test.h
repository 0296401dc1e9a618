#pragma once
// Private to the transport tests: a world running on its own thread with the transport systems,
// each test on its own IGN_PARTITION (ctest runs them inside scripts/netns).
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <ignition/msgs/actuators.pb.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/clock.pb.h>
#include <ignition/msgs/empty.pb.h>
#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>
#include <ignition/msgs/imu.pb.h>
#include <ignition/msgs/physics.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/scene.pb.h>
#include <ignition/msgs/serialized_map.pb.h>
#include <ignition/msgs/stringmsg_v.pb.h>
#include <ignition/msgs/world_control.pb.h>
#include <ignition/msgs/world_stats.pb.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/transport/transport.h"
#include "kestrel/world/setup.h"
#include "transport/common.h"

namespace kestrel::transport::test_support {

namespace c = kestrel::components;
namespace msgs = ignition::msgs;
namespace fs = std::filesystem;
using ignition::transport::Node;

constexpr const char* kWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ground">
      <static>true</static>
      <link name="link">
        <collision name="c"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
      </link>
    </model>
    <model name="box">
      <pose>0 0 0.5 0 0 0</pose>
      <link name="body">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
      <link name="lid">
        <pose>0 0 0.6 0 0 0</pose>
        <inertial><mass>0.1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
      </link>
      <joint name="hinge" type="revolute">
        <parent>body</parent><child>lid</child><axis><xyz>1 0 0</xyz></axis>
      </joint>
    </model>
  </world>
</sdf>)";

struct Unsubscribe {
  Node* node;
  std::vector<std::string> topics;
  ~Unsubscribe() {
    for (const auto& t : topics) node->Unsubscribe(t);
  }
};

// The latest message of type M seen on a topic, shared with the callback (ignition-transport
// may still run a queued callback after Unsubscribe returns).
template <class M>
struct Latest : std::enable_shared_from_this<Latest<M>> {
  std::mutex m;
  M msg;
  int count = 0;
  // The callback owns a reference: it stays valid however late transport runs it.
  std::function<void(const M&)> callback() {
    return [self = this->shared_from_this()](const M& in) {
      std::lock_guard lock(self->m);
      self->msg = in;
      ++self->count;
    };
  }
  std::pair<M, int> get() {
    std::lock_guard lock(m);
    return {msg, count};
  }
};

// A world running on its own thread with the transport systems, on a private partition.
class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    setenv("IGN_PARTITION",
           ("kestrel_test_" + std::to_string(getpid()) + "_" + info->name()).c_str(), 1);
    configure_network(std::nullopt);
    node_ = std::make_unique<Node>();
    dir_ = fs::temp_directory_path() / ("kestrel_transport_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    world_file_ = dir_ / "world.sdf";
  }

  void start(bool paused = true, std::function<void(sim::Runner&)> before_configure = {}) {
    std::ofstream(world_file_) << world_text_;
    sim::Runner::Options o;
    runner_ = std::make_unique<sim::Runner>(o);
    world::load_world_into_runner(world_file_, *runner_);
    auto opts = runner_->options();
    opts.paused = paused;
    runner_->set_options(opts);
    if (before_configure) before_configure(*runner_);
    runner_->add_system(make_world_transport_system(*runner_), runner_->world(), nullptr,
                        "WorldTransport", "test");
    runner_->configure();
    thread_ = std::thread([this] { runner_->run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      runner_->stop();
      thread_.join();
    }
    runner_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Polls `pred` (on the step thread) until true or a generous deadline passes.
  bool wait_for(std::function<bool(sim::Runner&)> pred) {
    for (int i = 0; i < 1000; ++i) {
      auto r = detail::on_step_thread<bool>(*runner_, pred, std::chrono::seconds(5));
      if (r && *r) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  template <class Req>
  bool call_bool(const std::string& service, const Req& req) {
    msgs::Boolean rep;
    bool result = false;
    EXPECT_TRUE(node_->Request(service, req, 5000u, rep, result)) << service << " timed out";
    return result && rep.data();
  }

  bool control(const std::string& text) {
    msgs::WorldControl req;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &req));
    return call_bool("/world/tw/control", req);
  }

  std::uint64_t iterations() {
    return *detail::on_step_thread<std::uint64_t>(
        *runner_, [](sim::Runner& r) { return r.info().iterations; }, std::chrono::seconds(5));
  }

  ecs::Entity model(const std::string& name) {
    return *detail::on_step_thread<ecs::Entity>(
        *runner_, [name](sim::Runner& r) { return r.registry().child_by_name(r.world(), name); },
        std::chrono::seconds(5));
  }

  msgs::Scene scene() {
    msgs::Scene rep;
    bool result = false;
    EXPECT_TRUE(node_->Request("/world/tw/scene/info", msgs::Empty(), 5000u, rep, result));
    EXPECT_TRUE(result);
    return rep;
  }

  std::string world_text_ = kWorld;  // the world start() loads (a test may change it first)
  fs::path dir_, world_file_;
  std::unique_ptr<sim::Runner> runner_;
  std::thread thread_;
  std::unique_ptr<Node> node_;  // created in SetUp, on the test's partition
};

}  // namespace kestrel::transport::test_support
