#include "sitl/actuator_map.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace kestrel::sitl {

ChannelMap ChannelMap::identity(int count, double scale) {
  ChannelMap m;
  for (int i = 0; i < count; ++i) m.channels.push_back({i, i, scale, 0.0});
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
      throw Error(e->where(),
                  who + ": channel " + std::to_string(c.index) + " is mapped twice");
    }
    if (c.rotor < 0 || c.rotor > 255) {
      throw Error(e->where(), who + ": <channel><rotor> " + std::to_string(c.rotor) +
                                  " is out of range (expected an actuator_number 0..255)");
    }
    if (!std::isfinite(c.scale) || c.scale < 0 || !std::isfinite(c.offset)) {
      throw Error(e->where(), who + ": <channel> scale must be a finite rotor speed >= 0 rad/s "
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

void ChannelMap::apply(std::span<const double> inputs, bool active, std::vector<double>& out) const {
  out.assign(rotor_count(), 0.0);
  if (!active) return;
  for (const auto& c : channels) {
    if (static_cast<std::size_t>(c.index) >= inputs.size()) continue;
    double u = inputs[static_cast<std::size_t>(c.index)];
    if (!std::isfinite(u)) u = 0;
    out[static_cast<std::size_t>(c.rotor)] = c.scale * std::clamp(u + c.offset, 0.0, 1.0);
  }
}

}  // namespace kestrel::sitl
