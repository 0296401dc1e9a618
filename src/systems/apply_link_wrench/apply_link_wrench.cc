// ApplyLinkWrench: wrenches on links (or a model's canonical link) from topics, for one step or
// persistently, and persistent wrenches declared in SDF, as gz-sim's (Fortress) ApplyLinkWrench
// applies them. See README.md.
#include "apply_link_wrench/apply_link_wrench.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <deque>

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
using ignition::math::Vector3d;

// A wrench request: from SDF (<persistent>) or a message.
struct Request {
  c::EntityRef entity;
  Vector3d force, torque;  // world frame [N, N·m]
  bool has_force_offset = false;
};
// ignition.msgs.Entity.Type values.
constexpr int kLight = 1, kModel = 2, kLink = 3, kVisual = 4, kCollision = 5, kSensor = 6,
              kJoint = 7;

// Gazebo's entityFromMsg: the id if set, else the first entity of that type whose scoped name
// ends with `name` ("box", "box::link"); entities in id order (deterministic).
ecs::Entity entity_from(const ecs::Registry& r, const c::EntityRef& m) {
  if (m.id != 0) return r.alive(m.id) ? m.id : ecs::kNullEntity;
  if (m.type == 0 || m.name.empty()) return ecs::kNullEntity;
  const auto type_matches = [&](ecs::Entity e) {
    switch (m.type) {
      case kLight:
        return r.has<c::Light>(e);
      case kModel:
        return r.has<c::Model>(e);
      case kLink:
        return r.has<c::Link>(e);
      case kVisual:
        return r.has<c::Visual>(e);
      case kCollision:
        return r.has<c::Collision>(e);
      case kSensor:
        return r.has<c::Sensor>(e);
      case kJoint:
        return r.has<c::Joint>(e);
      default:
        return false;
    }
  };
  const std::string_view last = [&] {
    const auto k = m.name.rfind("::");
    return std::string_view(m.name).substr(k == std::string::npos ? 0 : k + 2);
  }();
  for (const ecs::Entity e : r.entities()) {
    const auto* n = r.try_get<c::Name>(e);
    if (!n || n->value != last || !type_matches(e)) continue;
    const std::string scoped = r.scoped_name(e);
    if (scoped == m.name || scoped.ends_with("::" + m.name)) return e;
  }
  return ecs::kNullEntity;
}

// The link that receives a wrench for `e`: e itself, or a model's canonical (first) link.
ecs::Entity wrench_link(const ecs::Registry& r, ecs::Entity e) {
  if (e == ecs::kNullEntity) return e;
  if (r.has<c::Link>(e)) return e;
  if (r.has<c::Model>(e)) {
    for (const ecs::Entity child : r.children(e)) {
      if (r.has<c::Link>(child)) return child;
    }
  }
  return ecs::kNullEntity;
}

std::string describe_request(const c::EntityRef& m) {
  return m.id ? fmt::format("entity id {}", m.id)
              : fmt::format("entity '{}' of type {}", m.name, m.type);
}

class ApplyLinkWrench final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    if (!r.has<c::World>(entity)) {
      throw Error(config.where(), fmt::format("ApplyLinkWrench must be attached to a world (it is "
                                              "attached to {})",
                                              r.describe(entity)));
    }
    world_ = entity;
    verbose_ = config.get_or("verbose", true);
    for (const Element* p : config.children("persistent")) {
      Request m;
      m.entity.name = p->get<std::string>("entity_name");
      const auto type = p->get<std::string>("entity_type");
      if (type == "link") {
        m.entity.type = kLink;
      } else if (type == "model") {
        m.entity.type = kModel;
      } else {
        throw Error(p->child("entity_type")->where(),
                    fmt::format("ApplyLinkWrench: <entity_type> '{}' is not supported (link or "
                                "model)",
                                type));
      }
      m.force = p->get_or("force", Vector3d::Zero);
      m.torque = p->get_or("torque", Vector3d::Zero);
      reject_unknown_parameters(*p, "ApplyLinkWrench <persistent>",
                                "entity_name, entity_type, force, torque");
      initial_persistent_.push_back(m);
    }
    persistent_ = initial_persistent_;
    const std::string prefix = "/world/" + model_name(r, entity) + "/wrench";
    once_in_ = add_entity_wrench_input(r, entity, config.get_or<std::string>("topic", prefix));
    persistent_in_ = add_entity_wrench_input(
        r, entity, config.get_or<std::string>("topic_persistent", prefix + "/persistent"));
    clear_in_ =
        add_entity_input(r, entity, config.get_or<std::string>("topic_clear", prefix + "/clear"));
    reject_unknown_parameters(config, "ApplyLinkWrench",
                              "verbose, persistent, topic, topic_persistent, topic_clear");
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    // Gazebo's subscriber callbacks: messages without an entity or a wrench are refused.
    auto& in = r.get<c::TopicInputs>(world_);
    for (const std::size_t k : {once_in_, persistent_in_}) {
      for (const c::EntityWrench& m : in.entity_wrench[k].received) {
        if (!m.has_entity || !m.has_wrench) {
          spdlog::error("ApplyLinkWrench: {}: missing entity or wrench in message ({}); ignored",
                        in.entity_wrench[k].topic, describe_request(m.entity));
          continue;
        }
        (k == once_in_ ? once_ : persistent_)
            .push_back(Request{m.entity, m.force, m.torque, m.has_force_offset});
      }
      in.entity_wrench[k].received.clear();
    }
    std::vector<c::EntityRef> clears = std::move(in.entity[clear_in_].received);
    in.entity[clear_in_].received.clear();
    // Clears first (also while paused), by the entity each persistent wrench resolves to.
    for (const c::EntityRef& clear : clears) {
      const ecs::Entity target = entity_from(r, clear);
      std::erase_if(persistent_, [&](const Request& p) {
        const bool hit = entity_from(r, p.entity) == target;
        if (hit && verbose_) {
          spdlog::info("ApplyLinkWrench: cleared the persistent wrench on {}",
                       describe_request(p.entity));
        }
        return hit;
      });
    }
    if (info.paused) return;
    for (const Request& m : once_) {
      const ecs::Entity link = wrench_link(r, entity_from(r, m.entity));
      if (link == ecs::kNullEntity) {
        spdlog::error(
            "ApplyLinkWrench: {} not found (or neither a link nor a model); wrench "
            "ignored",
            describe_request(m.entity));
        continue;
      }
      add(r, link, m);
    }
    once_.clear();
    for (const Request& m : persistent_) {
      const ecs::Entity link = wrench_link(r, entity_from(r, m.entity));
      if (link != ecs::kNullEntity) add(r, link, m);  // may appear later (Gazebo)
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    persistent_ = initial_persistent_;
    once_.clear();
  }

 private:
  void add(ecs::Registry& r, ecs::Entity link, const Request& m) {
    if (m.has_force_offset) {
      spdlog::warn("ApplyLinkWrench: force offset is not supported, it is ignored (as Gazebo)");
    }
    auto* w = r.try_get<c::ExternalWorldWrenchCmd>(link);
    if (!w) w = &r.add<c::ExternalWorldWrenchCmd>(link);
    w->force += m.force;
    w->torque += m.torque;
  }

  ecs::Entity world_ = ecs::kNullEntity;
  bool verbose_ = true;
  std::size_t once_in_ = 0, persistent_in_ = 0, clear_in_ = 0;
  std::vector<Request> initial_persistent_, persistent_, once_;
};

}  // namespace

std::unique_ptr<System> make_apply_link_wrench() { return std::make_unique<ApplyLinkWrench>(); }

}  // namespace kestrel::systems
