// The rendering Sensors system (Gazebo's gz::sim::systems::Sensors): camera, depth_camera,
// rgbd_camera and gpu_lidar/gpu_ray sensors ray-cast into one scene of the world's visuals,
// rendered at each sensor's update_rate whenever the world runs (src/sensors/rendering/README.md).

#include <spdlog/spdlog.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>

#include "kestrel/components/camera.h"
#include "kestrel/components/world.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/camera/camera.h"
#include "sensors/common/sensor_system.h"
#include "sensors/lidar/lidar.h"
#include "sensors/noise/noise.h"
#include "sensors/rendering/boxes.h"
#include "sensors/rendering/checks.h"
#include "sensors/rendering/rendered_scene.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Pose3d;

enum class CameraKind : std::uint8_t {
  kCamera,
  kDepth,
  kRgbd,
  kSegmentation,
  kBoundingBox,
  kThermal
};

// A thermal camera's encoding (gz-sensors' ThermalCameraSensor, gz-sim's Sensors system and
// ign-rendering6's thermal shader; src/sensors/rendering/README.md).
struct ThermalParams {
  double resolution = 0.01;  // [K per unit]
  double ambient = 288.15;   // [K]
  double range = 0;          // ambient variation over the view [K]
  double min_temp = -std::numeric_limits<double>::infinity();
  double max_temp = std::numeric_limits<double>::infinity();
  double max_value = 65535;  // L16; L8: 255
};

struct CameraInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  Pose3d X_LS;
  CameraKind kind = CameraKind::kCamera;
  CameraParams params;
  std::vector<float> rays;  // camera-frame directions (render::camera_rays)
  std::uint64_t noise_seed = 0;
  std::uint64_t frames = 0;  // frames sampled, stopped ones included: seeds each frame's noise
  bool panoptic = false;     // segmentation: <segmentation_type> instance/panoptic (else semantic)
  BoxType box_type = BoxType::kVisible2D;  // boundingbox_camera: <box_type>
  ThermalParams thermal;                   // thermal_camera
};

// Adds N(mean, scale·stddev) to every colour channel ([0, 1] units) or finite depth [m]; one
// random stream per frame and row, so the result does not depend on the thread count.
void apply_noise(const CameraInstance& cam, double scale, std::uint8_t* rgb, float* depth,
                 std::uint32_t w, std::uint32_t h, render::Workers& workers) {
  const NoiseParams& n = cam.params.noise;
  if (n.type == NoiseParams::Type::kNone) return;
  const double sd = scale * n.stddev;
  workers.run(h, [&](std::size_t row) {
    Rng rng(cam.noise_seed ^ (cam.frames * 0x9E3779B97F4A7C15ull + row * 0xD1B54A32D192ED03ull));
    if (rgb) {
      std::uint8_t* p = rgb + 3ull * w * row;
      for (std::uint32_t k = 0; k < 3 * w; ++k) {
        const double v = p[k] / 255.0 + n.mean + sd * rng.normal();
        p[k] = static_cast<std::uint8_t>(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5);
      }
    }
    if (depth) {
      float* d = depth + std::size_t(w) * row;
      for (std::uint32_t k = 0; k < w; ++k) {
        const double e = n.mean + sd * rng.normal();
        if (std::isfinite(d[k])) d[k] = static_cast<float>(d[k] + e);
      }
    }
  });
}

std::optional<ignition::math::Vector3d> colour(const Element& config, const char* name) {
  const Element* e = config.child(name);
  if (!e) return std::nullopt;
  std::istringstream in(e->text());
  double v[4] = {0, 0, 0, 1};
  int n = 0;
  while (n < 4 && in >> v[n]) ++n;
  std::string rest;
  if ((n != 3 && n != 4) || (in >> rest)) {
    throw Error(e->where(), std::string("<") + name + "> expected 'r g b [a]' in 0..1, found '" +
                                e->text() + "'");
  }
  return ignition::math::Vector3d(v[0], v[1], v[2]);
}

// The camera-type sensors of the Sensors system.
class Cameras final : public SensorSystem<CameraInstance, c::CameraReading> {
 public:
  explicit Cameras(std::shared_ptr<RenderedScene> scene) : scene_(std::move(scene)) {}

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    SensorSystem::configure(entity, config, r, events);
    scene_->configure(r, world());
    if (!scene_->enabled()) return;
    for (const auto& inst : instances()) check(inst, r);
  }
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (scene_->enabled()) SensorSystem::update(info, r);
  }
  void reset(const UpdateInfo& info, ecs::Registry& r) override {
    SensorSystem::reset(info, r);
    scene_->reset();
  }

 protected:
  bool serves(std::string_view t) const override {
    return t == "camera" || t == "depth_camera" || t == "depth" || t == "rgbd_camera" ||
           t == "rgbd" || t == "segmentation" || t == "segmentation_camera" ||
           t == "boundingbox_camera" || t == "boundingbox" || t == "thermal_camera" ||
           t == "thermal";
  }

  CameraInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    CameraInstance cam;
    cam.link = ctx.parent;
    cam.X_LS = ctx.X_PS;
    const Element& el = *ctx.sensor->element;
    const std::string& type = ctx.sensor->type;
    const std::string frame = without_world(ctx.scoped_name);
    cam.kind = type == "camera"                                          ? CameraKind::kCamera
               : (type == "depth_camera" || type == "depth")             ? CameraKind::kDepth
               : (type == "rgbd_camera" || type == "rgbd")               ? CameraKind::kRgbd
               : (type == "boundingbox_camera" || type == "boundingbox") ? CameraKind::kBoundingBox
               : (type == "thermal_camera" || type == "thermal")         ? CameraKind::kThermal
                                                                 : CameraKind::kSegmentation;
    const Element* ce = sensor_type_element(el, "camera");
    if (cam.kind == CameraKind::kSegmentation && ce) {
      if (const Element* st = ce->child("segmentation_type")) {
        const std::string v = st->text();
        if (v == "instance" || v == "panoptic") {
          cam.panoptic = true;
        } else if (v != "semantic") {
          throw Error(st->where(),
                      "<segmentation_type> expected semantic, instance or "
                      "panoptic, found '" +
                          v + "'");
        }
      }
    }
    if (cam.kind == CameraKind::kBoundingBox && ce) {
      if (const Element* bt = ce->child("box_type")) {
        // gz-sensors' BoundingBoxCameraSensor::Load names
        const std::string v = bt->text();
        if (v == "2d" || v == "visible_2d" || v == "visible_box_2d") {
          cam.box_type = BoxType::kVisible2D;
        } else if (v == "full_2d" || v == "full_box_2d") {
          cam.box_type = BoxType::kFull2D;
        } else if (v == "3d") {
          cam.box_type = BoxType::k3D;
        } else {
          throw Error(bt->where(),
                      "<box_type> expected 2d (visible_2d, visible_box_2d), full_2d "
                      "(full_box_2d) or 3d, found '" +
                          v + "'");
        }
      }
    }
    cam.params = parse_camera(ce, el.where(),
                              cam.kind == CameraKind::kDepth || cam.kind == CameraKind::kRgbd);
    if (cam.kind == CameraKind::kBoundingBox && cam.params.noise.type != NoiseParams::Type::kNone) {
      spdlog::warn(
          "{}: boundingbox_camera {}: <noise> is ignored (gz-sensors' bounding box "
          "camera applies none)",
          cam.params.where, frame);
      cam.params.noise = NoiseParams{};
    }
    if (cam.kind == CameraKind::kThermal) cam.thermal = thermal_params(ctx, r, cam.params, frame);
    cam.rays = render::camera_rays(cam.params.model);
    cam.noise_seed = derive_seed(ctx.world_seed, ctx.scoped_name, "image");
    c::CameraTopics topics;
    switch (cam.kind) {
      case CameraKind::kCamera:
        topics.image = resolve_topic(r, ctx.entity, *ctx.sensor, "image");
        topics.camera_info = camera_info_topic(topics.image);
        break;
      case CameraKind::kDepth:
        topics.image = resolve_topic(r, ctx.entity, *ctx.sensor, "depth_image");
        topics.camera_info = camera_info_topic(topics.image);
        topics.points = topics.image + "/points";
        break;
      case CameraKind::kRgbd: {
        std::string base = resolve_topic(r, ctx.entity, *ctx.sensor, "");
        if (base.ends_with('/')) base.pop_back();
        topics.image = base + "/image";
        topics.depth_image = base + "/depth_image";
        topics.points = base + "/points";
        topics.camera_info = base + "/camera_info";
        break;
      }
      case CameraKind::kBoundingBox:
        // gz-sensors: the boxes on the topic, the image with the boxes drawn on topic + "_image"
        topics.boxes = resolve_topic(r, ctx.entity, *ctx.sensor, "boundingbox");
        topics.boxes_3d = cam.box_type == BoxType::k3D;
        topics.image = topics.boxes + "_image";
        topics.camera_info = camera_info_topic(topics.boxes);
        break;
      case CameraKind::kThermal:
        topics.image = resolve_topic(r, ctx.entity, *ctx.sensor, "image");
        topics.camera_info = camera_info_topic(topics.image);
        break;
      case CameraKind::kSegmentation: {
        const std::string base = resolve_topic(r, ctx.entity, *ctx.sensor, "segmentation");
        topics.image = base + "/colored_map";
        topics.labels_map = base + "/labels_map";
        topics.camera_info = base + "/camera_info";
        break;
      }
    }
    if (!cam.params.camera_info_topic.empty()) topics.camera_info = cam.params.camera_info_topic;
    r.set<c::SensorTopic>(ctx.entity, {topics.image});
    r.set<c::CameraTopics>(ctx.entity, topics);
    c::CameraReading reading;
    reading.frame_id = cam.params.optical_frame_id.empty() ? frame : cam.params.optical_frame_id;
    reading.info = cam.params.info;
    r.set<c::CameraReading>(ctx.entity, std::move(reading));
    return cam;
  }

  void sample(CameraInstance& cam, Duration t, NoiseStep step, const ecs::Registry& r,
              c::CameraReading& out) override {
    const render::Scene& scene = scene_->at(r, t);
    const Pose3d X_WS = compose(r.get<c::WorldPose>(cam.link).value, cam.X_LS);
    if (cam.kind == CameraKind::kSegmentation) {
      render_segmentation(scene, cam, X_WS, out);
    } else if (cam.kind == CameraKind::kBoundingBox) {
      render_boxes(scene, r, cam, X_WS, out);
    } else if (cam.kind == CameraKind::kThermal) {
      render_thermal(scene, cam, step.scale, X_WS, out);
    } else {
      render_camera(scene, cam, step.scale, X_WS, out);
    }
    ++cam.frames;
  }

  // A stopped camera renders nothing; its frame counter, which seeds each frame's noise,
  // advances as if it had.
  void skip(CameraInstance& cam, Duration, NoiseStep, const ecs::Registry&) override {
    ++cam.frames;
  }

 private:
  void render_camera(const render::Scene& scene, const CameraInstance& cam, double noise_scale,
                     const Pose3d& X_WS, c::CameraReading& out) {
    const auto& m = cam.params.model;
    const std::size_t n = std::size_t(m.width) * m.height;
    const bool depth = cam.kind != CameraKind::kCamera, colour = cam.kind != CameraKind::kDepth;
    scratch_rgb_.resize(colour ? 3 * n : 0);
    scratch_depth_.resize(depth ? n : 0);
    render::CameraOutputs o;
    o.rgb = colour ? scratch_rgb_.data() : nullptr;
    o.depth = depth ? scratch_depth_.data() : nullptr;
    render::render_camera(scene, m, cam.rays, X_WS, o, scene_->workers());
    apply_noise(cam, noise_scale, o.rgb, o.depth, m.width, m.height, scene_->workers());
    // An rgbd camera's colour image is RGB_INT8 whatever <format> says (gz-sensors).
    if (colour) {
      fill_colour(cam.kind == CameraKind::kRgbd ? c::PixelFormat::kRgbInt8 : cam.params.format,
                  m.width, m.height, out.image);
    }
    if (depth) {
      c::Image& d = cam.kind == CameraKind::kDepth ? out.image : out.depth;
      d.width = m.width, d.height = m.height, d.format = c::PixelFormat::kRFloat32;
      d.data.resize(4 * n);
      std::memcpy(d.data.data(), scratch_depth_.data(), 4 * n);
      fill_points(cam, out);
    }
  }

  void fill_colour(c::PixelFormat f, std::uint32_t w, std::uint32_t h, c::Image& img) {
    const std::size_t n = std::size_t(w) * h;
    img.width = w, img.height = h, img.format = f;
    img.data.resize(n * c::bytes_per_pixel(f));
    if (f == c::PixelFormat::kRgbInt8) {
      std::memcpy(img.data.data(), scratch_rgb_.data(), 3 * n);
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* p = &scratch_rgb_[3 * i];
      const double y = (0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]) / 255.0;  // Rec. 601 luma
      if (f == c::PixelFormat::kLInt8) {
        img.data[i] = static_cast<std::uint8_t>(y * 255 + 0.5);
      } else {
        const auto v = static_cast<std::uint16_t>(y * 65535 + 0.5);
        img.data[2 * i] = static_cast<std::uint8_t>(v & 0xff);
        img.data[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
      }
    }
  }

  // One point per pixel along its ray at the planar depth; colour: the image (rgbd) or the
  // depth as grey, 255 − 255·d/max over the finite depths (depth_camera, as Gazebo).
  void fill_points(const CameraInstance& cam, c::CameraReading& out) {
    const std::size_t n = scratch_depth_.size();
    out.points.resize(3 * n);
    out.point_rgb.resize(3 * n);
    float max_depth = 0;
    for (float d : scratch_depth_) {
      if (std::isfinite(d)) max_depth = std::max(max_depth, d);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const float d = scratch_depth_[i];
      float* p = &out.points[3 * i];
      if (std::isfinite(d)) {
        p[0] = d, p[1] = d * cam.rays[3 * i + 1], p[2] = d * cam.rays[3 * i + 2];
      } else {
        p[0] = p[1] = p[2] = d;
      }
      std::uint8_t* rgb = &out.point_rgb[3 * i];
      if (cam.kind == CameraKind::kRgbd) {
        std::memcpy(rgb, &scratch_rgb_[3 * i], 3);
      } else {
        const std::uint8_t g =
            std::isfinite(d) && max_depth > 0
                ? static_cast<std::uint8_t>(std::clamp(255 - d * 255 / max_depth, 0.f, 255.f))
                : 0;
        rgb[0] = rgb[1] = rgb[2] = g;
      }
    }
  }

  // The shaded colour and the object of every pixel, into scratch_rgb_ and scratch_object_.
  void render_colour_and_objects(const render::Scene& scene, const CameraInstance& cam,
                                 const Pose3d& X_WS) {
    const auto& m = cam.params.model;
    const std::size_t n = std::size_t(m.width) * m.height;
    scratch_rgb_.resize(3 * n);
    scratch_object_.resize(n);
    render::CameraOutputs o;
    o.rgb = scratch_rgb_.data();
    o.object = scratch_object_.data();
    render::render_camera(scene, m, cam.rays, X_WS, o, scene_->workers());
  }

  // The colour image (RGB_INT8, no noise, as gz-sensors' bounding box camera) with the boxes
  // of the labelled models drawn in green, and the boxes.
  void render_boxes(const render::Scene& scene, const ecs::Registry& r, const CameraInstance& cam,
                    const Pose3d& X_WS, c::CameraReading& out) {
    const auto& m = cam.params.model;
    render_colour_and_objects(scene, cam, X_WS);
    const BoxFrame frame{scene, r, m, X_WS, scratch_object_};
    out.boxes_2d.clear();
    out.boxes_3d.clear();
    if (cam.box_type == BoxType::k3D) {
      out.boxes_3d = boxes_3d(frame);
      draw_boxes(out.boxes_3d, m, scratch_rgb_.data());
    } else {
      out.boxes_2d = boxes_2d(frame, cam.box_type);
      draw_boxes(out.boxes_2d, m.width, m.height, scratch_rgb_.data());
    }
    fill_colour(c::PixelFormat::kRgbInt8, m.width, m.height, out.image);
  }

  // The settings of a thermal camera: <format> L8 → 8 bit, anything else 16; the resolution
  // (10 mK; 3 K for 8 bit, as gz-sensors), the ThermalSensor system's resolution and range, the
  // world's <atmosphere> temperature and its gradient over the view's height (gz-sim).
  static ThermalParams thermal_params(const SensorContext& ctx, const ecs::Registry& r,
                                      const CameraParams& p, const std::string& name) {
    ThermalParams t;
    const bool l8 = p.format == c::PixelFormat::kLInt8;
    t.max_value = l8 ? 255 : 65535;
    if (l8) {
      spdlog::info(
          "thermal camera {}: 8-bit image: linear resolution 3 K (range 0..765 K), as "
          "gz-sensors sets it",
          name);
      t.resolution = 3.0;
    }
    if (const auto* s = r.try_get<c::ThermalCameraSettings>(ctx.entity)) {
      if (s->resolution > 0) {
        t.resolution = s->resolution;
      } else if (s->resolution < 0) {
        spdlog::warn("thermal camera {}: ThermalSensor <resolution> must be > 0: using {} K", name,
                     t.resolution);
      }
      if (s->has_range) {
        if (s->max_temp >= s->min_temp) {
          t.min_temp = s->min_temp, t.max_temp = s->max_temp;
        } else {
          spdlog::warn(
              "thermal camera {}: ThermalSensor <max_temp> {} K is below <min_temp> {} "
              "K: no range",
              name, s->max_temp, s->min_temp);
        }
      }
    }
    c::Atmosphere atm;
    if (const auto* a = r.try_get<c::Atmosphere>(ctx.world)) atm = *a;
    t.ambient = atm.temperature;
    // gz-sim: the aspect ratio in whole numbers (width / height of unsigned integers).
    const auto& m = p.model;
    const double aspect = static_cast<double>(m.width / m.height);
    const double vfov = 2.0 * std::atan(std::tan(p.horizontal_fov / 2.0) / aspect);
    const double height = std::tan(vfov / 2.0) * m.far * 2.0;
    t.range = std::fabs(atm.temperature_gradient * height);
    return t;
  }

  // Per pixel: a heat source's temperature; any other surface the ambient temperature varied by
  // its shaded grey over the range (darker is colder), the sky the coldest; clamped to the
  // range, in units of the resolution, with the noise in units of the full scale.
  void render_thermal(const render::Scene& scene, const CameraInstance& cam, double noise_scale,
                      const Pose3d& X_WS, c::CameraReading& out) {
    const auto& m = cam.params.model;
    const auto& t = cam.thermal;
    const std::size_t n = std::size_t(m.width) * m.height;
    render_colour_and_objects(scene, cam, X_WS);
    const bool l8 = t.max_value == 255;
    c::Image& img = out.image;
    img.width = m.width, img.height = m.height;
    img.format = l8 ? c::PixelFormat::kLInt8 : c::PixelFormat::kLInt16;
    img.data.resize(n * (l8 ? 1 : 2));
    const NoiseParams& noise = cam.params.noise;
    const double sd = noise_scale * noise.stddev;
    scene_->workers().run(m.height, [&](std::size_t row) {
      Rng rng(cam.noise_seed ^ (cam.frames * 0x9E3779B97F4A7C15ull + row * 0xD1B54A32D192ED03ull));
      for (std::size_t i = row * m.width; i < (row + 1) * m.width; ++i) {
        const std::uint32_t obj = scratch_object_[i];
        double kelvin;
        if (obj != render::Hit::kNoObject && scene.objects()[obj].heat_source) {
          kelvin = std::max(0.0, scene.objects()[obj].temperature);
        } else {
          const std::uint8_t* p = &scratch_rgb_[3 * i];
          const double grey = obj == render::Hit::kNoObject
                                  ? 0.0
                                  : (0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]) / 255.0;
          kelvin = t.ambient - t.range / 2 + grey * t.range;
        }
        kelvin = std::clamp(kelvin, t.min_temp, t.max_temp);
        double v = kelvin / t.resolution / t.max_value;
        if (noise.type != NoiseParams::Type::kNone) v += noise.mean + sd * rng.normal();
        const double units = std::round(std::clamp(v, 0.0, 1.0) * t.max_value);
        if (l8) {
          img.data[i] = static_cast<std::uint8_t>(units);
        } else {
          const auto u = static_cast<std::uint16_t>(units);
          img.data[2 * i] = static_cast<std::uint8_t>(u & 0xff);
          img.data[2 * i + 1] = static_cast<std::uint8_t>(u >> 8);
        }
      }
    });
  }

  // Gazebo's colour of a label (gz-rendering's segmentation material switcher): three
  // uniform 0..255 draws from std::default_random_engine seeded with the label (the same
  // engine and distribution of the same standard library give the same colours).
  static std::array<std::uint8_t, 3> label_colour(std::int64_t label) {
    if (label == 0) return {0, 0, 0};  // the background label and colour
    std::default_random_engine gen(static_cast<std::default_random_engine::result_type>(label));
    std::uniform_int_distribution<int> d(0, 255);
    const int r = d(gen), g = d(gen), b = d(gen);
    return {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g),
            static_cast<std::uint8_t>(b)};
  }

  // Labels and colours per pixel from the object each pixel sees. Panoptic: an object's
  // instance is its rank among the scene's objects of the same label.
  void render_segmentation(const render::Scene& scene, const CameraInstance& cam,
                           const Pose3d& X_WS, c::CameraReading& out) {
    const auto& m = cam.params.model;
    const std::size_t n = std::size_t(m.width) * m.height;
    scratch_object_.resize(n);
    render::CameraOutputs o;
    o.object = scratch_object_.data();
    render::render_camera(scene, m, cam.rays, X_WS, o, scene_->workers());
    if (instances_built_ != scene.builds()) {
      instances_built_ = scene.builds();
      instance_.assign(scene.objects().size(), 0);
      std::unordered_map<int, int> count;
      for (std::size_t i = 0; i < instance_.size(); ++i) {
        const int label = std::max(0, scene.objects()[i].label);
        instance_[i] = count[label]++;
      }
    }
    for (c::Image* img : {&out.image, &out.labels}) {
      img->width = m.width, img->height = m.height, img->format = c::PixelFormat::kRgbInt8;
      img->data.resize(3 * n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t obj = scratch_object_[i];
      const int label = obj == render::Hit::kNoObject ? 0 : std::max(0, scene.objects()[obj].label);
      const int inst = obj == render::Hit::kNoObject || label == 0 ? 0 : instance_[obj];
      std::uint8_t* lp = &out.labels.data[3 * i];
      std::array<std::uint8_t, 3> col;
      if (cam.panoptic) {
        lp[0] = static_cast<std::uint8_t>(inst % 256);
        lp[1] = static_cast<std::uint8_t>(inst / 256);
        lp[2] = static_cast<std::uint8_t>(label);
        col = label == 0 ? label_colour(0) : label_colour(std::int64_t(label) * 256 * 256 + inst);
      } else {
        lp[0] = lp[1] = lp[2] = static_cast<std::uint8_t>(label);
        col = label_colour(label);
      }
      std::memcpy(&out.image.data[3 * i], col.data(), 3);
    }
  }

  // `kestrel check` and run: the silent camera failures, said aloud.
  void check(const CameraInstance& cam, const ecs::Registry& r) {
    const std::string name = without_world(r.scoped_name(cam.entity));
    const Pose3d X_WS = compose(r.get<c::WorldPose>(cam.link).value, cam.X_LS);
    const char* kind = cam.kind == CameraKind::kCamera        ? "camera"
                       : cam.kind == CameraKind::kDepth       ? "depth camera"
                       : cam.kind == CameraKind::kRgbd        ? "rgbd camera"
                       : cam.kind == CameraKind::kBoundingBox ? "bounding box camera"
                       : cam.kind == CameraKind::kThermal     ? "thermal camera"
                                                              : "segmentation camera";
    warn_if_intrinsics_disagree(cam.params, kind, name);
    warn_if_blind_camera(scene_->scene(r), cam.params, cam.rays, X_WS,
                         cam.kind == CameraKind::kDepth || cam.kind == CameraKind::kRgbd, kind,
                         name);
  }

  std::shared_ptr<RenderedScene> scene_;
  std::vector<std::uint8_t> scratch_rgb_;
  std::vector<float> scratch_depth_;
  std::vector<std::uint32_t> scratch_object_;
  std::vector<int> instance_;  // segmentation: instance of each scene object within its label
  std::uint64_t instances_built_ = 0;
};

// Gazebo's Sensors system: the cameras and the gpu_lidars, two SensorSystem parts (one reading
// type each) casting into one scene of the visuals.
class Rendering final : public System,
                        public ISystemConfigure,
                        public ISystemUpdate,
                        public ISystemReset {
 public:
  int priority() const override { return priority::kPostPhysicsSensors; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    if (const Element* e = config.child("render_engine")) {
      spdlog::info(
          "Sensors: <render_engine>{}</render_engine> is accepted and not used: Kestrel "
          "renders by ray casting on the CPU (src/render)",
          e->text());
    }
    scene_->set_lighting(colour(config, "ambient_light"), colour(config, "background_color"));
    if (const Element* e = config.child("disable_on_drained_battery"); e && e->value<bool>()) {
      throw Error(e->where(), "<disable_on_drained_battery> is not supported by Kestrel");
    }
    cameras_.configure(entity, config, r, events);
    lidars_.configure(entity, config, r, events);
    const std::size_t n = cameras_.instances().size() + lidars_.instances().size();
    if (!scene_->enabled() && n > 0) {
      spdlog::info("Sensors: --no-render: {} rendering sensor(s) produce no data", n);
    }
  }
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    cameras_.update(info, r);
    lidars_.update(info, r);
  }
  void reset(const UpdateInfo& info, ecs::Registry& r) override {
    cameras_.reset(info, r);
    lidars_.reset(info, r);
  }

 private:
  std::shared_ptr<RenderedScene> scene_ = std::make_shared<RenderedScene>(render::Source::kVisuals);
  Cameras cameras_{scene_};
  Lidars lidars_{scene_};
};

}  // namespace

std::unique_ptr<System> make_rendering_system() { return std::make_unique<Rendering>(); }

}  // namespace kestrel::sensors
