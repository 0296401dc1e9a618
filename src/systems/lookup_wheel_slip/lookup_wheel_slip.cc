// LookupWheelSlip: a wheel's slip compliances and friction follow the pixel of a slip map under
// it, as gz-sim's (main) LookupWheelSlip computes them. See README.md.
#include "lookup_wheel_slip/lookup_wheel_slip.h"

#include <fmt/format.h>
#include <ignition/math/Helpers.hh>
#include <ignition/math/Matrix4.hh>

#include <cmath>
#include <filesystem>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "image/image.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/wheel_slip.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Matrix4d;
using ignition::math::Vector3d;

// A pixel value of 128 means the nominal value; each step above or below adds one delta.
constexpr int kNominalColor = 128;

struct Wheel {
  ecs::Entity link = ecs::kNullEntity, collision = ecs::kNullEntity;
  // Nominal values (taken at the first step): WheelSlip's compliances, the surface's friction.
  double lateral = 0, longitudinal = 0, mu = 0, mu2 = 0;
  // What was last sent (NaN: nothing yet).
  double sent[4] = {NAN, NAN, NAN, NAN};
};

// The slip map's file: absolute, file://, or relative to the SDF file that declares the plugin.
std::string map_path(const Element& config) {
  const Element* el = config.child("slip_map");
  if (!el) throw Error(config.where(), "LookupWheelSlip: <slip_map> is required");
  std::string uri = el->value<std::string>();
  if (uri.empty()) throw Error(el->where(), "LookupWheelSlip: <slip_map> is empty");
  if (uri.starts_with("file://")) uri = uri.substr(7);
  if (uri.find("://") != std::string::npos) {
    throw Error(el->where(), fmt::format("LookupWheelSlip: <slip_map> '{}': give a file path "
                                         "(absolute, or relative to this SDF file)",
                                         uri));
  }
  std::filesystem::path p(uri);
  if (p.is_relative() && !el->file().empty()) {
    p = std::filesystem::path(el->file()).parent_path() / p;
  }
  return p.lexically_normal().string();
}

class LookupWheelSlip final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    const ecs::Entity model = require_model(r, entity, config, "LookupWheelSlip");
    const std::string path = map_path(config);
    try {
      map_ = image::read_rgb8(path);
    } catch (const Error& e) {
      throw Error(config.child("slip_map")->where(), std::string("LookupWheelSlip: ") + e.what());
    }
    const double size_x = get_positive(config, "size_x");
    const double size_y = get_positive(config, "size_y");
    // gz-sim's image-to-world transform, inverted: u along +x from −size_x/2, v down from
    // +size_y/2 (the image's top row at the map's +y edge), the map centred on the origin.
    Matrix4d img_to_world = Matrix4d::Zero;
    img_to_world(0, 0) = size_x / static_cast<double>(map_.width);
    img_to_world(0, 3) = -size_x / 2.0;
    img_to_world(1, 1) = (size_y / static_cast<double>(map_.height)) * std::cos(IGN_PI);
    img_to_world(1, 2) = -std::sin(IGN_PI);
    img_to_world(1, 3) = size_y / 2.0;
    img_to_world(2, 1) = std::sin(IGN_PI);
    img_to_world(2, 2) = std::cos(IGN_PI);
    img_to_world(3, 3) = 1.0;
    world_to_img_ = img_to_world.Inverse();

    const auto names = config.children("wheel_link_name");
    if (names.empty()) {
      throw Error(config.where(), "LookupWheelSlip: no <wheel_link_name> given");
    }
    for (const Element* n : names) {
      const auto name = n->value<std::string>();
      Wheel w;
      w.link = r.child_by_name(model, name);
      if (w.link == ecs::kNullEntity || !r.has<c::Link>(w.link)) {
        throw Error(n->where(), fmt::format("LookupWheelSlip: <wheel_link_name> '{}' is not a "
                                            "link of model '{}'",
                                            name, r.scoped_name(model)));
      }
      for (ecs::Entity ch : r.children(w.link)) {
        if (r.has<c::Collision>(ch)) w.collision = ch;
      }
      wheels_.push_back(w);
    }
    lateral_delta_ = get_finite_or(config, "slip_compliance_lateral_delta", 0.05);
    longitudinal_delta_ = get_finite_or(config, "slip_compliance_longitudinal_delta", 0.005);
    friction_delta_ = get_finite_or(config, "friction_delta", 0.5);
    reject_unknown_parameters(config, "LookupWheelSlip",
                              "slip_map, size_x, size_y, wheel_link_name, "
                              "slip_compliance_lateral_delta, slip_compliance_longitudinal_delta, "
                              "friction_delta");
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    if (!nominal_) take_nominal(r);
    for (Wheel& w : wheels_) {
      const Vector3d img = world_to_img_ * r.get<c::WorldPose>(w.link).value.Pos();
      const int u = static_cast<int>(std::round(img.X()));
      const int v = static_cast<int>(std::round(img.Y()));
      // Off the map: the wheel keeps what it has.
      if (u < 0 || u >= static_cast<int>(map_.width) || v < 0 ||
          v >= static_cast<int>(map_.height)) {
        continue;
      }
      const std::uint8_t* px = map_.at(static_cast<unsigned>(u), static_cast<unsigned>(v));
      auto value = [](double nominal, int channel, double delta) {
        return std::max(0.0, nominal + (channel - kNominalColor) * delta);
      };
      const double want[4] = {value(w.lateral, px[0], lateral_delta_),
                              value(w.longitudinal, px[1], longitudinal_delta_),
                              value(w.mu, px[2], friction_delta_),
                              value(w.mu2, px[2], friction_delta_)};
      // Gazebo sends a value that moved by more than 1e-6.
      auto moved = [&](int k) { return !(std::abs(w.sent[k] - want[k]) <= 1e-6); };
      if (moved(0) || moved(1)) {
        w.sent[0] = want[0], w.sent[1] = want[1];
        if (auto* cmd = r.try_get<c::WheelSlipCmd>(w.link)) {
          *cmd = {want[0], want[1]};
        } else {
          r.add<c::WheelSlipCmd>(w.link, c::WheelSlipCmd{want[0], want[1]});
        }
      }
      if (moved(2) || moved(3)) {
        w.sent[2] = want[2], w.sent[3] = want[3];
        if (auto* cmd = r.try_get<c::ContactFrictionCmd>(w.collision)) {
          *cmd = {want[2], want[3]};
        } else {
          r.add<c::ContactFrictionCmd>(w.collision, c::ContactFrictionCmd{want[2], want[3]});
        }
      }
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    nominal_ = false;
    for (Wheel& w : wheels_) std::fill(std::begin(w.sent), std::end(w.sent), NAN);
  }

 private:
  // The nominal values, when every system has configured: each wheel's WheelSlip compliances
  // (a wheel without a WheelSlip is an error) and its collision's friction.
  void take_nominal(const ecs::Registry& r) {
    for (Wheel& w : wheels_) {
      const auto* slip = r.try_get<c::WheelSlipCompliance>(w.link);
      if (!slip || w.collision == ecs::kNullEntity) {
        throw Error(r.describe(w.link),
                    "LookupWheelSlip: this link is not a wheel of a WheelSlip system of the model "
                    "(LookupWheelSlip changes what WheelSlip applies)");
      }
      w.lateral = slip->lateral;
      w.longitudinal = slip->longitudinal;
      const auto* s = r.try_get<c::Surface>(w.collision);
      w.mu = s ? s->mu : 1.0;
      w.mu2 = s ? s->mu2 : 1.0;
    }
    nominal_ = true;
  }

  image::Rgb8 map_;
  Matrix4d world_to_img_;
  std::vector<Wheel> wheels_;
  double lateral_delta_ = 0.05, longitudinal_delta_ = 0.005, friction_delta_ = 0.5;
  bool nominal_ = false;
};

}  // namespace

std::unique_ptr<System> make_lookup_wheel_slip() {
  return std::make_unique<LookupWheelSlip>();
}

}  // namespace kestrel::systems
