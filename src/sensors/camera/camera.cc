#include "sensors/camera/camera.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "kestrel/core/error.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {

namespace c = components;

void default_intrinsics(double hfov, std::uint32_t w, std::uint32_t h, double& fx, double& fy,
                        double& cx, double& cy) {
  fx = fy = (w / 2.0) / std::tan(hfov / 2);
  cx = w / 2.0;
  cy = h / 2.0;
}

std::string camera_info_topic(const std::string& image_topic) {
  std::string out, part;
  std::vector<std::string> parts;
  for (char ch : image_topic + "/") {
    if (ch == '/') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += ch;
    }
  }
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) out += "/" + parts[i];
  return out + "/camera_info";
}

namespace {

c::PixelFormat pixel_format(const Element& e, bool depth) {
  const std::string f = e.value<std::string>();
  if (depth) {
    if (f == "R_FLOAT32" || f == "R8G8B8" || f == "RGB_INT8") return c::PixelFormat::kRFloat32;
    throw Error(e.where(), "<format> of a depth camera: expected R_FLOAT32, found '" + f + "'");
  }
  if (f == "R8G8B8" || f == "RGB_INT8") return c::PixelFormat::kRgbInt8;
  if (f == "L8" || f == "L_INT8") return c::PixelFormat::kLInt8;
  if (f == "L16" || f == "L_INT16") return c::PixelFormat::kLInt16;
  throw Error(e.where(), "<format> '" + f +
                             "' is not supported by Kestrel's cameras: expected R8G8B8 (RGB_INT8), "
                             "L8 (L_INT8) or L16 (L_INT16)");
}

double positive(const Element& parent, const char* name, double fallback) {
  const double v = parent.get_or<double>(name, fallback);
  if (!(v > 0) || !std::isfinite(v)) {
    throw Error(
        parent.child(name) ? parent.child(name)->where() : parent.where(),
        std::string("<") + name + "> must be a positive number, found " + std::to_string(v));
  }
  return v;
}

}  // namespace

CameraParams parse_camera(const Element* cam, const std::string& sensor_where, bool depth) {
  CameraParams p;
  p.where = cam ? cam->where() : sensor_where;
  p.format = depth ? c::PixelFormat::kRFloat32 : c::PixelFormat::kRgbInt8;
  auto& m = p.model;
  if (cam) {
    p.horizontal_fov = cam->get_or<double>("horizontal_fov", 1.047);
    if (!(p.horizontal_fov > 0 && p.horizontal_fov < std::numbers::pi)) {
      throw Error(cam->child("horizontal_fov")->where(),
                  "<horizontal_fov> must be in (0, pi) rad for a pinhole camera, found " +
                      std::to_string(p.horizontal_fov));
    }
    if (const Element* img = cam->child("image")) {
      const double w = positive(*img, "width", 320), h = positive(*img, "height", 240);
      if (w > 16384 || h > 16384 || w != std::floor(w) || h != std::floor(h)) {
        throw Error(img->where(), "<image> width and height must be whole numbers up to 16384");
      }
      m.width = static_cast<std::uint32_t>(w);
      m.height = static_cast<std::uint32_t>(h);
      if (const Element* f = img->child("format")) p.format = pixel_format(*f, depth);
      img->child("anti_aliasing");  // a rasteriser's setting: every ray samples a pixel centre
      reject_unread(*img, "expected <width>, <height>, <format>, <anti_aliasing>");
    }
    if (const Element* clip = cam->child("clip")) {
      m.near = positive(*clip, "near", 0.1);
      m.far = positive(*clip, "far", 100);
      reject_unread(*clip, "expected <near>, <far>");
    }
    if (const Element* dc = depth ? cam->child("depth_camera") : nullptr) {
      if (const Element* o = dc->child("output"); o && o->value<std::string>() != "depths") {
        throw Error(o->where(), "<depth_camera><output> '" + o->value<std::string>() +
                                    "' is not supported: expected depths");
      }
      if (const Element* clip = dc->child("clip")) {
        m.near = positive(*clip, "near", m.near);
        m.far = positive(*clip, "far", m.far);
        reject_unread(*clip, "expected <near>, <far>");
      }
      reject_unread(*dc, "expected <output>, <clip>");
    }
    if (m.near >= m.far) {
      throw Error(p.where, "<clip> near (" + std::to_string(m.near) + ") must be less than far (" +
                               std::to_string(m.far) + ")");
    }
    if (const Element* n = cam->child("noise")) {
      p.noise = parse_noise(n);
      if (p.noise.type != NoiseParams::Type::kNone &&
          (p.noise.bias_mean != 0 || p.noise.bias_stddev != 0 || p.noise.dynamic_bias_stddev != 0 ||
           p.noise.precision != 0)) {
        throw Error(n->where(),
                    "camera <noise> takes <type>gaussian</type>, <mean> and <stddev> "
                    "only (Gazebo's image noise has no bias or quantization)");
      }
    }
    if (const Element* d = cam->child("distortion")) {
      m.k1 = d->get_or<double>("k1", 0);
      m.k2 = d->get_or<double>("k2", 0);
      m.k3 = d->get_or<double>("k3", 0);
      m.p1 = d->get_or<double>("p1", 0);
      m.p2 = d->get_or<double>("p2", 0);
      if (const Element* ce = d->child("center")) {
        std::istringstream in(ce->text());
        std::string rest;
        if (!(in >> m.center_u >> m.center_v) || (in >> rest)) {
          throw Error(ce->where(),
                      "<center> expected two numbers 'u v' (image fractions), "
                      "found '" +
                          ce->text() + "'");
        }
      }
      reject_unread(*d, "expected <k1>, <k2>, <k3>, <p1>, <p2>, <center>");
    }
    p.optical_frame_id = cam->get_or<std::string>("optical_frame_id", "");
    p.camera_info_topic = cam->get_or<std::string>("camera_info_topic", "");
    cam->child("visibility_mask");  // every visual is visible to every camera
    if (const Element* t = cam->child("triggered"); t && t->value<bool>()) {
      throw Error(t->where(),
                  "triggered cameras are not supported by Kestrel: they would "
                  "render only on a trigger message");
    }
    cam->child("trigger_topic");
    if (const Element* s = cam->child("save");
        s && s->attribute("enabled").value_or("false") != "false") {
      throw Error(s->where(),
                  "<save enabled=\"true\"> is not supported: record the image topic "
                  "instead");
    }
    cam->child("save");
    const Element* lens = cam->child("lens");
    const Element* intr = lens ? lens->child("intrinsics") : nullptr;
    default_intrinsics(p.horizontal_fov, m.width, m.height, m.fx, m.fy, m.cx, m.cy);
    if (intr) {
      // SDF's defaults for absent children (sdformat 12: 277, 277, 160, 120, 0).
      p.has_intrinsics = true;
      m.fx = positive(*intr, "fx", 277);
      m.fy = positive(*intr, "fy", 277);
      m.cx = intr->get_or<double>("cx", 160);
      m.cy = intr->get_or<double>("cy", 120);
      m.skew = intr->get_or<double>("s", 0);
      reject_unread(*intr, "expected <fx>, <fy>, <cx>, <cy>, <s>");
    }
    p.info.projection_fx = m.fx, p.info.projection_fy = m.fy;
    p.info.projection_cx = m.cx, p.info.projection_cy = m.cy;
    if (const Element* proj = lens ? lens->child("projection") : nullptr) {
      p.info.projection_fx = proj->get_or<double>("p_fx", m.fx);
      p.info.projection_fy = proj->get_or<double>("p_fy", m.fy);
      p.info.projection_cx = proj->get_or<double>("p_cx", m.cx);
      p.info.projection_cy = proj->get_or<double>("p_cy", m.cy);
      p.info.tx = proj->get_or<double>("tx", 0);
      p.info.ty = proj->get_or<double>("ty", 0);
      reject_unread(*proj, "expected <p_fx>, <p_fy>, <p_cx>, <p_cy>, <tx>, <ty>");
    }
    if (lens) {
      // Wide-angle lens settings (wideanglecamera only) do not change a pinhole camera.
      for (const char* k :
           {"type", "scale_to_hfov", "custom_function", "cutoff_angle", "env_texture_size"}) {
        lens->child(k);
      }
      reject_unread(*lens, "expected <intrinsics>, <projection> (or wide-angle settings)");
    }
    cam->child("segmentation_type");
    cam->child("box_type");
    reject_unread(*cam,
                  "expected <horizontal_fov>, <image>, <clip>, <noise>, <distortion>, "
                  "<lens>, <optical_frame_id>, <camera_info_topic>, <depth_camera>, ...");
  } else {
    default_intrinsics(p.horizontal_fov, m.width, m.height, m.fx, m.fy, m.cx, m.cy);
    p.info.projection_fx = m.fx, p.info.projection_fy = m.fy;
    p.info.projection_cx = m.cx, p.info.projection_cy = m.cy;
  }
  auto& i = p.info;
  i.width = m.width, i.height = m.height;
  i.fx = m.fx, i.fy = m.fy, i.cx = m.cx, i.cy = m.cy, i.skew = m.skew;
  i.k1 = m.k1, i.k2 = m.k2, i.k3 = m.k3, i.p1 = m.p1, i.p2 = m.p2;
  return p;
}

}  // namespace kestrel::sensors
