// The export model against a small world: the channels, the scene's primitives, transforms
// only when links move, the scene again after a spawn-like change and after a reset.
#include "kestrel/export/export.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "export/json_channels.h"
#include "export/proto/foxglove/schemas.pb.h"
#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "kestrel/world/setup.h"

namespace kestrel::exports {
namespace {

namespace fs = std::filesystem;

// Runs `steps` steps of the world, each followed by one of the model with every channel wanted.
void fly(sim::Runner& runner, ExportModel& model, int steps,
         const std::function<void(Message&&)>& sink) {
  for (int i = 0; i < steps; ++i) {
    runner.step_once();
    StepContext ctx;
    ctx.sim_time = runner.info().sim_time;
    model.step(runner.registry(), ctx, [](std::uint32_t) { return true; }, sink);
  }
}

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
  // The first link's model removed: each transform names its own link (the message's frame
  // names are kept between steps and set again when the links changed).
  runner->registry().request_remove(runner->registry().find_scoped("w::ground"));
  step();
  auto after = step();
  ASSERT_TRUE(after.count("/tf"));
  ASSERT_TRUE(tf.ParseFromString(after["/tf"]));
  ASSERT_EQ(tf.transforms_size(), 2);
  EXPECT_EQ(tf.transforms(0).child_frame_id(), "ball::link");
  EXPECT_EQ(tf.transforms(0).translation().x(), 3);
  EXPECT_EQ(tf.transforms(1).child_frame_id(), "box::link");
  EXPECT_EQ(tf.transforms(1).parent_frame_id(), "world");
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
  fly(runner, model, 25, [&](Message&& m) {
    if (m.channel == image->id) {
      ++images;
      ASSERT_TRUE(img.ParseFromString(m.data));
    }
    if (m.channel == info->id) {
      ++infos;
      ASSERT_TRUE(cal.ParseFromString(m.data));
    }
  });
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
  // news(): true at exactly the steps at which step() sends a frame of a wanted channel (a
  // reader that asks the model only then misses none), and never for channels not wanted.
  const auto frames = [&](std::uint32_t ch) { return ch == image->id || ch == info->id; };
  int with = 0, without = 0;
  for (int i = 0; i < 25; ++i) {
    runner.step_once();
    StepContext ctx;
    ctx.sim_time = runner.info().sim_time;
    EXPECT_FALSE(model.news(runner.registry(), [](std::uint32_t) { return false; }));
    const bool news = model.news(runner.registry(), frames);
    int sent = 0;
    model.step(runner.registry(), ctx, frames, [&](Message&&) { ++sent; });
    EXPECT_EQ(news, sent > 0) << "step " << i;
    (news ? with : without)++;
    EXPECT_FALSE(model.news(runner.registry(), frames));  // what was new is sent
  }
  EXPECT_GE(with, 2);
  EXPECT_GE(without, 20);
}


// Reads the packed float32 fields of a foxglove.PointCloud: point i's field f.
float cloud_value(const foxglove::PointCloud& pc, std::size_t i, int f) {
  float v = 0;
  std::memcpy(&v, pc.data().data() + i * pc.point_stride() + pc.fields(f).offset(), 4);
  return v;
}

// test/worlds/viewer_sensors.sdf: a wall whose face is the plane x = 3, a three-ring lidar
// (CpuLidar) and a depth camera (Sensors) at the origin, 10 Hz, facing it.
TEST(ExportSensors, LidarScanAndPointCloudsOfAWallAtAKnownDistance) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(fs::path(KESTREL_SOURCE_DIR) / "test/worlds/viewer_sensors.sdf",
                                runner);
  runner.registry().set<components::RenderSettings>(runner.world(), {true, 1});
  runner.configure();
  ExportModel model(runner.registry(), "viewer_sensors");
  // gz-sensors' topics: the scan on <topic>, its points on <topic>/points.
  const Channel* scan = model.find("/scan");
  const Channel* lidar_points = model.find("/scan/points");
  const Channel* depth_points = model.find("/depth/points");
  ASSERT_NE(scan, nullptr);
  ASSERT_NE(lidar_points, nullptr);
  ASSERT_NE(depth_points, nullptr);
  EXPECT_EQ(scan->schema_name, "foxglove.LaserScan");
  EXPECT_EQ(lidar_points->schema_name, "foxglove.PointCloud");
  EXPECT_EQ(depth_points->schema_name, "foxglove.PointCloud");
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(lidar_points->schema));
  std::map<std::uint32_t, int> count;
  std::map<std::uint32_t, std::string> last;
  fly(runner, model, 250, [&](Message&& m) {  // 1 ms steps
    ++count[m.channel];
    last[m.channel] = m.data;
  });
  // One message per scan (10 Hz over 0.25 s: 2 or 3), not per step.
  for (const Channel* ch : {scan, lidar_points, depth_points}) {
    EXPECT_GE(count[ch->id], 2) << ch->topic;
    EXPECT_LE(count[ch->id], 3) << ch->topic;
  }
  // The scan: the horizontal ring (elevation 0 of -0.2, 0, 0.2); range = 3 / cos(bearing).
  foxglove::LaserScan ls;
  ASSERT_TRUE(ls.ParseFromString(last[scan->id]));
  EXPECT_EQ(ls.frame_id(), "rig::link::lidar");
  EXPECT_DOUBLE_EQ(ls.start_angle(), -0.5);
  EXPECT_NEAR(ls.end_angle(), 0.5, 1e-12);
  ASSERT_EQ(ls.ranges_size(), 11);
  ASSERT_EQ(ls.intensities_size(), 11);
  for (int i = 0; i < 11; ++i) {
    const double az = -0.5 + 0.1 * i;
    EXPECT_NEAR(ls.ranges(i), 3 / std::cos(az), 1e-4) << "ray " << i;
  }
  EXPECT_EQ(ls.timestamp().nanos() % 100'000'000, 0);  // the sample's time, a scan's
  // The lidar's points: every ray of the three rings hits the wall, so 33 points on x = 3, at
  // the bearing and elevation of their ray.
  foxglove::PointCloud pc;
  ASSERT_TRUE(pc.ParseFromString(last[lidar_points->id]));
  EXPECT_EQ(pc.frame_id(), "rig::link::lidar");
  ASSERT_EQ(pc.fields_size(), 4);
  EXPECT_EQ(pc.fields(3).name(), "intensity");
  EXPECT_EQ(pc.point_stride(), 16u);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(pc.fields(f).type(), foxglove::PackedElementField::FLOAT32);
    EXPECT_EQ(pc.fields(f).offset(), 4u * f);
  }
  ASSERT_EQ(pc.data().size(), 33u * 16);
  for (std::size_t k = 0; k < 33; ++k) {
    const double az = -0.5 + 0.1 * (k % 11), el = -0.2 + 0.2 * (k / 11);
    EXPECT_NEAR(cloud_value(pc, k, 0), 3, 1e-4) << "point " << k;
    EXPECT_NEAR(cloud_value(pc, k, 1), 3 * std::tan(az), 1e-4) << "point " << k;
    EXPECT_NEAR(cloud_value(pc, k, 2), 3 / std::cos(az) * std::tan(el), 1e-4) << "point " << k;
  }
  // The depth camera's points: one per pixel, all on the wall (x = depth = 3), x y z only.
  ASSERT_TRUE(pc.ParseFromString(last[depth_points->id]));
  ASSERT_EQ(pc.fields_size(), 3);
  EXPECT_EQ(pc.point_stride(), 12u);
  ASSERT_EQ(pc.data().size(), 16u * 12 * 12);
  double y_min = 1e9, y_max = -1e9;
  for (std::size_t k = 0; k < 16 * 12; ++k) {
    EXPECT_NEAR(cloud_value(pc, k, 0), 3, 1e-4) << "point " << k;
    y_min = std::min<double>(y_min, cloud_value(pc, k, 1));
    y_max = std::max<double>(y_max, cloud_value(pc, k, 1));
  }
  // The pixel centres span the field of view: |y| up to 3 tan(0.4) (15/16 of it at the centres).
  EXPECT_NEAR(y_max, 3 * std::tan(0.4) * 15 / 16, 0.02);
  EXPECT_NEAR(y_min, -y_max, 1e-4);
}

// The X3 demo flies for 3 s with a GNSS loss commanded at 1 s: each JSON channel's last message
// equals its component, and the values move as the world flies.
// The sensors Gazebo publishes beside images and ranges: a contact sensor on a box that lands,
// a logical camera seeing it, a segmentation camera's labels map and a bounding box camera's
// boxes of the labelled box, each equal to its reading.
TEST(ExportSensors, ContactLogicalCameraLabelsAndBoxesEqualTheirReadings) {
  const fs::path dir =
      fs::temp_directory_path() / ("kestrel_export_more_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "w.sdf") << R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ignored"><max_step_size>0.001</max_step_size></physics>
  <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors"/>
  <plugin filename="gz-sim-contact-system" name="gz::sim::systems::Contact"/>
  <plugin filename="gz-sim-logical-camera-system" name="gz::sim::systems::LogicalCamera"/>
  <model name="ground"><static>true</static><link name="l">
    <collision name="plane"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
  </link></model>
  <model name="box"><pose>3 0 0.3 0 0 0</pose><link name="l">
    <inertial><mass>1.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
    <visual name="v"><geometry><box><size>0.2 0.2 0.2</size></box></geometry>
      <plugin filename="gz-sim-label-system" name="gz::sim::systems::Label"><label>5</label></plugin>
    </visual>
    <sensor name="touch" type="contact"><update_rate>100</update_rate><topic>touch</topic>
      <contact><collision>c</collision></contact></sensor>
  </link></model>
  <model name="cams"><static>true</static><pose>0 0 0.1 0 0 0</pose><link name="l">
    <sensor name="logic" type="logical_camera"><update_rate>10</update_rate><topic>logic</topic>
      <logical_camera><near>0.1</near><far>10</far><horizontal_fov>1</horizontal_fov>
      <aspect_ratio>1.3</aspect_ratio></logical_camera></sensor>
    <sensor name="seg" type="segmentation"><update_rate>10</update_rate><topic>seg</topic><camera>
      <horizontal_fov>1</horizontal_fov><image><width>32</width><height>24</height></image>
      <clip><near>0.1</near><far>100</far></clip></camera></sensor>
    <sensor name="bb" type="boundingbox_camera"><update_rate>10</update_rate><topic>bb</topic><camera>
      <horizontal_fov>1</horizontal_fov><image><width>32</width><height>24</height></image>
      <clip><near>0.1</near><far>100</far></clip><box_type>2d</box_type></camera></sensor>
  </link></model>
</world></sdf>)";
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(dir / "w.sdf", runner);
  runner.registry().set<components::RenderSettings>(runner.world(), {true, 1});
  runner.configure();
  ExportModel model(runner.registry(), "w");
  fs::remove_all(dir);
  auto& reg = runner.registry();
  std::map<std::string, const Channel*> by_topic;
  for (const auto& ch : model.channels()) by_topic[ch.topic] = &ch;
  ASSERT_TRUE(by_topic.count("/touch"));
  ASSERT_TRUE(by_topic.count("/logic"));
  ASSERT_TRUE(by_topic.count("/seg/labels_map"));
  ASSERT_TRUE(by_topic.count("/bb"));
  EXPECT_EQ(by_topic["/touch"]->schema_name, "kestrel.Contacts");
  EXPECT_EQ(by_topic["/logic"]->schema_name, "kestrel.LogicalCameraImage");
  EXPECT_EQ(by_topic["/seg/labels_map"]->schema_name, "foxglove.RawImage");
  EXPECT_EQ(by_topic["/bb"]->schema_name, "kestrel.AnnotatedAxisAligned2DBox_V");
  for (const char* t : {"/touch", "/logic", "/bb"}) {
    EXPECT_TRUE(nlohmann::json::parse(by_topic[t]->schema).is_object()) << t;
  }
  std::map<std::string, std::string> last;
  std::map<std::string, int> count;
  fly(runner, model, 1500, [&](Message&& m) {
    const auto& ch = model.channels()[m.channel - 1];
    last[ch.topic] = m.data;
    ++count[ch.topic];
  });
  auto entity = [&](const std::string& scoped) {
    ecs::Entity found = ecs::kNullEntity;
    reg.each<components::Sensor>([&](ecs::Entity e, const components::Sensor&) {
      if (reg.scoped_name(e) == scoped) found = e;
    });
    return found;
  };
  // Contact: one message per sample (100 Hz over 1.5 s); the box has landed and rests on the
  // ground, its weight shared by the points.
  const auto& cr = reg.get<components::ContactReading>(entity("w::box::l::touch"));
  EXPECT_EQ(count["/touch"], static_cast<int>(cr.sequence));
  const auto cj = nlohmann::json::parse(last["/touch"]);
  ASSERT_EQ(cr.contacts.size(), 1u);
  ASSERT_EQ(cj["contact"].size(), 1u);
  const auto& k = cj["contact"][0];
  EXPECT_EQ(k["collision1"]["name"], "w::box::l::c");
  EXPECT_EQ(k["collision2"]["name"], "w::ground::l::plane");
  ASSERT_EQ(k["position"].size(), cr.contacts[0].positions.size());
  ASSERT_EQ(k["wrench"].size(), cr.contacts[0].forces.size());
  double weight = 0;
  for (std::size_t i = 0; i < cr.contacts[0].forces.size(); ++i) {
    EXPECT_EQ(k["position"][i]["z"].get<double>(), cr.contacts[0].positions[i].Z());
    EXPECT_EQ(k["depth"][i].get<double>(), cr.contacts[0].depths[i]);
    const double fz = k["wrench"][i]["body_1_wrench"]["force"]["z"].get<double>();
    EXPECT_EQ(fz, cr.contacts[0].forces[i].Z());
    EXPECT_EQ(k["wrench"][i]["body_2_wrench"]["force"]["z"].get<double>(), -fz);
    weight += fz;
  }
  EXPECT_NEAR(weight, 1.5 * 9.8, 0.05 * 1.5 * 9.8);  // the ground holds the box up
  // Logical camera: the box (and the ground, whose origin is in view) with their poses.
  const auto& lr = reg.get<components::LogicalCameraReading>(entity("w::cams::l::logic"));
  const auto lj = nlohmann::json::parse(last["/logic"]);
  ASSERT_EQ(lj["model"].size(), lr.models.size());
  bool saw_box = false;
  for (std::size_t i = 0; i < lr.models.size(); ++i) {
    EXPECT_EQ(lj["model"][i]["name"], lr.models[i].name);
    EXPECT_EQ(lj["model"][i]["pose"]["position"]["x"].get<double>(), lr.models[i].pose.Pos().X());
    if (lr.models[i].name == "box") {
      saw_box = true;
      EXPECT_NEAR(lr.models[i].pose.Pos().X(), 3, 1e-9);
    }
  }
  EXPECT_TRUE(saw_box);
  // Segmentation: the labels map as the reading has it; the box's pixels carry label 5.
  const auto& sr = reg.get<components::CameraReading>(entity("w::cams::l::seg"));
  foxglove::RawImage labels;
  ASSERT_TRUE(labels.ParseFromString(last["/seg/labels_map"]));
  EXPECT_EQ(labels.encoding(), "rgb8");
  EXPECT_EQ(labels.width(), 32u);
  EXPECT_EQ(labels.data(), std::string(sr.labels.data.begin(), sr.labels.data.end()));
  EXPECT_NE(labels.data().find('\x05'), std::string::npos);
  EXPECT_EQ(count["/seg/labels_map"], static_cast<int>(sr.sequence));
  // Bounding boxes: the box's, corners in pixels, as the reading.
  const auto& br = reg.get<components::CameraReading>(entity("w::cams::l::bb"));
  const auto bj = nlohmann::json::parse(last["/bb"]);
  ASSERT_EQ(br.boxes_2d.size(), 1u);
  ASSERT_EQ(bj["annotated_box"].size(), 1u);
  EXPECT_EQ(bj["annotated_box"][0]["label"], 5);
  EXPECT_EQ(bj["annotated_box"][0]["box"]["min_corner"]["x"].get<double>(), br.boxes_2d[0].min_x);
  EXPECT_EQ(bj["annotated_box"][0]["box"]["max_corner"]["y"].get<double>(), br.boxes_2d[0].max_y);
  EXPECT_LT(br.boxes_2d[0].min_x, br.boxes_2d[0].max_x);
}

// The JSON channels' numbers: fmt's "{}" text of the double, ".0" after an integral one, and
// the text reads back as the same double, for 4 million random bit patterns (every magnitude,
// subnormals included), random decimals of a few digits (the values sensors print) and the
// edges of the fixed and exponent layouts.
TEST(ExportJson, NumbersAreTheShortestTextFmtWrites) {
  auto expected = [](double v) {
    std::string t = fmt::format("{}", v);
    if (t.find_first_of(".e") == std::string::npos) t += ".0";
    return t;
  };
  int checked = 0;
  auto check = [&](double v) {
    if (!std::isfinite(v)) return;
    char text[32];
    const std::string got(text, detail::json_number(text, v));
    ASSERT_EQ(got, expected(v)) << "bits " << std::bit_cast<std::uint64_t>(v);
    ASSERT_EQ(std::bit_cast<std::uint64_t>(std::strtod(got.c_str(), nullptr)),
              std::bit_cast<std::uint64_t>(v))
        << got;
    ++checked;
  };
  for (double v : {0.0, -0.0, 1.0, -1.0, 0.1, 1e-4, 1.5e-4, 9.999e-5, 1e-5, 1e15, 1e16,
                   9999999999999998.0, 1234567890123456.0, 12345678901234567.0, 5e-324, -5e-324,
                   2.2250738585072014e-308, 1.7976931348623157e308, 1e100, 1e-100, 123e300,
                   9.80665, -9.80665, 0.5, 100.0, 1e21, 1e22, 0.001, 123.456}) {
    check(v);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4'000'000; ++i) check(std::bit_cast<double>(rng()));
  std::uniform_int_distribution<int> places(-20, 20);
  for (int i = 0; i < 1'000'000; ++i) {
    const long long m = static_cast<long long>(rng() % 10'000'000) - 5'000'000;
    check(static_cast<double>(m) * std::pow(10.0, places(rng)));
    check(static_cast<double>(m) / 1000.0);
  }
  for (int p = -330; p <= 310; ++p) {
    const double v = std::pow(10.0, p);
    check(v);
    check(std::nextafter(v, 0.0));
    check(std::nextafter(v, INFINITY));
  }
  EXPECT_GT(checked, 5'990'000);  // the random bit patterns' NaNs and infinities left out
}

// A model made with raw_numbers (the recorder's) sends the same messages, and finish_json makes
// its raw channels' texts those of a model without: byte for byte, over a flight with a GNSS
// loss (null numbers) and a mission reason with escapes.
TEST(ExportJson, RawNumbersFinishedAreTheTextsWrittenWithout) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(fs::path(KESTREL_SOURCE_DIR) / "worlds/x3_mission.sdf", runner);
  runner.configure();
  auto& reg = runner.registry();
  ExportModel text(reg, "x3_mission"), raw(reg, "x3_mission", true);
  ASSERT_EQ(text.channels().size(), raw.channels().size());
  std::set<std::string> raw_topics;
  for (std::size_t i = 0; i < raw.channels().size(); ++i) {
    EXPECT_FALSE(text.channels()[i].raw_numbers);
    EXPECT_EQ(raw.channels()[i].topic, text.channels()[i].topic);
    if (raw.channels()[i].raw_numbers) raw_topics.insert(raw.channels()[i].topic);
  }
  // The sensors' and the vehicle's text channels; not the stats, clock or fault log.
  const ecs::Entity x3 = reg.child_by_name(runner.world(), "x3");
  EXPECT_EQ(raw_topics.size(), 8u);  // IMU, magnetometer, barometer, GNSS, battery, mission,
                                     // rotor speeds, commands
  EXPECT_TRUE(raw_topics.count(reg.get<components::BatteryTopic>(x3).topic));
  EXPECT_FALSE(raw_topics.count("/world/x3_mission/stats"));
  EXPECT_FALSE(raw_topics.count("/world/x3_mission/faults"));
  std::size_t finished = 0, nulls = 0;
  for (int i = 0; i < 3000; ++i) {
    if (i == 1000) {
      reg.set<components::FaultCommand>(runner.world(),
          {R"(<fault type="gnss_loss" model="x3" duration="1"/>)", "test"});
    }
    if (i == 2000) reg.get<components::MissionState>(x3).reason = "a \"quoted\"\nreason \x01";
    runner.step_once();
    StepContext ctx;
    ctx.sim_time = runner.info().sim_time;
    std::vector<Message> want, got;
    auto all = [](std::uint32_t) { return true; };
    text.step(reg, ctx, all, [&](Message&& m) { want.push_back(std::move(m)); });
    raw.step(reg, ctx, all, [&](Message&& m) { got.push_back(std::move(m)); });
    ASSERT_EQ(got.size(), want.size()) << "step " << i;
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].channel, want[k].channel);
      EXPECT_EQ(got[k].stamp, want[k].stamp);
      if (!raw.channels()[got[k].channel - 1].raw_numbers) {
        EXPECT_EQ(got[k].data, want[k].data);
        continue;
      }
      EXPECT_NE(got[k].data, want[k].data);  // its numbers are doubles yet
      std::string out = "kept ";
      finish_json(got[k].data, out);
      ASSERT_EQ(out, "kept " + want[k].data) << raw.channels()[got[k].channel - 1].topic;
      ++finished;
      if (want[k].data.find("null") != std::string::npos) ++nulls;
    }
  }
  EXPECT_GT(finished, 3000u);
  EXPECT_GT(nulls, 5u);  // the GNSS loss's second
}

TEST(ExportJson, SensorsBatteryMissionRotorsAndFaultsEqualTheirComponents) {
  sim::Runner runner(sim::Runner::Options{});
  world::load_world_into_runner(fs::path(KESTREL_SOURCE_DIR) / "worlds/x3_mission.sdf", runner);
  runner.configure();
  ExportModel model(runner.registry(), "x3_mission");
  auto& reg = runner.registry();
  const std::string base = "/world/x3_mission/model/x3/link/base_link/sensor/";
  auto entity = [&](const std::string& scoped) {
    ecs::Entity found = ecs::kNullEntity;
    reg.each<components::Sensor>([&](ecs::Entity e, const components::Sensor&) {
      if (reg.scoped_name(e) == scoped) found = e;
    });
    return found;
  };
  const ecs::Entity x3 = reg.child_by_name(runner.world(), "x3");
  std::map<std::string, std::string> schema;
  for (const auto& ch : model.channels()) schema[ch.topic] = ch.schema_name;
  // The topics (every sensor's SensorTopic, the model's Gazebo topics) and their schemas.
  const std::string imu = reg.get<components::SensorTopic>(entity("x3_mission::x3::base_link::imu_sensor")).topic;
  const std::string navsat = reg.get<components::SensorTopic>(entity("x3_mission::x3::base_link::navsat")).topic;
  const std::string battery = reg.get<components::BatteryTopic>(x3).topic;
  const std::string mission = reg.get<components::MissionStateTopic>(x3).topic;
  const std::string rotors = reg.get<components::RotorVelocityTopic>(x3).topic;
  const std::string commands = reg.get<components::ActuatorCommandTopic>(x3).topic;
  EXPECT_EQ(schema[imu], "kestrel.Imu");
  EXPECT_EQ(schema[navsat], "kestrel.NavSat");
  EXPECT_EQ(schema[reg.get<components::SensorTopic>(entity("x3_mission::x3::base_link::magnetometer")).topic], "kestrel.Magnetometer");
  EXPECT_EQ(schema[reg.get<components::SensorTopic>(entity("x3_mission::x3::base_link::air_pressure")).topic], "kestrel.FluidPressure");
  EXPECT_EQ(schema[battery], "kestrel.Battery");
  EXPECT_EQ(schema[mission], "kestrel.Mission");
  EXPECT_EQ(schema[rotors], "kestrel.Actuators");
  EXPECT_EQ(schema[commands], "kestrel.Actuators");
  EXPECT_EQ(schema["/world/x3_mission/faults"], "kestrel.Faults");
  for (const auto& ch : model.channels()) {
    if (ch.encoding == "json") {
      EXPECT_TRUE(nlohmann::json::parse(ch.schema).is_object()) << ch.topic;
    }
  }
  std::map<std::string, std::vector<nlohmann::json>> got;
  std::uint64_t imu_messages = 0, imu_seq0 = 0;
  const ecs::Entity imu_e = entity("x3_mission::x3::base_link::imu_sensor");
  for (int i = 0; i < 3000; ++i) {
    if (i == 1000) {
      reg.set<components::FaultCommand>(runner.world(),
          {R"(<fault type="gnss_loss" model="x3" duration="1"/>)", "test"});
    }
    runner.step_once();
    if (i == 0) imu_seq0 = reg.get<components::ImuReading>(imu_e).sequence;
    StepContext ctx;
    ctx.sim_time = runner.info().sim_time;
    model.step(
        reg, ctx, [](std::uint32_t) { return true; },
        [&](Message&& m) {
          const auto& ch = model.channels()[m.channel - 1];
          if (ch.encoding != "json" || ch.schema_name == "kestrel.Stats" ||
              ch.schema_name == "kestrel.Clock") {
            return;
          }
          if (ch.topic == imu) ++imu_messages;
          got[ch.topic].push_back(nlohmann::json::parse(m.data));
        });
  }
  // One IMU message per sample.
  EXPECT_EQ(imu_messages,
            reg.get<components::ImuReading>(imu_e).sequence - (imu_seq0 ? imu_seq0 - 1 : 0));
  const auto& ir = reg.get<components::ImuReading>(imu_e);
  const auto& ij = got[imu].back();
  EXPECT_EQ(ij["linear_acceleration"]["z"].get<double>(), ir.linear_acceleration.Z());
  EXPECT_EQ(ij["angular_velocity"]["x"].get<double>(), ir.angular_velocity.X());
  EXPECT_EQ(ij["orientation"]["w"].get<double>(), ir.orientation.W());
  // Every field, as a JSON tree of the reading reads (the feeds write their text directly).
  auto v3 = [](const ignition::math::Vector3d& v) {
    return nlohmann::json{{"x", v.X()}, {"y", v.Y()}, {"z", v.Z()}};
  };
  const nlohmann::json imu_tree = {
      {"orientation",
       {{"x", ir.orientation.X()}, {"y", ir.orientation.Y()}, {"z", ir.orientation.Z()},
        {"w", ir.orientation.W()}}},
      {"angular_velocity", v3(ir.angular_velocity)},
      {"linear_acceleration", v3(ir.linear_acceleration)}};
  EXPECT_EQ(ij, imu_tree);
  // The first sample, at rest: a zero is still a JSON float, as the tree printed it ("0.0").
  EXPECT_EQ(got[imu].front()["angular_velocity"]["x"], 0.0);
  EXPECT_TRUE(got[imu].front()["angular_velocity"]["x"].is_number_float());
  const ecs::Entity mag_e = entity("x3_mission::x3::base_link::magnetometer");
  const auto& mr = reg.get<components::MagnetometerReading>(mag_e);
  EXPECT_EQ(got[reg.get<components::SensorTopic>(mag_e).topic].back(),
            (nlohmann::json{{"field_tesla", v3(mr.field)}}));
  const ecs::Entity baro_e = entity("x3_mission::x3::base_link::air_pressure");
  const auto& pr = reg.get<components::AirPressureReading>(baro_e);
  EXPECT_EQ(got[reg.get<components::SensorTopic>(baro_e).topic].back(),
            (nlohmann::json{{"pressure", pr.pressure}, {"variance", pr.variance}}));
  // The climb: GNSS altitude grows; the fault's second without a fix is null.
  const auto& nr = reg.get<components::NavSatReading>(entity("x3_mission::x3::base_link::navsat"));
  EXPECT_EQ(got[navsat].back()["altitude"].get<double>(), nr.altitude);
  EXPECT_EQ(got[navsat].back(),
            (nlohmann::json{{"fix", nr.fix},
                            {"latitude_deg", nr.latitude_deg},
                            {"longitude_deg", nr.longitude_deg},
                            {"altitude", nr.altitude},
                            {"velocity_east", nr.velocity_enu.X()},
                            {"velocity_north", nr.velocity_enu.Y()},
                            {"velocity_up", nr.velocity_enu.Z()}}));
  EXPECT_GT(nr.altitude, got[navsat].front()["altitude"].get<double>() + 1);
  int no_fix = 0;
  for (const auto& j : got[navsat]) {
    if (!j["fix"].get<bool>()) {
      ++no_fix;
      EXPECT_TRUE(j["altitude"].is_null());
    }
  }
  EXPECT_GT(no_fix, 0);
  // The battery drains: charge falls, the last message is the component.
  const auto& b = reg.get<components::Battery>(x3);
  EXPECT_EQ(got[battery].back()["charge"].get<double>(), b.charge);
  EXPECT_EQ(got[battery].back()["percentage"].get<double>(), b.percentage);
  EXPECT_EQ(got[battery].back()["voltage"].get<double>(), b.voltage);
  EXPECT_LT(b.charge, got[battery].front()["charge"].get<double>());
  // Every field, as a JSON tree of the component reads (the feed writes its text directly).
  const nlohmann::json battery_tree = {
      {"voltage", b.voltage},   {"open_circuit_voltage", b.open_circuit_voltage},
      {"current", b.current},   {"charge", b.charge},
      {"capacity", b.capacity}, {"percentage", b.percentage},
      {"power", b.power},       {"energy_used", b.energy_used},
      {"empty", b.empty},       {"draining", b.draining},
      {"charging", b.charging}};
  EXPECT_EQ(got[battery].back(), battery_tree);
  // The mission: taking off (or on to its first waypoint), target and distance as the component.
  const auto& ms = reg.get<components::MissionState>(x3);
  EXPECT_EQ(got[mission].back()["phase"], components::mission_phase_name(ms.phase));
  EXPECT_EQ(got[mission].back()["distance"].get<double>(), ms.distance);
  EXPECT_EQ(got[mission].back()["waypoint_count"].get<int>(), ms.waypoint_count);
  EXPECT_GT(got[mission].size(), 100u);  // the distance changes as it climbs
  const nlohmann::json mission_tree = {
      {"phase", components::mission_phase_name(ms.phase)},
      {"item", ms.item},
      {"waypoint", ms.waypoint},
      {"waypoint_count", ms.waypoint_count},
      {"target", {{"x", ms.target.X()}, {"y", ms.target.Y()}, {"z", ms.target.Z()}}},
      {"distance", ms.distance},
      {"tracking_error", ms.tracking_error},
      {"max_tracking_error", ms.max_tracking_error},
      {"flight_time", ms.flight_time},
      {"reason", ms.reason}};
  EXPECT_EQ(got[mission].back(), mission_tree);
  // Strings escaped as JSON needs: quotes, backslashes, control characters and UTF-8 read back.
  for (const std::string& reason :
       {std::string("wind \"gusts\" over C:\\field"), std::string("line\nbreak\ttab"),
        std::string("d\xc3\xa9rive \xe2\x86\x92 0")}) {
    reg.get<components::MissionState>(x3).reason = reason;
    std::string text;
    StepContext again;
    again.sim_time = runner.info().sim_time;
    model.step(
        reg, again, [](std::uint32_t) { return true; },
        [&](Message&& m) {
          if (model.channels()[m.channel - 1].topic == mission) text = m.data;
        });
    ASSERT_FALSE(text.empty()) << reason;
    EXPECT_EQ(nlohmann::json::parse(text)["reason"].get<std::string>(), reason);
  }
  EXPECT_NE(ms.phase, components::MissionPhase::kIdle);
  // Rotor speeds and commands: four, as the components.
  const auto& rv = reg.get<components::RotorVelocities>(x3);
  ASSERT_EQ(got[rotors].back()["velocity"].size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(got[rotors].back()["velocity"][k].get<double>(), rv.velocity[k]);
    EXPECT_EQ(got[commands].back()["velocity"][k].get<double>(),
              reg.get<components::ActuatorCommands>(x3).velocity[k]);
  }
  EXPECT_GT(rv.velocity[0], 100);
  // Faults: none, the GNSS loss at 1 s, its end at 2 s.
  const auto& faults = got["/world/x3_mission/faults"];
  const auto& log = reg.get<components::FaultLog>(runner.world()).events;
  ASSERT_EQ(faults.size(), 3u);
  ASSERT_EQ(log.size(), 2u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(faults[k]["count"], k);
  EXPECT_EQ(faults[2]["events"][0]["description"].get<std::string>(), log[0].description);
  EXPECT_EQ(faults[2]["events"][1]["description"].get<std::string>(), log[1].description);
  EXPECT_NEAR(faults[2]["events"][0]["time"].get<double>(), 1.0, 0.0015);
  EXPECT_TRUE(log[1].description.starts_with("end of "));
}

}  // namespace
}  // namespace kestrel::exports
