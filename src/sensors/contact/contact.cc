// Contact: at every sample, the contacts of the sensor's collisions (points, normals, depths and
// solver forces from physics' Contacts), empty when nothing touches, plus begin/end events.

#include <algorithm>
#include <map>
#include <utility>

#include "kestrel/components/physics.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using Pair = std::pair<ecs::Entity, ecs::Entity>;  // (own collision, other collision)

struct ContactInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  std::vector<ecs::Entity> collisions;  // in declaration order
  std::vector<Pair> touching;           // at the previous sample, sorted
};

class Contact final : public SensorSystem<ContactInstance, c::ContactReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "contact"; }

  ContactInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    ContactInstance inst;
    const Element* el = sensor_type_element(*ctx.sensor->element, "contact");
    if (!el || el->children("collision").empty()) {
      throw Error(ctx.sensor->element->where(),
                  "contact sensor '" + ctx.scoped_name +
                      "' needs <contact><collision>NAME</collision></contact> naming a collision "
                      "of its link");
    }
    for (const Element* col : el->children("collision")) {
      const std::string name = col->value<std::string>();
      const ecs::Entity e = r.child_by_name(ctx.parent, name);
      if (e == ecs::kNullEntity || !r.has<c::Collision>(e)) {
        throw Error(col->where(), "contact sensor '" + ctx.scoped_name + "': link '" +
                                      r.scoped_name(ctx.parent) + "' has no collision named '" +
                                      name + "'");
      }
      inst.collisions.push_back(e);
    }
    components::Sensor resolved = *ctx.sensor;
    if (const Element* topic = el->child("topic")) {
      const std::string t = topic->value<std::string>();
      if (t != "__default_topic__" && resolved.topic.empty()) resolved.topic = t;
    }
    reject_unread(*el, "expected <collision>, <topic>");
    r.set<c::SensorTopic>(ctx.entity, {resolve_topic(r, ctx.entity, resolved, "contact")});
    r.set<c::ContactReading>(ctx.entity, {});
    return inst;
  }

  void sample(ContactInstance& inst, Duration, NoiseStep, const ecs::Registry& r,
              c::ContactReading& out) override {
    out.contacts.clear();
    out.began.clear();
    out.ended.clear();
    std::vector<Pair> now;
    for (ecs::Entity col : inst.collisions) {
      const auto* cs = r.try_get<c::Contacts>(col);
      if (!cs) continue;  // not simulated (e.g. removed): nothing touches it
      std::map<ecs::Entity, c::SensedContact> by_other;  // ordered: deterministic
      for (const auto& p : cs->points) {
        auto& sc = by_other[p.other];
        sc.positions.push_back(p.position);
        sc.normals.push_back(p.normal);
        sc.depths.push_back(p.depth);
        sc.forces.push_back(p.force);
      }
      for (auto& [other, sc] : by_other) {
        sc.collision = col;
        sc.other = other;
        sc.collision_name = r.scoped_name(col);
        sc.other_name = r.alive(other) ? r.scoped_name(other) : std::string();
        now.emplace_back(col, other);
        out.contacts.push_back(std::move(sc));
      }
    }
    std::sort(now.begin(), now.end());
    auto event = [&](const Pair& p) {
      return c::ContactEvent{p.first, p.second, r.scoped_name(p.first),
                             r.alive(p.second) ? r.scoped_name(p.second) : std::string()};
    };
    std::vector<Pair> diff;
    std::set_difference(now.begin(), now.end(), inst.touching.begin(), inst.touching.end(),
                        std::back_inserter(diff));
    for (const auto& p : diff) out.began.push_back(event(p));
    diff.clear();
    std::set_difference(inst.touching.begin(), inst.touching.end(), now.begin(), now.end(),
                        std::back_inserter(diff));
    for (const auto& p : diff) out.ended.push_back(event(p));
    inst.touching = std::move(now);
  }
};

}  // namespace

std::unique_ptr<System> make_contact_system() { return std::make_unique<Contact>(); }

}  // namespace kestrel::sensors
