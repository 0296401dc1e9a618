#include "sensor_system.h"

#include <cmath>

#include "kestrel/components/physics.h"

namespace kestrel::sensors {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

Duration Schedule::due_time(std::uint64_t n) const {
  // n / rate seconds, rounded to the nearest nanosecond; long double keeps n·1e9 exact.
  const long double ns = static_cast<long double>(n) * 1e9L / static_cast<long double>(rate_);
  return Duration{static_cast<std::int64_t>(std::llround(ns))};
}

void Schedule::taken(Duration t) {
  last_ = t;
  if (rate_ <= 0) return;
  // First n with due_time(n) > t, starting from the estimate floor(t·rate) + 1.
  auto n = static_cast<std::uint64_t>(std::floor(static_cast<long double>(t.count()) *
                                                 static_cast<long double>(rate_) / 1e9L)) + 1;
  if (n > 1 && due_time(n - 1) > t) --n;
  while (due_time(n) <= t) ++n;
  n_ = std::max(n, n_ + 1);
}

std::string resolve_topic(const ecs::Registry& r, ecs::Entity sensor, const c::Sensor& data,
                          std::string_view suffix) {
  if (!data.topic.empty()) {
    if (data.topic.find("__default") != std::string::npos || data.topic.find(' ') != std::string::npos) {
      throw Error(data.element ? data.element->where() : r.describe(sensor),
                  "sensor <topic> '" + data.topic +
                      "' is not a valid topic name (placeholder or contains a space)");
    }
    return data.topic;
  }
  std::string topic;
  for (ecs::Entity e = sensor; e != ecs::kNullEntity; e = r.parent(e)) {
    const auto* name = r.try_get<c::Name>(e);
    const std::string n = name ? name->value : std::to_string(e);
    const char* kind = r.has<c::World>(e)    ? "world"
                       : r.has<c::Model>(e)  ? "model"
                       : r.has<c::Link>(e)   ? "link"
                       : r.has<c::Joint>(e)  ? "joint"
                       : r.has<c::Sensor>(e) ? "sensor"
                                             : nullptr;
    if (!kind) continue;
    topic = "/" + std::string(kind) + "/" + n + topic;
    if (r.has<c::World>(e)) break;
  }
  return topic + "/" + std::string(suffix);
}

FrameState frame_state(const ecs::Registry& r, ecs::Entity link, const Pose3d& X_LS) {
  FrameState s;
  const auto* wp = r.try_get<c::WorldPose>(link);
  if (!wp) throw Error(r.describe(link), "the sensor's parent has no WorldPose");
  const Pose3d& X_WL = wp->value;
  s.X_WS = compose(X_WL, X_LS);
  const Vector3d r_W = X_WL.Rot().RotateVector(X_LS.Pos());
  Vector3d v_L, w, a_L, alpha;
  if (const auto* c = r.try_get<c::WorldLinearVelocity>(link)) v_L = c->value;
  if (const auto* c = r.try_get<c::WorldAngularVelocity>(link)) w = c->value;
  if (const auto* c = r.try_get<c::WorldLinearAcceleration>(link)) a_L = c->value;
  if (const auto* c = r.try_get<c::WorldAngularAcceleration>(link)) alpha = c->value;
  s.w_W = w;
  s.alpha_W = alpha;
  s.v_W = v_L + w.Cross(r_W);
  s.a_W = a_L + alpha.Cross(r_W) + w.Cross(w.Cross(r_W));
  return s;
}

void reject_unread(const Element& e, std::string_view expected) {
  auto unread = e.unread_children();
  // Namespaced elements (gz:system_priority, kestrel:...) belong to other readers, as for every
  // other system (systems/common/plugin_params).
  std::erase_if(unread,
                [](const Element* ch) { return ch->name().find(':') != std::string::npos; });
  if (unread.empty()) return;
  std::string names;
  for (const Element* ch : unread) names += (names.empty() ? "<" : ", <") + ch->name() + ">";
  throw Error(unread.front()->where(), "unknown parameter " + names + " in <" + e.name() +
                                           ">: " + std::string(expected));
}

const Element* sensor_type_element(const Element& sensor, std::string_view type_element) {
  static constexpr std::string_view kCommon[] = {
      "pose", "update_rate", "topic", "always_on", "visualize", "plugin", "enable_metrics",
      "frame", "frame_id", "gz_frame_id", "ignition_frame_id", "ignition:frame_id",
      "gz:frame_id"};
  const Element* found = nullptr;
  for (const auto& ch : sensor.children()) {
    if (ch->name() == type_element) {
      found = ch.get();
      continue;
    }
    bool ok = false;
    for (auto k : kCommon) ok = ok || ch->name() == k;
    if (!ok) {
      throw Error(ch->where(), "unknown element <" + ch->name() + "> in <sensor type=\"" +
                                   sensor.attribute("type").value_or("") + "\">: expected <" +
                                   std::string(type_element) + "> or a common sensor element");
    }
  }
  return found;
}

}  // namespace kestrel::sensors
