// TouchPlugin: publishes true on /NS/touched once the model's contact-sensed collisions have
// touched the target for longer than <time> without interruption, then disables itself, as
// gz-sim's (Fortress) TouchPlugin does. See README.md.
#include "touch_plugin/touch_plugin.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

// Gazebo's scopedName(entity, ecm, "/", true): "world/W/model/M/link/L/collision/C".
std::string gz_scoped_name(const ecs::Registry& r, ecs::Entity e) {
  std::string out;
  for (; e != ecs::kNullEntity; e = r.parent(e)) {
    const auto* n = r.try_get<c::Name>(e);
    const char* kind = r.has<c::World>(e)       ? "world"
                       : r.has<c::Model>(e)     ? "model"
                       : r.has<c::Link>(e)      ? "link"
                       : r.has<c::Collision>(e) ? "collision"
                       : r.has<c::Visual>(e)    ? "visual"
                       : r.has<c::Joint>(e)     ? "joint"
                       : r.has<c::Sensor>(e)    ? "sensor"
                                                : nullptr;
    if (!n || !kind) continue;
    out = fmt::format("{}/{}{}{}", kind, n->value, out.empty() ? "" : "/", out);
  }
  return out;
}

class TouchPlugin final : public System,
                          public ISystemConfigure,
                          public ISystemPreUpdate,
                          public ISystemUpdate,
                          public ISystemReset {
 public:
  // Reads this step's contacts after Physics; its message goes out in this step's PostUpdate.
  int priority() const override { return priority::kPostPhysicsSensors; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "TouchPlugin");
    target_ = config.get<std::string>("target");
    ns_ = as_valid_topic(config.get<std::string>("namespace"));
    if (ns_.empty()) {
      throw Error(config.child("namespace")->where(), "TouchPlugin: <namespace> is empty");
    }
    const double t = config.get<double>("time");
    if (!std::isfinite(t) || t < 0) {
      throw Error(config.child("time")->where(),
                  fmt::format("TouchPlugin: <time> must be >= 0 [s], got {}", t));
    }
    target_time_ = from_seconds(t);
    initially_enabled_ = config.get_or("enabled", false);
    reject_unknown_parameters(config, "TouchPlugin", "target, namespace, time, enabled");
    // The model's collisions that a contact sensor of their link observes (Gazebo reads only
    // collisions with contact sensor data).
    for (const ecs::Entity link : r.children(entity)) {
      if (!r.has<c::Link>(link)) continue;
      for (const ecs::Entity s : r.children(link)) {
        const auto* sensor = r.try_get<c::Sensor>(s);
        if (!sensor || sensor->type != "contact" || !sensor->element) continue;
        const Element* contact = sensor->element->child("contact");
        if (!contact) continue;
        for (const Element* col : contact->children("collision")) {
          const ecs::Entity e = r.child_by_name(link, col->value<std::string>());
          if (e != ecs::kNullEntity && r.has<c::Collision>(e)) collisions_.push_back(e);
        }
      }
    }
    if (collisions_.empty()) {
      throw Error(config.where(),
                  fmt::format("TouchPlugin: model '{}' has no collision observed by a contact "
                              "sensor (<sensor type=\"contact\"><contact><collision>): Gazebo's "
                              "TouchPlugin would never report a touch",
                              r.scoped_name(entity)));
    }
    r.each<c::Collision>([&](ecs::Entity e, const c::Collision&) { consider_target(r, e); });
    touched_ = add_bool_output(r, entity, "/" + ns_ + "/touched");
    enable_ = add_bool_service_input(r, entity, "/" + ns_ + "/enable");
    enabled_ = initially_enabled_;
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    r.each_new<c::Collision>([&](ecs::Entity e, const c::Collision&) { consider_target(r, e); });
    const auto& en = r.get<c::TopicInputs>(model_).boolean_service[enable_];
    if (en.count != requests_seen_) {
      requests_seen_ = en.count;
      enable(en.value);
    }
  }

  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (!enabled_ || info.paused) return;
    const Duration now = info.sim_time + info.dt;  // Gazebo's PostUpdate time
    bool touching = false;
    for (const ecs::Entity col : collisions_) {
      const auto* contacts = r.try_get<c::Contacts>(col);
      if (!contacts) continue;
      for (const auto& p : contacts->points) {
        if (std::binary_search(targets_.begin(), targets_.end(), p.other)) touching = true;
      }
    }
    if (!touching) {
      touch_start_ = Duration{0};
      return;
    }
    if (touch_start_ == Duration{0}) touch_start_ = now;
    if (now - touch_start_ <= target_time_) return;
    spdlog::info("TouchPlugin: model '{}' touched '{}' exclusively for {} s", r.scoped_name(model_),
                 target_, to_seconds(target_time_));
    auto& ch = r.get<c::TopicOutputs>(model_).boolean[touched_];
    ch.value = true;
    ++ch.sequence;
    enable(false);
  }

  void reset(const UpdateInfo&, ecs::Registry& r) override {
    targets_.clear();
    r.each<c::Collision>([&](ecs::Entity e, const c::Collision&) { consider_target(r, e); });
    requests_seen_ = 0;
    touch_start_ = Duration{0};
    enabled_ = initially_enabled_;
  }

 private:
  void enable(bool on) {
    enabled_ = on;
    if (on) touch_start_ = Duration{0};
  }

  // Gazebo: a collision is a target when its scoped name contains <target>.
  void consider_target(const ecs::Registry& r, ecs::Entity e) {
    if (gz_scoped_name(r, e).find(target_) == std::string::npos) return;
    targets_.insert(std::upper_bound(targets_.begin(), targets_.end(), e), e);
  }

  ecs::Entity model_ = ecs::kNullEntity;
  std::string target_, ns_;
  Duration target_time_{0}, touch_start_{0};
  bool initially_enabled_ = false, enabled_ = false;
  std::uint64_t requests_seen_ = 0;
  std::size_t touched_ = 0, enable_ = 0;
  std::vector<ecs::Entity> collisions_, targets_;
};

}  // namespace

std::unique_ptr<System> make_touch_plugin() { return std::make_unique<TouchPlugin>(); }

}  // namespace kestrel::systems
