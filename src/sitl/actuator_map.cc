#include "sitl/actuator_map.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kestrel/components/messages.h"

namespace kestrel::sitl {

ChannelMap ChannelMap::identity(int count, double scale) {
  ChannelMap m;
  for (int i = 0; i < count; ++i) m.channels.push_back({i, i, scale, 0.0, ""});
  return m;
}

ChannelMap ChannelMap::parse(const Element& config, const ChannelMap& fallback, int max_channels,
                             double default_scale, const std::string& who) {
  const auto elements = config.children("channel");
  if (elements.empty()) return fallback;
  ChannelMap m;
  std::set<int> seen;
  for (const Element* e : elements) {
    Channel c;
    c.where = e->where();
    c.index = e->get<int>("index");
    c.rotor = e->get<int>("rotor");
    c.scale = e->get_or<double>("scale", default_scale);
    c.offset = e->get_or<double>("offset", 0.0);
    if (c.index < 0 || c.index >= max_channels) {
      throw Error(e->where(), who + ": <channel><index> " + std::to_string(c.index) +
                                  " is out of range (expected 0.." +
                                  std::to_string(max_channels - 1) + ")");
    }
    if (!seen.insert(c.index).second) {
      throw Error(e->where(), who + ": channel " + std::to_string(c.index) + " is mapped twice");
    }
    if (c.rotor < 0 || c.rotor > 255) {
      throw Error(e->where(), who + ": <channel><rotor> " + std::to_string(c.rotor) +
                                  " is out of range (expected an actuator_number 0..255)");
    }
    if (!std::isfinite(c.scale) || c.scale < 0 || !std::isfinite(c.offset)) {
      throw Error(e->where(), who +
                                  ": <channel> scale must be a finite rotor speed >= 0 rad/s "
                                  "and offset finite");
    }
    for (const Element* u : e->unread_children()) {
      throw Error(u->where(), who + ": unknown parameter <" + u->name() +
                                  "> in <channel> (expected index, rotor, scale, offset)");
    }
    m.channels.push_back(c);
  }
  return m;
}

std::size_t ChannelMap::rotor_count() const {
  int n = 0;
  for (const auto& c : channels) n = std::max(n, c.rotor + 1);
  return static_cast<std::size_t>(n);
}

void ChannelMap::apply(std::span<const double> inputs, bool active,
                       std::vector<double>& out) const {
  out.assign(rotor_count(), 0.0);
  if (!active) return;
  for (const auto& c : channels) {
    if (static_cast<std::size_t>(c.index) >= inputs.size()) continue;
    double u = inputs[static_cast<std::size_t>(c.index)];
    if (!std::isfinite(u)) u = 0;
    out[static_cast<std::size_t>(c.rotor)] = c.scale * std::clamp(u + c.offset, 0.0, 1.0);
  }
}

SurfaceMap SurfaceMap::parse(const Element& config, const ChannelMap& rotors, int max_channels,
                             const std::string& who) {
  SurfaceMap m;
  std::set<int> seen;
  for (const auto& c : rotors.channels) seen.insert(c.index);
  for (const Element* e : config.children("surface")) {
    Surface s;
    s.where = e->where();
    s.index = e->get<int>("index");
    s.topic = e->get<std::string>("topic");
    s.actuator = e->get_or<int>("actuator", -1);
    if (e->has("actuator") && s.actuator < 0) {
      throw Error(e->where(), who + ": <surface><actuator> must be >= 0");
    }
    s.scale = e->get_or<double>("scale", 0.5);
    s.offset = e->get_or<double>("offset", 0.0);
    if (s.index < 0 || s.index >= max_channels) {
      throw Error(e->where(), who + ": <surface><index> " + std::to_string(s.index) +
                                  " is out of range (expected 0.." +
                                  std::to_string(max_channels - 1) + ")");
    }
    if (!seen.insert(s.index).second) {
      throw Error(e->where(), who + ": channel " + std::to_string(s.index) +
                                  " is mapped twice (a <channel> or another <surface>)");
    }
    if (s.topic.empty()) throw Error(e->where(), who + ": <surface><topic> is empty");
    if (!std::isfinite(s.scale) || !std::isfinite(s.offset)) {
      throw Error(e->where(), who + ": <surface> scale and offset must be finite [rad]");
    }
    for (const Element* u : e->unread_children()) {
      throw Error(u->where(), who + ": unknown parameter <" + u->name() +
                                  "> in <surface> (expected index, topic, actuator, scale, "
                                  "offset)");
    }
    m.surfaces.push_back(std::move(s));
  }
  return m;
}

void SurfaceMap::resolve(const ecs::Registry& r, ecs::Entity model, const std::string& who) {
  const auto* in = r.try_get<components::TopicInputs>(model);
  for (Surface& s : surfaces) {
    s.entries.clear();
    if (in) {
      if (s.actuator < 0) {
        for (std::size_t i = 0; i < in->real.size(); ++i) {
          if (in->real[i].topic == s.topic) s.entries.push_back(i);
        }
      } else {
        for (std::size_t i = 0; i < in->actuators.size(); ++i) {
          if (in->actuators[i].topic == s.topic) s.entries.push_back(i);
        }
      }
    }
    if (s.entries.empty()) {
      throw Error(s.where, who + ": output channel " + std::to_string(s.index) +
                               " maps to nothing: no JointPositionController of " +
                               r.describe(model) + " listens on " +
                               (s.actuator < 0 ? "the Double topic " : "the Actuators topic ") +
                               s.topic);
    }
  }
}

void SurfaceMap::apply(std::span<const double> inputs, bool unipolar, bool active, ecs::Registry& r,
                       ecs::Entity model) const {
  if (surfaces.empty()) return;
  auto& in = r.get<components::TopicInputs>(model);
  for (const Surface& s : surfaces) {
    double u = 0;  // neutral: inactive, or a channel that outputs nothing (not finite)
    if (active && static_cast<std::size_t>(s.index) < inputs.size()) {
      const double v = inputs[static_cast<std::size_t>(s.index)];
      if (std::isfinite(v)) u = unipolar ? 2 * v - 1 : v;
    }
    const double position = s.scale * std::clamp(u, -1.0, 1.0) + s.offset;
    for (std::size_t e : s.entries) {
      if (s.actuator < 0) {
        in.real[e].value = position;
        ++in.real[e].count;
      } else {
        auto& a = in.actuators[e];
        const auto k = static_cast<std::size_t>(s.actuator);
        if (a.position.size() <= k) a.position.resize(k + 1, 0.0);
        a.position[k] = position;
        ++a.count;
      }
    }
  }
}

}  // namespace kestrel::sitl
