// LinearBattery's draining topics through transport: a message of any type on a
// power_draining_topic starts the drain, on a stop_power_draining_topic stops it; the state
// topic says so. Runs inside scripts/netns like the other transport tests (own IGN_PARTITION);
// waits poll the world's state with a generous deadline, no test asserts on durations.
#include <ignition/msgs/battery_state.pb.h>
#include <ignition/msgs/stringmsg.pb.h>

#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

// 120 W at 12 V = 10 A from a 100 A·h battery: hours of sim time before it is empty. No joints:
// start_on_motion never fires, only the messages start it.
constexpr const char* kBatteryWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="cart">
      <static>true</static>
      <link name="body">
        <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
      <plugin filename="gz-sim-linearbatteryplugin-system"
              name="gz::sim::systems::LinearBatteryPlugin">
        <battery_name>main</battery_name>
        <voltage>12</voltage>
        <capacity>100</capacity>
        <power_load>120</power_load>
        <smooth_current_tau>0.0001</smooth_current_tau>
        <power_draining_topic>/cart/go</power_draining_topic>
        <power_draining_topic>cart/go_too</power_draining_topic>
        <stop_power_draining_topic>/cart/halt</stop_power_draining_topic>
      </plugin>
    </model>
  </world>
</sdf>)";

class BatteryBridgeTest : public TransportTest {
 protected:
  c::Battery battery() {
    return *detail::on_step_thread<c::Battery>(
        *runner_, [this](sim::Runner& r) { return r.registry().get<c::Battery>(cart_); },
        std::chrono::seconds(5));
  }
  // Publishes m on topic until the battery's `draining` is `want` (discovery of a new
  // publisher takes a moment, so the first messages may reach nobody).
  template <class M>
  bool publish_until_draining(const std::string& topic, const M& m, bool want) {
    auto pub = node_->Advertise<M>(topic);
    for (int i = 0; i < 500; ++i) {
      pub.Publish(m);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (battery().draining == want) return true;
    }
    return false;
  }
  // Waits until the world has run `n` more steps.
  bool run_steps(std::uint64_t n) {
    const std::uint64_t until = iterations() + n;
    return wait_for([until](sim::Runner& r) { return r.info().iterations >= until; });
  }

  ecs::Entity cart_ = ecs::kNullEntity;
};

TEST_F(BatteryBridgeTest, DrainingTopicsStartAndStopTheDrainWithAnyMessageType) {
  world_text_ = kBatteryWorld;
  start(false);
  cart_ = model("cart");
  ASSERT_TRUE(run_steps(200));
  EXPECT_FALSE(battery().draining);
  EXPECT_EQ(battery().charge, 100.0);

  // The latest status seen. Shared with the callback: ignition-transport may still run an
  // already queued callback after Unsubscribe returns (seen with --gtest_repeat).
  struct Seen {
    std::mutex m;
    msgs::BatteryState::PowerSupplyStatus status = msgs::BatteryState::UNKNOWN;
  };
  auto seen = std::make_shared<Seen>();
  std::function<void(const msgs::BatteryState&)> on_state = [seen](const msgs::BatteryState& s) {
    std::lock_guard lock(seen->m);
    seen->status = s.power_supply_status();
  };
  ASSERT_TRUE(node_->Subscribe("/model/cart/battery/main/state", on_state));
  Unsubscribe unsubscribe{node_.get(), {"/model/cart/battery/main/state"}};
  auto last_state = [seen] {
    std::lock_guard lock(seen->m);
    return seen->status;
  };

  // An Empty on the first start topic: draining at 10 A.
  ASSERT_TRUE(publish_until_draining("/cart/go", msgs::Empty(), true));
  ASSERT_TRUE(run_steps(100));
  const auto draining = battery();
  EXPECT_LT(draining.charge, 100.0);
  EXPECT_NEAR(draining.current, 10.0, 1e-6);
  EXPECT_TRUE(
      wait_for([&](sim::Runner&) { return last_state() == msgs::BatteryState::DISCHARGING; }));

  // A StringMsg on the stop topic: no more drain.
  msgs::StringMsg halt;
  halt.set_data("stop");
  ASSERT_TRUE(publish_until_draining("/cart/halt", halt, false));
  ASSERT_TRUE(run_steps(50));
  const double stopped = battery().charge;
  EXPECT_LT(stopped, draining.charge);
  ASSERT_TRUE(run_steps(1000));
  // As Gazebo: neither draining nor charging, nothing is updated (the current stays 10 A), and
  // a battery above 90 % reports FULL.
  EXPECT_EQ(battery().charge, stopped);
  EXPECT_NEAR(battery().current, 10.0, 1e-6);
  EXPECT_TRUE(wait_for([&](sim::Runner&) { return last_state() == msgs::BatteryState::FULL; }));

  // A Boolean on the second start topic (given without its leading '/'): draining again.
  msgs::Boolean go;
  go.set_data(false);  // the content does not matter
  ASSERT_TRUE(publish_until_draining("/cart/go_too", go, true));
  ASSERT_TRUE(run_steps(100));
  EXPECT_LT(battery().charge, stopped);
}

}  // namespace
}  // namespace kestrel::transport
