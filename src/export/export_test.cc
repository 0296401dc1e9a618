// The export model against a small world: the channels, the scene's primitives, transforms
// only when links move, the scene again after a spawn-like change and after a reset.
#include "kestrel/export/export.h"

#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "export/proto/foxglove/schemas.pb.h"
#include "kestrel/components/camera.h"
#include "kestrel/world/setup.h"

namespace kestrel::exports {
namespace {

namespace fs = std::filesystem;

// A box falling onto a ground plane, and a static sphere.
constexpr const char* kWorld = R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="ground"><static>true</static><link name="link">
    <collision name="c"><geometry><plane><normal>0 0 1</normal><size>20 20</size></plane></geometry></collision>
    <visual name="v"><geometry><plane><normal>0 0 1</normal><size>20 20</size></plane></geometry></visual>
  </link></model>
  <model name="ball"><static>true</static><pose>3 0 1 0 0 0</pose><link name="link">
    <visual name="v"><geometry><sphere><radius>0.25</radius></sphere></geometry>
      <material><diffuse>1 0 0 1</diffuse></material></visual>
  </link></model>
  <model name="box"><pose>0 0 2 0 0 0</pose><link name="link">
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.5 0.4 0.3</size></box></geometry></collision>
    <visual name="v"><pose>0 0 0.1 0 0 0</pose><geometry><box><size>0.5 0.4 0.3</size></box></geometry></visual>
  </link></model>
</world></sdf>)";

struct Fixture : ::testing::Test {
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kestrel_export_test_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "w.sdf") << kWorld;
    runner = std::make_unique<sim::Runner>(sim::Runner::Options{});
    world::load_world_into_runner(dir / "w.sdf", *runner);
    runner->configure();
    model = std::make_unique<ExportModel>(runner->registry(), "w");
  }
  void TearDown() override { fs::remove_all(dir); }

  // One step of the world, then one of the model with every channel wanted.
  std::map<std::string, std::string> step(bool run = true) {
    if (run) runner->step_once();
    std::map<std::string, std::string> out;
    StepContext ctx;
    ctx.sim_time = runner->info().sim_time;
    model->step(
        runner->registry(), ctx, [](std::uint32_t) { return true; },
        [&](Message&& m) {
          for (const auto& ch : model->channels()) {
            if (ch.id == m.channel) out[ch.topic] = m.data;
          }
        });
    return out;
  }

  fs::path dir;
  std::unique_ptr<sim::Runner> runner;
  std::unique_ptr<ExportModel> model;
};

TEST_F(Fixture, ChannelsHaveFoxgloveSchemasAndDescriptorSets) {
  ASSERT_NE(model->find("/tf"), nullptr);
  EXPECT_EQ(model->find("/tf")->schema_name, "foxglove.FrameTransforms");
  EXPECT_EQ(model->find("/tf")->encoding, "protobuf");
  EXPECT_EQ(model->find("/scene")->schema_name, "foxglove.SceneUpdate");
  EXPECT_TRUE(model->find("/scene")->latched);
  EXPECT_EQ(model->find("/world/w/stats")->encoding, "json");
  EXPECT_EQ(model->find("/world/w/clock")->schema_encoding, "jsonschema");
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(model->find("/tf")->schema));
  ASSERT_GE(set.file_size(), 2);  // timestamp.proto, duration.proto, then the schemas
  EXPECT_EQ(set.file(set.file_size() - 1).package(), "foxglove");
  EXPECT_TRUE(nlohmann::json::parse(model->find("/world/w/stats")->schema).is_object());
}

TEST_F(Fixture, SceneHasEveryVisualInItsLinkFrame) {
  auto out = step();
  ASSERT_TRUE(out.count("/scene"));
  foxglove::SceneUpdate scene;
  ASSERT_TRUE(scene.ParseFromString(out["/scene"]));
  ASSERT_EQ(scene.deletions_size(), 1);
  EXPECT_EQ(scene.deletions(0).type(), foxglove::SceneEntityDeletion::ALL);
  std::map<std::string, const foxglove::SceneEntity*> by_id;
  for (const auto& e : scene.entities()) by_id[e.id()] = &e;
  ASSERT_EQ(by_id.size(), 3u);
  const auto& box = *by_id.at("box::link");
  EXPECT_EQ(box.frame_id(), "box::link");
  EXPECT_TRUE(box.frame_locked());
  ASSERT_EQ(box.cubes_size(), 1);
  EXPECT_DOUBLE_EQ(box.cubes(0).size().x(), 0.5);
  EXPECT_DOUBLE_EQ(box.cubes(0).size().z(), 0.3);
  EXPECT_DOUBLE_EQ(box.cubes(0).pose().position().z(), 0.1);
  const auto& ball = *by_id.at("ball::link");
  ASSERT_EQ(ball.spheres_size(), 1);
  EXPECT_DOUBLE_EQ(ball.spheres(0).size().x(), 0.5);
  EXPECT_DOUBLE_EQ(ball.spheres(0).color().r(), 1);
  EXPECT_DOUBLE_EQ(ball.spheres(0).color().g(), 0);
  const auto& ground = *by_id.at("ground::link");
  ASSERT_EQ(ground.cubes_size(), 1);  // the plane as a thin box, its top face at z = 0
  EXPECT_DOUBLE_EQ(ground.cubes(0).size().x(), 20);
  EXPECT_NEAR(ground.cubes(0).pose().position().z() + ground.cubes(0).size().z() / 2, 0, 1e-12);
  // Latched: kept for later readers, not sent again while nothing changes.
  EXPECT_NE(model->last(model->find("/scene")->id), nullptr);
  EXPECT_FALSE(step().count("/scene"));
}

TEST_F(Fixture, TransformsOnlyWhenALinkMovedAndOfEveryLink) {
  auto first = step();
  ASSERT_TRUE(first.count("/tf"));
  foxglove::FrameTransforms tf;
  ASSERT_TRUE(tf.ParseFromString(first["/tf"]));
  ASSERT_EQ(tf.transforms_size(), 3);
  double z0 = 0;
  for (const auto& t : tf.transforms()) {
    EXPECT_EQ(t.parent_frame_id(), "world");
    if (t.child_frame_id() == "box::link") z0 = t.translation().z();
  }
  EXPECT_NEAR(z0, 2, 1e-3);
  // The box falls: every step has transforms, the box lower each time.
  auto second = step();
  ASSERT_TRUE(second.count("/tf"));
  ASSERT_TRUE(tf.ParseFromString(second["/tf"]));
  ASSERT_EQ(tf.transforms_size(), 3);
  for (const auto& t : tf.transforms()) {
    if (t.child_frame_id() == "box::link") {
      EXPECT_LT(t.translation().z(), z0);
    }
  }
  EXPECT_EQ(tf.transforms(0).timestamp().nanos(), 2'000'000);
  // Without a step nothing moved: no transforms, unless forced.
  EXPECT_FALSE(step(false).count("/tf"));
  model->force(model->find("/tf")->id);
  EXPECT_TRUE(step(false).count("/tf"));
}

TEST_F(Fixture, AChannelNotWantedKeepsItsChangeAndAResetSendsEverythingAgain) {
  step();
  StepContext ctx;
  runner->step_once();
  ctx.sim_time = runner->info().sim_time;
  int sent = 0;
  model->step(
      runner->registry(), ctx, [](std::uint32_t) { return false; }, [&](Message&&) { ++sent; });
  EXPECT_EQ(sent, 0);
  auto out = step(false);  // the move of the step nobody wanted is still pending
  EXPECT_TRUE(out.count("/tf"));
  runner->reset_now();
  out = step(false);
  EXPECT_TRUE(out.count("/scene"));
  EXPECT_TRUE(out.count("/tf"));
  const auto clock = nlohmann::json::parse(out["/world/w/clock"]);
  EXPECT_EQ(clock["sec"], 0);
  EXPECT_EQ(clock["nsec"], 0);
}

// A camera at 10 Hz (0.1 s steps of 10 ms) looking at a box.
TEST(ExportSensors, CameraImageAndCalibrationEachNewFrame) {
  const fs::path dir =
      fs::temp_directory_path() / ("kestrel_export_camera_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "w.sdf") << R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ignored"><max_step_size>0.01</max_step_size></physics>
  <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors"/>
  <model name="box"><static>true</static><pose>3 0 0 0 0 0</pose><link name="l">
    <visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual></link></model>
  <model name="cam"><static>true</static><link name="l">
    <sensor name="s" type="camera"><update_rate>10</update_rate><topic>cam/image</topic><camera>
      <horizontal_fov>1.2</horizontal_fov><image><width>64</width><height>48</height></image>
      <clip><near>0.1</near><far>100</far></clip></camera></sensor></link></model>
</world></sdf>)";
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(dir / "w.sdf", runner);
  runner.registry().set<components::RenderSettings>(runner.world(), {true, 1});
  runner.configure();
  ExportModel model(runner.registry(), "w");
  fs::remove_all(dir);
  const Channel *image = nullptr, *info = nullptr;
  for (const auto& ch : model.channels()) {
    if (ch.schema_name == "foxglove.RawImage") image = &ch;
    if (ch.schema_name == "foxglove.CameraCalibration") info = &ch;
  }
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->topic, "/cam/image");
  ASSERT_NE(info, nullptr);
  int images = 0, infos = 0;
  foxglove::RawImage img;
  foxglove::CameraCalibration cal;
  for (int i = 0; i < 25; ++i) {
    runner.step_once();
    StepContext ctx;
    ctx.sim_time = runner.info().sim_time;
    model.step(
        runner.registry(), ctx, [](std::uint32_t) { return true; },
        [&](Message&& m) {
          if (m.channel == image->id) {
            ++images;
            ASSERT_TRUE(img.ParseFromString(m.data));
          }
          if (m.channel == info->id) {
            ++infos;
            ASSERT_TRUE(cal.ParseFromString(m.data));
          }
        });
  }
  // Frames at 0, 0.1 and 0.2 s (or 0.1 and 0.2): one message per frame, not per step.
  EXPECT_GE(images, 2);
  EXPECT_LE(images, 3);
  EXPECT_EQ(infos, images);
  EXPECT_EQ(img.width(), 64u);
  EXPECT_EQ(img.height(), 48u);
  EXPECT_EQ(img.encoding(), "rgb8");
  EXPECT_EQ(img.step(), 64u * 3);
  EXPECT_EQ(img.data().size(), 64u * 48 * 3);
  ASSERT_EQ(cal.k_size(), 9);
  ASSERT_EQ(cal.p_size(), 12);
  EXPECT_NEAR(cal.k(0), 32 / std::tan(0.6), 1e-6);  // fx = (w/2) / tan(hfov/2)
  EXPECT_EQ(cal.distortion_model(), "plumb_bob");
}

}  // namespace
}  // namespace kestrel::exports
