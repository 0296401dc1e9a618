// Rendering sensors against analytic truth: planar depth on a wall, back-projection through
// camera_info, the rpy composition order by wall colour, clip semantics, noise statistics,
// thread-count independence, topics and the loud configure checks.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "kestrel/components/camera.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;
using testing::TestWorld;

// A static box model `name` at `pose` with ambient colour `rgb` (the scene's ambient is white
// and there are no lights, so a pixel that sees it has exactly that colour).
std::string wall(const std::string& name, const std::string& pose, const std::string& size,
                 const std::string& rgb = "0.5 0.5 0.5") {
  return "<model name='" + name + "'><static>true</static><pose>" + pose +
         "</pose><link name='l'><visual name='v'><geometry><box><size>" + size +
         "</size></box></geometry><material><ambient>" + rgb + " 1</ambient><diffuse>" + rgb +
         " 1</diffuse></material></visual></link></model>";
}

std::string world(const std::string& sensor, const std::string& sensor_pose,
                  const std::string& extra, const std::string& camera_pose = "0 0 0 0 0 0") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.01</max_step_size></physics>
    <scene><ambient>1 1 1 1</ambient><background>0 0 0 1</background></scene>)" +
         extra + "<model name='cam'><static>true</static><pose>" + camera_pose +
         "</pose><link name='l'>" + sensor.substr(0, sensor.find('>') + 1) + "<pose>" +
         sensor_pose + "</pose>" + sensor.substr(sensor.find('>') + 1) +
         "</link></model></world></sdf>";
}

std::string camera(const std::string& type, const std::string& camera_body,
                   const std::string& extra = "") {
  return "<sensor name='s' type='" + type + "'><update_rate>10</update_rate>" + extra + "<camera>" +
         camera_body + "</camera></sensor>";
}

const char* kSmall =
    "<horizontal_fov>1.2</horizontal_fov><image><width>64</width><height>48</height></image>"
    "<clip><near>0.1</near><far>100</far></clip>";

struct Frame {
  explicit Frame(const std::string& sdf, unsigned threads = 0) : w(sdf) {
    w.r().set<c::RenderSettings>(w.runner->world(), {true, threads});
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    w.start(false);
    w.step(10);  // 0.1 s: the first frame at 10 Hz
  }
  const c::CameraReading& reading() { return w.r().get<c::CameraReading>(w.find("w::cam::l::s")); }
  std::vector<float> depth(const c::Image& img) {
    std::vector<float> d(img.width * img.height);
    std::memcpy(d.data(), img.data.data(), 4 * d.size());
    return d;
  }
  TestWorld w;
};

TEST(DepthCamera, ReadsThePlanarDistanceOfAWallOnEveryPixel) {
  Frame run(world(camera("depth_camera", kSmall), "0 0 0 0 0 0",
                  wall("wall", "5.5 0 0 0 0 0", "1 40 40")));
  const auto& x = run.reading();
  ASSERT_EQ(x.sequence, 1u);
  EXPECT_EQ(x.image.format, c::PixelFormat::kRFloat32);
  ASSERT_EQ(x.image.width, 64u);
  for (float d : run.depth(x.image)) ASSERT_NEAR(d, 5.0, 1e-4);  // planar, not ray length
  // Points: x is the depth; the corner pixel's ray goes left and up.
  EXPECT_NEAR(x.points[0], 5.0, 1e-4);
  EXPECT_GT(x.points[1], 0);
  EXPECT_GT(x.points[2], 0);
}

TEST(DepthCamera, ClipRangeGivesInfinities) {
  // Beyond far along the ray (Gazebo compares the ray length): the axis sees the wall at 5 m
  // (within far 5.5), the corners' rays are longer than 5.5 m: +inf.
  Frame far(world(camera("depth_camera",
                         "<horizontal_fov>1.2</horizontal_fov><image><width>64</width><height>48"
                         "</height></image><clip><near>0.1</near><far>5.5</far></clip>"),
                  "0 0 0 0 0 0", wall("wall", "5.5 0 0 0 0 0", "1 40 40")));
  const auto d = far.depth(far.reading().image);
  EXPECT_NEAR(d[24 * 64 + 32], 5.0, 1e-4);
  EXPECT_EQ(d[0], std::numeric_limits<float>::infinity());
  // Nearer than near: -inf. Nothing at all: +inf.
  Frame near(world(camera("depth_camera", kSmall), "0 0 0 0 0 0",
                   wall("wall", "0.5 0 0 0 0 0", "0.9 40 40")));
  for (float v : near.depth(near.reading().image))
    ASSERT_EQ(v, -std::numeric_limits<float>::infinity());
  Frame sky(world(camera("depth_camera", kSmall), "0 0 0 0 0 0", ""));
  for (float v : sky.depth(sky.reading().image))
    ASSERT_EQ(v, std::numeric_limits<float>::infinity());
}

TEST(DepthCamera, BackProjectionThroughCameraInfoLandsOnThePlanes) {
  // A wall turned 30° about z and the floor 1 m below the camera, pitched down 0.3 rad.
  const double yaw = std::numbers::pi / 6;
  Frame run(world(camera("depth_camera",
                         "<horizontal_fov>1.5</horizontal_fov><image><width>80</width><height>60"
                         "</height></image><clip><near>0.1</near><far>50</far></clip>"),
                  "0 0 0 0 0.3 0",
                  wall("wall", "4 0 0 0 0 0.5235987755982988", "0.2 30 30") +
                      wall("floor", "0 0 -1.05 0 0 0", "60 60 0.1"),
                  "0 0 0 0 0 0"));
  const auto& x = run.reading();
  const auto d = run.depth(x.image);
  const auto& K = x.info;
  const Pose3d X_WC(0, 0, 0, 0, 0.3, 0);
  const Vector3d wall_n(std::cos(yaw), std::sin(yaw), 0);  // the wall's -x face at 3.9 m along n
  const double wall_offset = Vector3d(4, 0, 0).Dot(wall_n) - 0.1;
  std::size_t on_wall = 0, on_floor = 0;
  for (std::uint32_t j = 0; j < K.height; ++j) {
    for (std::uint32_t i = 0; i < K.width; ++i) {
      const double z = d[j * K.width + i];
      ASSERT_TRUE(std::isfinite(z)) << i << "," << j;
      // Pixel (i, j) is centred at (i + 0.5, j + 0.5); camera frame x forward, y left, z up.
      const Vector3d p_C(z, -(i + 0.5 - K.cx) / K.fx * z, -(j + 0.5 - K.cy) / K.fy * z);
      const Vector3d p_W = X_WC.Pos() + X_WC.Rot().RotateVector(p_C);
      const double to_wall = std::abs(p_W.Dot(wall_n) - wall_offset);
      const double to_floor = std::abs(p_W.Z() + 1.0);
      ASSERT_LT(std::min(to_wall, to_floor), 1e-3) << "pixel " << i << "," << j << " at " << p_W;
      (to_wall < to_floor ? on_wall : on_floor)++;
    }
  }
  EXPECT_GT(on_wall, 500u);
  EXPECT_GT(on_floor, 500u);
}

// A closed room of six coloured walls around the origin.
std::string room() {
  return wall("px", "5 0 0 0 0 0", "0.2 20 20", "1 0 0") +
         wall("nx", "-5 0 0 0 0 0", "0.2 20 20", "0 1 0") +
         wall("py", "0 5 0 0 0 0", "20 0.2 20", "0 0 1") +
         wall("ny", "0 -5 0 0 0 0", "20 0.2 20", "1 1 0") +
         wall("pz", "0 0 5 0 0 0", "20 20 0.2", "1 1 1") +
         wall("nz", "0 0 -5 0 0 0", "20 20 0.2", "0 1 1");
}

std::array<std::uint8_t, 3> centre_colour(const std::string& sensor_pose,
                                          const std::string& camera_pose = "0 0 0 0 0 0") {
  Frame run(world(camera("camera", kSmall), sensor_pose, room(), camera_pose));
  const auto& img = run.reading().image;
  const std::size_t p = 3 * (24 * 64 + 32);
  return {img.data[p], img.data[p + 1], img.data[p + 2]};
}

TEST(Camera, RpyCompositionOrderBySeenWallColour) {
  using A = std::array<std::uint8_t, 3>;
  EXPECT_EQ(centre_colour("0 0 0 0 0 0"), (A{255, 0, 0}));               // +x
  EXPECT_EQ(centre_colour("0 0 0 0 0 1.5707963"), (A{0, 0, 255}));       // yaw: +y
  EXPECT_EQ(centre_colour("0 0 0 0 -1.5707963 0"), (A{255, 255, 255}));  // pitch up: +z
  EXPECT_EQ(centre_colour("0 0 0 0 1.5707963 0"), (A{0, 255, 255}));     // pitch down: -z
  // Roll then yaw (fixed axes: R = Rz·Ry·Rx): the optical axis turns to +y. The other order
  // would send it to +z (white).
  EXPECT_EQ(centre_colour("0 0 0 1.5707963 0 1.5707963"), (A{0, 0, 255}));
  // Pitch up 30° then yaw 180°: looking along -x and up 30°, the -x wall (green).
  EXPECT_EQ(centre_colour("0 0 0 0 -0.5235988 3.1415927"), (A{0, 255, 0}));
  // The model's pose composes with the sensor's: model yawed 90°, sensor yawed 90°: -x.
  EXPECT_EQ(centre_colour("0 0 0 0 0 1.5707963", "0 0 0 0 0 1.5707963"), (A{0, 255, 0}));
}

TEST(Camera, InfoAndTopicsAsGazebo) {
  Frame run(world(camera("camera",
                         "<horizontal_fov>1.047</horizontal_fov><image><width>640"
                         "</width><height>480</height></image>"),
                  "0 0 0 0 0 0", room()));
  const auto& x = run.reading();
  EXPECT_DOUBLE_EQ(x.info.fx, 320 / std::tan(1.047 / 2));
  EXPECT_DOUBLE_EQ(x.info.fy, x.info.fx);
  EXPECT_DOUBLE_EQ(x.info.cx, 320);
  EXPECT_DOUBLE_EQ(x.info.cy, 240);
  EXPECT_EQ(x.image.format, c::PixelFormat::kRgbInt8);
  EXPECT_EQ(x.image.data.size(), 640u * 480 * 3);
  EXPECT_EQ(x.frame_id, "cam::l::s");
  const auto& t = run.w.r().get<c::CameraTopics>(run.w.find("w::cam::l::s"));
  EXPECT_EQ(t.image, "/world/w/model/cam/link/l/sensor/s/image");
  EXPECT_EQ(t.camera_info, "/world/w/model/cam/link/l/sensor/s/camera_info");
  EXPECT_TRUE(t.points.empty());
}

TEST(RgbdCamera, PublishesImageDepthPointsAndInfoUnderOneTopic) {
  Frame run(world(camera("rgbd_camera", kSmall, "<topic>/rgbd</topic>"), "0 0 0 0 0 0", room()));
  const auto& x = run.reading();
  const auto& t = run.w.r().get<c::CameraTopics>(run.w.find("w::cam::l::s"));
  EXPECT_EQ(t.image, "/rgbd/image");
  EXPECT_EQ(t.depth_image, "/rgbd/depth_image");
  EXPECT_EQ(t.points, "/rgbd/points");
  EXPECT_EQ(t.camera_info, "/rgbd/camera_info");
  EXPECT_EQ(x.image.format, c::PixelFormat::kRgbInt8);
  EXPECT_EQ(x.depth.format, c::PixelFormat::kRFloat32);
  EXPECT_NEAR(run.depth(x.depth)[24 * 64 + 32], 4.9, 1e-4);
  EXPECT_EQ(x.image.data[3 * (24 * 64 + 32)], 255);  // red
  EXPECT_EQ(x.point_rgb[3 * (24 * 64 + 32)], 255);
}

TEST(Camera, GreyFormatsAndOpticalFrame) {
  Frame run(world(
      camera("camera", std::string(kSmall) + "<optical_frame_id>cam_optical</optical_frame_id>"),
      "0 0 0 0 0 0", room()));
  EXPECT_EQ(run.reading().frame_id, "cam_optical");
  Frame grey(world(
      camera("camera", "<image><width>8</width><height>6</height><format>L8</format></image>"),
      "0 0 0 0 0 0", room()));
  const auto& g = grey.reading().image;
  EXPECT_EQ(g.format, c::PixelFormat::kLInt8);
  EXPECT_EQ(g.data.size(), 48u);
  EXPECT_EQ(g.data[3 * 8 + 4], static_cast<std::uint8_t>(0.299 * 255 + 0.5));  // red wall
}

TEST(Camera, OutputIsTheSameWhateverTheThreadCount) {
  const std::string sdf =
      world(camera("rgbd_camera",
                   "<horizontal_fov>1.3</horizontal_fov><image><width>97</width><height>61</height>"
                   "</image><noise><type>gaussian</type><mean>0</mean><stddev>0.02</stddev></noise>"
                   "<distortion><k1>-0.2</k1><p1>0.001</p1></distortion>"),
            "0 0 0 0.1 0.2 0.3",
            room() +
                "<light type='spot' name='spot'><pose>0 0 3 0 0 0</pose><direction>1 0 -1"
                "</direction><diffuse>1 1 1 1</diffuse><spot><inner_angle>0.3</inner_angle>"
                "<outer_angle>0.8</outer_angle><falloff>1</falloff></spot></light>");
  Frame one(sdf, 1), three(sdf, 3);
  EXPECT_EQ(one.reading().image.data, three.reading().image.data);
  EXPECT_EQ(one.reading().depth.data, three.reading().depth.data);
  EXPECT_EQ(one.reading().points, three.reading().points);
}

TEST(DepthCamera, GaussianNoiseStatistics) {
  Frame run(world(camera("depth_camera",
                         "<horizontal_fov>1.2</horizontal_fov><image><width>200</width><height>150"
                         "</height></image><noise><type>gaussian</type><mean>0.1</mean><stddev>0.05"
                         "</stddev></noise>"),
                  "0 0 0 0 0 0", wall("wall", "5.5 0 0 0 0 0", "1 40 40")));
  const auto d = run.depth(run.reading().image);
  double sum = 0, sq = 0;
  for (float v : d) sum += v - 5.0;
  const double mean = sum / d.size();
  for (float v : d) sq += (v - 5.0 - mean) * (v - 5.0 - mean);
  const double sd = std::sqrt(sq / (d.size() - 1));
  // 30 000 samples: the mean within 5 standard errors, the deviation within 3 %.
  EXPECT_NEAR(mean, 0.1, 5 * 0.05 / std::sqrt(30000.0));
  EXPECT_NEAR(sd, 0.05, 0.0015);
}

TEST(Camera, ConfigureWarnsAboutIntrinsicsAndBlindCameras) {
  {
    testing::LogCapture log;
    Frame run(world(camera("camera",
                           "<horizontal_fov>1.047</horizontal_fov><image><width>640</width><height>"
                           "480</height></image><lens><intrinsics><fx>277</fx><fy>277</fy><cx>160"
                           "</cx><cy>120</cy><s>0</s></intrinsics></lens>"),
                    "0 0 0 0 0 0", room()));
    EXPECT_THAT(log.lines(), ::testing::Contains(::testing::HasSubstr(
                                 "camera cam::l::s: <lens><intrinsics> (fx 277, fy 277, cx 160, "
                                 "cy 120) disagree with <horizontal_fov> 1.047")));
    EXPECT_DOUBLE_EQ(run.reading().info.fx, 277);  // rendered and published as given
  }
  {
    testing::LogCapture log;
    Frame run(world(camera("camera", kSmall), "0 0 0 0 -1.5 0", wall("w", "5 0 0 0 0 0", "1 1 1")));
    EXPECT_THAT(log.lines(), ::testing::Contains(::testing::HasSubstr(
                                 "camera cam::l::s sees nothing from its pose — pointing at the "
                                 "sky?")));
  }
  {
    testing::LogCapture log;
    Frame run(world(camera("depth_camera",
                           "<image><width>32</width><height>24</height></image><clip><near>0.1"
                           "</near><far>2</far></clip>"),
                    "0 0 0 0 0 0", wall("w", "5.5 0 0 0 0 0", "1 40 40")));
    EXPECT_THAT(log.lines(), ::testing::Contains(::testing::HasSubstr(
                                 "depth camera cam::l::s: its clip range [0.1, 2] m excludes "
                                 "everything it sees")));
  }
}

TEST(Camera, BadParametersAreErrors) {
  auto fails = [](const std::string& body, const std::string& what) {
    TestWorld w(world(camera("camera", body), "0 0 0 0 0 0", ""));
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    try {
      w.start(false);
      ADD_FAILURE() << "no error for " << body;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(what));
    }
  };
  fails("<image><format>BAYER_RGGB8</format></image>", "<format> 'BAYER_RGGB8' is not supported");
  fails("<clip><near>2</near><far>1</far></clip>", "near (2.000000) must be less than far");
  fails("<horizontal_fov>4</horizontal_fov>", "<horizontal_fov> must be in (0, pi)");
  // (a near-miss such as <imag> is the loader's error first: "did you mean <image>?")
  fails("<frobnicate/>", "unknown parameter <frobnicate>");
}

// Three labelled boxes side by side (labels 3, 7 and 7) and an unlabelled floor below.
struct Segmented {
  explicit Segmented(const std::string& type)
      : w(world(camera("segmentation",
                       std::string(kSmall) + "<segmentation_type>" + type + "</segmentation_type>"),
                "0 0 0 0 0 0",
                wall("a", "5 1.2 0 0 0 0", "1 1 1") + wall("b", "5 0 0 0 0 0", "1 1 1") +
                    wall("c", "5 -1.2 0 0 0 0", "1 1 1") +
                    wall("floor", "0 0 -2 0 0 0", "40 40 0.1"))) {
    int labels[] = {3, 7, 7};
    const char* names[] = {"w::a::l::v", "w::b::l::v", "w::c::l::v"};
    for (int k = 0; k < 3; ++k) {
      w.runner->add_system(
          make_label_system(), w.find(names[k]),
          Element::parse("<plugin><label>" + std::to_string(labels[k]) + "</label></plugin>"),
          "kestrel::systems::Label", "test");
    }
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    w.start(false);
    w.step(10);
  }
  const c::CameraReading& reading() { return w.r().get<c::CameraReading>(w.find("w::cam::l::s")); }
  // labels map and coloured map at the pixel that sees world point (5, y, z) on the boxes' face
  std::array<std::uint8_t, 6> at(double y, double z) {
    const auto& x = reading();
    const auto i = static_cast<std::uint32_t>(x.info.cx - y / 4.5 * x.info.fx);
    const auto j = static_cast<std::uint32_t>(x.info.cy - z / 4.5 * x.info.fy);
    const std::size_t p = 3 * (std::size_t(j) * x.info.width + i);
    return {x.labels.data[p], x.labels.data[p + 1], x.labels.data[p + 2],
            x.image.data[p],  x.image.data[p + 1],  x.image.data[p + 2]};
  }
  TestWorld w;
};

std::array<std::uint8_t, 3> gazebo_colour(std::int64_t label) {
  std::default_random_engine gen(static_cast<std::default_random_engine::result_type>(label));
  std::uniform_int_distribution<int> d(0, 255);
  const int r = d(gen), g = d(gen), b = d(gen);
  return {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b)};
}

TEST(SegmentationCamera, SemanticLabelsAreTheGeometrysLabels) {
  Segmented s("semantic");
  using A = std::array<std::uint8_t, 6>;
  const auto c3 = gazebo_colour(3), c7 = gazebo_colour(7);
  EXPECT_EQ(s.at(1.2, 0), (A{3, 3, 3, c3[0], c3[1], c3[2]}));
  EXPECT_EQ(s.at(0, 0), (A{7, 7, 7, c7[0], c7[1], c7[2]}));
  EXPECT_EQ(s.at(-1.2, 0), (A{7, 7, 7, c7[0], c7[1], c7[2]}));
  EXPECT_EQ(s.at(0, 1.5), (A{0, 0, 0, 0, 0, 0}));  // sky: background label 0, black
  const auto& t = s.w.r().get<c::CameraTopics>(s.w.find("w::cam::l::s"));
  EXPECT_EQ(t.image, "/world/w/model/cam/link/l/sensor/s/segmentation/colored_map");
  EXPECT_EQ(t.labels_map, "/world/w/model/cam/link/l/sensor/s/segmentation/labels_map");
  EXPECT_EQ(t.camera_info, "/world/w/model/cam/link/l/sensor/s/segmentation/camera_info");
}

TEST(SegmentationCamera, PanopticCountsInstancesPerLabel) {
  Segmented s("panoptic");
  using A = std::array<std::uint8_t, 6>;
  const auto a = gazebo_colour(3 * 65536), b = gazebo_colour(7 * 65536),
             c = gazebo_colour(7 * 65536 + 1);
  EXPECT_EQ(s.at(1.2, 0), (A{0, 0, 3, a[0], a[1], a[2]}));   // first of label 3
  EXPECT_EQ(s.at(0, 0), (A{0, 0, 7, b[0], b[1], b[2]}));     // first of label 7
  EXPECT_EQ(s.at(-1.2, 0), (A{1, 0, 7, c[0], c[1], c[2]}));  // second of label 7
}

TEST(RenderingSensors, NoRenderProducesNothing) {
  TestWorld w(world(camera("camera", kSmall), "0 0 0 0 0 0", room()));
  w.r().set<c::RenderSettings>(w.runner->world(), {false, 1});
  w.add(make_rendering_system(), "kestrel::systems::Sensors");
  w.start(false);
  w.step(20);
  EXPECT_EQ(w.r().get<c::CameraReading>(w.find("w::cam::l::s")).sequence, 0u);
}

// gz-sensors' bounding box scene (its boundingbox_camera integration test): unit boxes ahead of
// a 320×240 camera with a 90° field of view — "front" at 2 m (label 2), "occluded" at (4, 1, 0)
// (label 1) half behind it and "hidden" at 5 m (label 2) wholly behind it; pixel (i, j) sees
// u = i + 0.5 = 160 − 160·y/x, v = j + 0.5 = 120 − 160·z/x.
struct Boxed {
  explicit Boxed(const std::string& box_type, const std::string& extra = "",
                 const std::string& camera_pose = "0 0 0 0 0 0")
      : w(world(camera("boundingbox_camera",
                       "<horizontal_fov>1.5707963267948966</horizontal_fov><image><width>320"
                       "</width><height>240</height></image><clip><near>0.1</near><far>1000"
                       "</far></clip><box_type>" +
                           box_type + "</box_type>"),
                "0 0 0 0 0 0", extra, camera_pose)) {}
  void label(const std::string& visual, int value) {
    w.runner->add_system(
        make_label_system(), w.find(visual),
        Element::parse("<plugin><label>" + std::to_string(value) + "</label></plugin>"),
        "kestrel::systems::Label", "test");
  }
  void label_gazebo_boxes() {  // kGazeboBoxes' labels
    label("w::front::l::v", 2);
    label("w::occluded::l::v", 1);
    label("w::hidden::l::v", 2);
  }
  const c::CameraReading& run() {
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    w.start(false);
    w.step(10);
    return w.r().get<c::CameraReading>(w.find("w::cam::l::s"));
  }
  TestWorld w;
};

const std::string kGazeboBoxes = wall("front", "2 0 0 0 0 0", "1 1 1") +
                                 wall("occluded", "4 1 0 0 0 0", "1 1 1") +
                                 wall("hidden", "5 0 0 0 0 0", "1 1 1");

// First and last pixel whose centre lies in the projection [lo, hi] of an edge.
double first_px(double lo) { return std::ceil(lo - 0.5); }
double last_px(double hi) { return std::floor(hi - 0.5); }

TEST(BoundingBoxCamera, VisibleBoxesAreThePixelsSeenOfEachLabelledModel) {
  Boxed b("2d", kGazeboBoxes);
  b.label_gazebo_boxes();
  const auto& x = b.run();
  ASSERT_EQ(x.sequence, 1u);
  ASSERT_EQ(x.boxes_2d.size(), 2u);  // "hidden" is not seen: no box
  // Model names descending (gz-rendering's order): occluded, then front.
  const auto& occluded = x.boxes_2d[0];
  const auto& front = x.boxes_2d[1];
  EXPECT_EQ(occluded.label, 1);
  EXPECT_EQ(front.label, 2);
  // front: its face at x = 1.5 spans |y|, |z| ≤ 0.5.
  EXPECT_EQ(front.min_x, first_px(160 - 160 * 0.5 / 1.5));
  EXPECT_EQ(front.max_x, last_px(160 + 160 * 0.5 / 1.5));
  EXPECT_EQ(front.min_y, first_px(120 - 160 * 0.5 / 1.5));
  EXPECT_EQ(front.max_y, last_px(120 + 160 * 0.5 / 1.5));
  // occluded: seen from its left edge (y = 1.5 at x = 3.5) to the front box's left edge.
  EXPECT_EQ(occluded.min_x, first_px(160 - 160 * 1.5 / 3.5));
  EXPECT_EQ(occluded.max_x, last_px(160 - 160 * 0.5 / 1.5));
  EXPECT_EQ(occluded.min_y, first_px(120 - 160 * 0.5 / 3.5));
  EXPECT_EQ(occluded.max_y, last_px(120 + 160 * 0.5 / 3.5));
  // gz-sensors' own expectations (±2 px): centres 98/159, sizes 15×45 and 105×105.
  EXPECT_NEAR((occluded.min_x + occluded.max_x) / 2, 98, 2);
  EXPECT_NEAR(occluded.max_x - occluded.min_x, 15, 2);
  EXPECT_NEAR(occluded.max_y - occluded.min_y, 45, 2);
  EXPECT_NEAR(front.max_x - front.min_x, 105, 2);
  EXPECT_NEAR(front.max_y - front.min_y, 105, 2);
  // The image: RGB, the boxes' edges drawn in green on it.
  EXPECT_EQ(x.image.format, c::PixelFormat::kRgbInt8);
  const auto px = [&](int i, int j) {
    const std::uint8_t* p = &x.image.data[3 * (std::size_t(j) * 320 + i)];
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  EXPECT_EQ(px(static_cast<int>(front.min_x), 100), (std::array<int, 3>{0, 255, 0}));
  EXPECT_EQ(px(150, static_cast<int>(front.min_y)), (std::array<int, 3>{0, 255, 0}));
  EXPECT_NE(px(150, 100), (std::array<int, 3>{0, 255, 0}));  // inside: the box's colour
  const auto& t = b.w.r().get<c::CameraTopics>(b.w.find("w::cam::l::s"));
  EXPECT_EQ(t.boxes, "/world/w/model/cam/link/l/sensor/s/boundingbox");
  EXPECT_FALSE(t.boxes_3d);
  EXPECT_EQ(t.image, "/world/w/model/cam/link/l/sensor/s/boundingbox_image");
  EXPECT_EQ(t.camera_info, "/world/w/model/cam/link/l/sensor/s/camera_info");
}

TEST(BoundingBoxCamera, FullBoxesAreTheProjectionOfTheWholeObject) {
  Boxed b("full_2d", kGazeboBoxes);
  b.label_gazebo_boxes();
  const auto& x = b.run();
  ASSERT_EQ(x.boxes_2d.size(), 2u);  // a hidden object has no full box either
  const auto& occluded = x.boxes_2d[0];
  const auto& front = x.boxes_2d[1];
  // Corners of the projected vertices (not pixel indices): the near face of "front"; the
  // nearest left corner and the farthest right corner of "occluded".
  EXPECT_NEAR(front.min_x, 160 - 160 * 0.5 / 1.5, 1e-3);
  EXPECT_NEAR(front.max_x, 160 + 160 * 0.5 / 1.5, 1e-3);
  EXPECT_NEAR(front.min_y, 120 - 160 * 0.5 / 1.5, 1e-3);
  EXPECT_NEAR(front.max_y, 120 + 160 * 0.5 / 1.5, 1e-3);
  EXPECT_NEAR(occluded.min_x, 160 - 160 * 1.5 / 3.5, 1e-3);
  EXPECT_NEAR(occluded.max_x, 160 - 160 * 0.5 / 4.5, 1e-3);
  EXPECT_NEAR(occluded.min_y, 120 - 160 * 0.5 / 3.5, 1e-3);
  EXPECT_NEAR(occluded.max_y, 120 + 160 * 0.5 / 3.5, 1e-3);
  // gz-sensors: the full box of the occluded object is wider than what is seen of it (51 vs 15).
  EXPECT_NEAR(occluded.max_x - occluded.min_x, 51, 2);
  EXPECT_NEAR(front.max_x - front.min_x, 108, 2);
}

TEST(BoundingBoxCamera, UnlabelledVisualsHideButHaveNoBox) {
  Boxed b("2d", wall("wall", "2 0 0 0 0 0", "1 1 1") + wall("box", "4 1 0 0 0 0", "1 1 1"));
  b.label("w::box::l::v", 1);
  const auto& x = b.run();
  ASSERT_EQ(x.boxes_2d.size(), 1u);
  EXPECT_EQ(x.boxes_2d[0].label, 1);
  EXPECT_EQ(x.boxes_2d[0].max_x, last_px(160 - 160 * 0.5 / 1.5));  // hidden by the wall
}

TEST(BoundingBoxCamera, ThreeDBoxesArePoseAndSizeInTheViewFrame) {
  // gz-sensors' 3D case: a unit box at 2 m turned by q = (1, 0.5, 0.5, 0.2) normalised.
  const auto q = ignition::math::Quaterniond(1, 0.5, 0.5, 0.2).Normalized();
  const Vector3d rpy = q.Euler();
  char pose[160];
  std::snprintf(pose, sizeof pose, "2 0 0 %.17g %.17g %.17g", rpy.X(), rpy.Y(), rpy.Z());
  Boxed b("3d", wall("box", pose, "1 1 1"));
  b.label("w::box::l::v", 1);
  const auto& x = b.run();
  ASSERT_EQ(x.boxes_3d.size(), 1u);
  const auto& box = x.boxes_3d[0];
  EXPECT_EQ(box.label, 1);
  EXPECT_NEAR(box.center.X(), 0, 1e-6);
  EXPECT_NEAR(box.center.Y(), 0, 1e-6);
  EXPECT_NEAR(box.center.Z(), -2, 1e-6);
  EXPECT_NEAR(box.size.X(), 1, 1e-6);
  EXPECT_NEAR(box.size.Y(), 1, 1e-6);
  EXPECT_NEAR(box.size.Z(), 1, 1e-6);
  // gz-sensors' expected orientation, sign included.
  EXPECT_NEAR(box.orientation.X(), 0.322329, 1e-5);
  EXPECT_NEAR(box.orientation.Y(), -0.886405, 1e-5);
  EXPECT_NEAR(box.orientation.Z(), -0.0805823, 1e-5);
  EXPECT_NEAR(box.orientation.W(), -0.322329, 1e-5);
  EXPECT_TRUE(b.w.r().get<c::CameraTopics>(b.w.find("w::cam::l::s")).boxes_3d);
}

TEST(BoundingBoxCamera, ThreeDBoxOfATurnedCamera) {
  // The camera yawed +90° looks along world +y: a 1×2×0.5 box 3 m along +y, 0.5 m up.
  Boxed b("3d", wall("box", "0 3 0.5 0 0 0", "1 2 0.5"), "0 0 0 0 0 1.5707963267948966");
  b.label("w::box::l::v", 4);
  const auto& box = b.run().boxes_3d.at(0);
  EXPECT_NEAR(box.center.X(), 0, 1e-6);    // right
  EXPECT_NEAR(box.center.Y(), 0.5, 1e-6);  // up
  EXPECT_NEAR(box.center.Z(), -3, 1e-6);   // ahead
  EXPECT_NEAR(box.size.Y(), 2, 1e-6);      // the box's own axes
  // World +x is the right of a camera looking along +y: the view frame's +x.
  const Vector3d ax = box.orientation.RotateVector(Vector3d::UnitX);
  EXPECT_NEAR(ax.X(), 1, 1e-6);
  const Vector3d ay = box.orientation.RotateVector(Vector3d::UnitY);
  EXPECT_NEAR(ay.Z(), -1, 1e-6);  // world +y is ahead: view −z
}

// A model of two visuals (two unit cubes side by side, 3 m ahead), labelled as a model: one box.
std::string twin_cubes() {
  auto cube = [](const char* name, const char* y) {
    return std::string("<visual name='") + name + "'><pose>0 " + y +
           " 0 0 0 0</pose><geometry><box><size>1 1 1</size></box></geometry></visual>";
  };
  return "<model name='twins'><static>true</static><pose>3 0 0 0 0 0</pose><link name='l'>" +
         cube("a", "0.5") + cube("b", "-0.5") + "</link></model>";
}

TEST(BoundingBoxCamera, TheVisualsOfAModelMakeOneBox) {
  Boxed two("2d", twin_cubes());
  two.label("w::twins", 5);
  const auto& x = two.run();
  ASSERT_EQ(x.boxes_2d.size(), 1u);
  EXPECT_EQ(x.boxes_2d[0].label, 5);
  EXPECT_EQ(x.boxes_2d[0].min_x, first_px(160 - 160 * 1.0 / 2.5));
  EXPECT_EQ(x.boxes_2d[0].max_x, last_px(160 + 160 * 1.0 / 2.5));
  Boxed three("3d", twin_cubes());
  three.label("w::twins", 5);
  const auto& y = three.run();
  ASSERT_EQ(y.boxes_3d.size(), 1u);
  const auto& box = y.boxes_3d[0];
  EXPECT_NEAR(box.center.X(), 0, 1e-6);
  EXPECT_NEAR(box.center.Y(), 0, 1e-6);
  EXPECT_NEAR(box.center.Z(), -3, 1e-6);
  // The oriented box of both cubes' vertices: 2 m along the view frame's x (world y).
  const Vector3d long_axis = box.orientation.RotateVector(Vector3d::UnitX) * box.size.X() +
                             box.orientation.RotateVector(Vector3d::UnitY) * box.size.Y() +
                             box.orientation.RotateVector(Vector3d::UnitZ) * box.size.Z();
  EXPECT_NEAR(std::abs(long_axis.X()), 2, 1e-6);
  EXPECT_NEAR(std::abs(long_axis.Y()), 1, 1e-6);
  EXPECT_NEAR(std::abs(long_axis.Z()), 1, 1e-6);
}

TEST(BoundingBoxCamera, BadBoxTypeIsAnError) {
  TestWorld w(world(camera("boundingbox_camera", std::string(kSmall) + "<box_type>4d</box_type>"),
                    "0 0 0 0 0 0", ""));
  w.add(make_rendering_system(), "kestrel::systems::Sensors");
  try {
    w.start(false);
    ADD_FAILURE() << "no error for <box_type>4d";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("<box_type> expected 2d"));
  }
}

// A thermal camera (64×48, 60°, far 100 m) before a 310 K box 5 m ahead and a white unheated
// box beside it, under an atmosphere of 296 K with gradient `gradient` [K/m]; scene ambient white,
// no lights (the white box is shaded exactly white).
struct Thermo {
  explicit Thermo(const std::string& format = "L16", double gradient = -0.0065,
                  const std::string& camera_extra = "")
      : w(world(camera("thermal_camera",
                       "<horizontal_fov>1.047</horizontal_fov><image><width>64</width><height>48"
                       "</height><format>" +
                           format + "</format></image><clip><near>0.1</near><far>100</far></clip>" +
                           camera_extra),
                "0 0 0 0 0 0",
                "<atmosphere type='adiabatic'><temperature>296</temperature>"
                "<temperature_gradient>" +
                    std::to_string(gradient) + "</temperature_gradient></atmosphere>" +
                    wall("hot", "5 0 0 0 0 0", "1 1 1") +
                    wall("cool", "5 1.5 0 0 0 0", "1 1 1", "1 1 1"))) {}
  void plugin(std::unique_ptr<System> s, const std::string& entity, const std::string& body,
              const char* name) {
    w.runner->add_system(std::move(s), w.find(entity),
                         Element::parse("<plugin>" + body + "</plugin>"), name, "test");
  }
  const c::CameraReading& run() {
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    w.start(false);
    w.step(10);
    return w.r().get<c::CameraReading>(w.find("w::cam::l::s"));
  }
  // The value at the pixel that sees world point (5 − 0.5, y, z) on a box's near face.
  static double at(const c::CameraReading& x, double y, double z) {
    const auto i = static_cast<std::uint32_t>(x.info.cx - y / 4.5 * x.info.fx);
    const auto j = static_cast<std::uint32_t>(x.info.cy - z / 4.5 * x.info.fy);
    const std::size_t p = std::size_t(j) * x.image.width + i;
    if (x.image.format == c::PixelFormat::kLInt8) return x.image.data[p];
    return x.image.data[2 * p] | (x.image.data[2 * p + 1] << 8);
  }
  TestWorld w;
};

// gz-sim's ambient variation: |gradient| × the view's height at the far clip, 2·far·tan(vfov/2),
// the vertical fov from the aspect ratio in whole numbers (64 / 48 = 1).
double thermal_range(double gradient) {
  return std::fabs(gradient * 2 * 100 * std::tan(1.047 / 2));
}

TEST(ThermalCamera, AHeatSourceReadsItsTemperatureAndTheSkyTheAmbient) {
  Thermo t;
  t.plugin(make_thermal_system(), "w::hot::l::v", "<temperature>310</temperature>",
           "gz::sim::systems::Thermal");
  const auto& x = t.run();
  ASSERT_EQ(x.sequence, 1u);
  EXPECT_EQ(x.image.format, c::PixelFormat::kLInt16);
  EXPECT_EQ(Thermo::at(x, 0, 0), 31000);  // 310 K / 10 mK, on every pixel of the box
  EXPECT_EQ(Thermo::at(x, 0.4, 0.4), 31000);
  // The sky: the coldest of the ambient range; a white unheated surface: its warmest.
  const double range = thermal_range(-0.0065);
  EXPECT_NEAR(Thermo::at(x, 0, 1.5), std::round((296 - range / 2) / 0.01), 1);
  EXPECT_NEAR(Thermo::at(x, 1.5, 0), std::round((296 + range / 2) / 0.01), 1);
  const auto& topics = t.w.r().get<c::CameraTopics>(t.w.find("w::cam::l::s"));
  EXPECT_EQ(topics.image, "/world/w/model/cam/link/l/sensor/s/image");
  EXPECT_EQ(topics.camera_info, "/world/w/model/cam/link/l/sensor/s/camera_info");
}

TEST(ThermalCamera, WithoutAGradientTheBackgroundIsTheAmbient) {
  Thermo t("L16", 0);
  const auto& x = t.run();
  EXPECT_EQ(Thermo::at(x, 0, 1.5), 29600);
  EXPECT_EQ(Thermo::at(x, 0, 0), 29600);  // no Thermal: the box is no heat source
}

TEST(ThermalCamera, EightBitImagesTakeAThreeKelvinResolution) {
  Thermo t("L8");
  t.plugin(make_thermal_system(), "w::hot::l::v", "<temperature>310</temperature>",
           "gz::sim::systems::Thermal");
  const auto& x = t.run();
  EXPECT_EQ(x.image.format, c::PixelFormat::kLInt8);
  EXPECT_EQ(x.image.data.size(), 64u * 48u);
  EXPECT_EQ(Thermo::at(x, 0, 0), 103);  // 310 / 3, rounded
}

TEST(ThermalCamera, ThermalSensorSetsResolutionAndRange) {
  Thermo t;
  t.plugin(make_thermal_system(), "w::hot::l::v", "<temperature>310</temperature>",
           "gz::sim::systems::Thermal");
  t.plugin(make_thermal_sensor_system(), "w::cam::l::s",
           "<resolution>0.1</resolution><min_temp>296</min_temp><max_temp>305</max_temp>",
           "gz::sim::systems::ThermalSensor");
  const auto& x = t.run();
  EXPECT_EQ(Thermo::at(x, 0, 0), 3050);    // 310 K clamped to 305 K, in units of 0.1 K
  EXPECT_EQ(Thermo::at(x, 0, 1.5), 2960);  // the sky (295.6 K) clamped to 296 K
}

TEST(ThermalCamera, GaussianNoiseInUnitsOfTheFullScale) {
  Thermo t("L16", 0, "<noise><type>gaussian</type><mean>0</mean><stddev>0.001</stddev></noise>");
  const auto& x = t.run();
  // Rows above the boxes see only the sky (29600): stddev 0.001 × 65535.
  double sum = 0, sq = 0;
  int n = 0;
  for (std::uint32_t j = 0; j < 10; ++j) {
    for (std::uint32_t i = 0; i < 64; ++i) {
      const std::size_t p = j * 64 + i;
      const double v = (x.image.data[2 * p] | (x.image.data[2 * p + 1] << 8)) - 29600.0;
      sum += v, sq += v * v, ++n;
    }
  }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 0, 4 * 65.535 / std::sqrt(n));
  EXPECT_NEAR(sd, 65.535, 0.1 * 65.535);
}

TEST(ThermalCamera, BadThermalParametersAreErrors) {
  auto fails = [](std::unique_ptr<System> s, const std::string& entity, const std::string& body,
                  const std::string& what) {
    Thermo t;
    try {
      t.plugin(std::move(s), entity, body, "test");
      t.run();
      ADD_FAILURE() << "no error for " << body;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(what));
    }
  };
  fails(make_thermal_system(), "w::hot::l::v", "<heat_signature>duck.png</heat_signature>",
        "<heat_signature> (a texture of temperatures) is not supported");
  fails(make_thermal_system(), "w::hot::l::v", "", "Thermal needs <temperature>");
  fails(make_thermal_sensor_system(), "w::hot::l::v", "<resolution>1</resolution>",
        "ThermalSensor configures a thermal_camera sensor");
  fails(make_thermal_sensor_system(), "w::cam::l::s", "<resolutoin>1</resolutoin>",
        "unknown parameter <resolutoin>");
}

}  // namespace
}  // namespace kestrel::sensors
