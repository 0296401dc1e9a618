// Replay (include/kestrel/record/replay.h): the state channel read back and written into the
// registry each step instead of simulating.
#include "kestrel/record/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/error.h"
#include "kestrel/record/mcap.h"
#include "record/bytes.h"
#include "record/state.h"

namespace kestrel::record {

using namespace detail;  // NOLINT: the serialization helpers of this module
namespace c = kestrel::components;

namespace {

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t end = std::min(s.find('\n', at), s.size());
    out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

const std::string& meta(const std::string& path, const McapSummary::Channel& ch, const char* key) {
  const auto it = ch.metadata.find(key);
  if (it == ch.metadata.end()) {
    throw Error(path, fmt::format("the {} channel's metadata has no '{}': the recording is "
                                  "corrupt or not written by kestrel run --record",
                                  kStateTopic, key));
  }
  return it->second;
}

std::uint64_t meta_number(const std::string& path, const McapSummary::Channel& ch,
                          const char* key) {
  const std::string& s = meta(path, ch, key);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) {
    throw Error(path, fmt::format("the {} channel's metadata '{}' is '{}': expected an "
                                  "unsigned integer",
                                  kStateTopic, key, s));
  }
  return v;
}

}  // namespace

const char* build_version() { return KESTREL_VERSION; }

void read_state_channel(const McapSummary::Channel& ch, Recording& rec) {
  const auto format = ch.metadata.find("format");
  if (ch.encoding != kStateEncoding || format == ch.metadata.end() ||
      (format->second != kStateFormat && format->second != kStateFormatV1)) {
    throw Error(rec.path, fmt::format("its {} channel has encoding '{}', format '{}'; this "
                                      "Kestrel reads encoding '{}', format '{}' or '{}'",
                                      kStateTopic, ch.encoding,
                                      ch.metadata.count("format") ? ch.metadata.at("format") : "",
                                      kStateEncoding, kStateFormatV1, kStateFormat));
  }
  rec.format = format->second;
  rec.world = meta(rec.path, ch, "world");
  rec.world_name = meta(rec.path, ch, "world_name");
  rec.kestrel_version = meta(rec.path, ch, "kestrel_version");
  rec.seed = meta_number(rec.path, ch, "seed");
  rec.step_size = Duration(static_cast<std::int64_t>(meta_number(rec.path, ch, "step_size_ns")));
  rec.models = lines(meta(rec.path, ch, "models"));
  rec.links = lines(meta(rec.path, ch, "links"));
  rec.parents = state_parents(rec.models, rec.links);
}

namespace {

// One entity of a sample.
struct Values {
  std::uint8_t bits = 0;
  ignition::math::Pose3d world, pose;
  ignition::math::Vector3d linear, angular;
  std::vector<double> rotors;
};

class Cursor {
 public:
  Cursor(const std::string& path, Duration time, std::string_view s)
      : path_(path), time_(time), s_(s) {}
  void need(std::size_t n, const char* what) const {
    if (s_.size() - pos_ < n) {
      throw Error(path_, fmt::format("the {} sample at log time {} s is malformed: expected {} at "
                                     "byte {} of its {}, found its end",
                                     kStateTopic, exact_seconds(time_), what, pos_, s_.size()));
    }
  }
  std::uint8_t byte(const char* what) {
    need(1, what);
    return static_cast<std::uint8_t>(s_[pos_++]);
  }
  std::uint16_t count(const char* what) {
    need(2, what);
    const auto v = get<std::uint16_t>(s_.data() + pos_);
    pos_ += 2;
    return v;
  }
  double number(const char* what) {
    need(8, what);
    double v;
    std::memcpy(&v, s_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  ignition::math::Pose3d pose(const char* what) {
    double v[7];
    for (double& x : v) x = number(what);
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  }
  ignition::math::Vector3d vector(const char* what) {
    double v[3];
    for (double& x : v) x = number(what);
    return {v[0], v[1], v[2]};
  }
  // A presence byte: only bits the format defines, not the pose and the pose from the parent's.
  void presence(Values& v, bool link, std::uint8_t known) {
    const char* what = link ? "a link's presence byte" : "a model's presence byte";
    const std::size_t at = pos_;
    v.bits = byte(what);
    if ((v.bits & ~known) != 0 || ((v.bits & kHasPose) && (v.bits & kPoseFromParent))) {
      throw Error(path_, fmt::format("the {} sample at log time {} s is malformed: {} at byte {} "
                                     "is {:#04x}, which this format does not define",
                                     kStateTopic, exact_seconds(time_), what, at, v.bits));
    }
  }
  // Format 1: an entity's presence byte and its values, doubles whole.
  void read_v1(Values& v, bool link) {
    presence(v, link, kStateBitsV1);
    if (v.bits & kHasWorldPose) v.world = pose("a world pose");
    if (v.bits & kHasPose) v.pose = pose("a pose");
    if (v.bits & kHasLinearVel) v.linear = vector("a linear velocity");
    if (v.bits & kHasAngularVel) v.angular = vector("an angular velocity");
    v.rotors.clear();
    if (v.bits & kHasRotors) {
      v.rotors.resize(count("a rotor count"));
      for (double& w : v.rotors) w = number("a rotor velocity");
    }
  }
  // Format 2: an entity's presence byte and rotor count; returns how many doubles it has.
  std::size_t header_v2(Values& v, bool link) {
    presence(v, link, kStateBitsV2);
    if (v.bits & kHasRotors) {
      v.rotors.resize(count("a rotor count"));
    } else {
      v.rotors.clear();
    }
    return (v.bits & kHasWorldPose ? 7 : 0) + (v.bits & kHasPose ? 7 : 0) +
           (v.bits & kHasLinearVel ? 3 : 0) + (v.bits & kHasAngularVel ? 3 : 0) +
           (v.bits & kHasRotors ? v.rotors.size() : 0);
  }
  // Format 2: the sample's n doubles, each split into its two high bytes (all of them first)
  // and its six low bytes; split() takes them, next() gives them in turn.
  void split(std::size_t n) {
    need(8 * n, "the sample's doubles");
    hi_ = pos_;
    lo_ = pos_ + 2 * n;
    pos_ += 8 * n;
  }
  double next() {
    std::uint16_t top;
    std::memcpy(&top, s_.data() + hi_, 2);
    std::uint64_t low = 0;
    std::memcpy(&low, s_.data() + lo_, 6);
    hi_ += 2;
    lo_ += 6;
    return std::bit_cast<double>(low | std::uint64_t{top} << 48);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_, fmt::format("the {} sample at log time {} s is malformed: {}", kStateTopic,
                                   exact_seconds(time_), what));
  }
  void end() const {
    if (pos_ != s_.size()) {
      throw Error(path_, fmt::format("the {} sample at log time {} s has {} bytes after its last "
                                     "link: it does not match the recording's layout",
                                     kStateTopic, exact_seconds(time_), s_.size() - pos_));
    }
  }

 private:
  const std::string& path_;
  Duration time_;
  std::string_view s_;
  std::size_t pos_ = 0;
  std::size_t hi_ = 0, lo_ = 0;  // format 2: the next double's high and low bytes
};

// A sample's values: models first, then links, in the layout's order.
void decode(const Recording& rec, Duration time, std::string_view data, std::vector<Values>& out) {
  Cursor in(rec.path, time, data);
  in.byte("the sample's kind");
  out.resize(rec.models.size() + rec.links.size());
  if (rec.format == kStateFormatV1) {
    for (std::size_t i = 0; i < out.size(); ++i) in.read_v1(out[i], i >= rec.models.size());
  } else {
    std::size_t doubles = 0;
    for (std::size_t i = 0; i < out.size(); ++i) doubles += in.header_v2(out[i], i >= rec.models.size());
    in.split(doubles);
    auto pose = [&] {
      double x[7];
      for (double& d : x) d = in.next();
      return ignition::math::Pose3d(x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
    };
    auto vector = [&] {
      double x[3];
      for (double& d : x) d = in.next();
      return ignition::math::Vector3d(x[0], x[1], x[2]);
    };
    for (Values& v : out) {
      if (v.bits & kHasWorldPose) v.world = pose();
      if (v.bits & kHasPose) v.pose = pose();
      if (v.bits & kHasLinearVel) v.linear = vector();
      if (v.bits & kHasAngularVel) v.angular = vector();
      for (double& w : v.rotors) w = in.next();
    }
  }
  in.end();
  // Poses given by the parent's: every world pose is read by now.
  for (std::size_t i = 0; i < out.size(); ++i) {
    Values& v = out[i];
    if (!(v.bits & kPoseFromParent)) continue;
    const int p = rec.parents[i];
    const Values* parent = p >= 0 ? &out[static_cast<std::size_t>(p)] : nullptr;
    const auto& name = i < rec.models.size() ? rec.models[i] : rec.links[i - rec.models.size()];
    if (!(v.bits & kHasWorldPose) || p == kNoParent || (parent && !(parent->bits & kHasWorldPose))) {
      in.fail(fmt::format("'{}' has its pose from its parent's, and {}", name,
                          !(v.bits & kHasWorldPose) ? "no world pose"
                          : p == kNoParent          ? "no parent in the layout"
                                                    : "its parent has no world pose"));
    }
    v.pose = state_pose_from_parent(parent ? &parent->world : nullptr, v.world);
    v.bits = static_cast<std::uint8_t>(v.bits | kHasPose);
  }
}

}  // namespace

StateTable::StateTable(const McapSummary::Channel& channel, std::string path) {
  layout_.path = std::move(path);
  read_state_channel(channel, layout_);
}

std::vector<std::vector<std::pair<std::string, std::string>>> StateTable::rows(
    Duration time, std::string_view data) const {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  if (!data.empty() && data[0] == char(kStateEnd)) return out;
  std::vector<Values> values;
  decode(layout_, time, data, values);
  std::size_t rotors = 0;
  for (const auto& v : values) rotors = std::max(rotors, v.rotors.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Values& v = values[i];
    auto& row = out.emplace_back();
    const bool link = i >= layout_.models.size();
    row.emplace_back("entity", link ? layout_.links[i - layout_.models.size()] : layout_.models[i]);
    row.emplace_back("kind", link ? "link" : "model");
    auto cell = [&](const char* name, bool present, double x) {
      row.emplace_back(name, present ? fmt::format("{}", x) : "");
    };
    const bool w = v.bits & kHasWorldPose, p = v.bits & kHasPose;
    const bool lv = v.bits & kHasLinearVel, av = v.bits & kHasAngularVel;
    cell("x", w, v.world.Pos().X());
    cell("y", w, v.world.Pos().Y());
    cell("z", w, v.world.Pos().Z());
    cell("qw", w, v.world.Rot().W());
    cell("qx", w, v.world.Rot().X());
    cell("qy", w, v.world.Rot().Y());
    cell("qz", w, v.world.Rot().Z());
    cell("rel_x", p, v.pose.Pos().X());
    cell("rel_y", p, v.pose.Pos().Y());
    cell("rel_z", p, v.pose.Pos().Z());
    cell("rel_qw", p, v.pose.Rot().W());
    cell("rel_qx", p, v.pose.Rot().X());
    cell("rel_qy", p, v.pose.Rot().Y());
    cell("rel_qz", p, v.pose.Rot().Z());
    cell("vx", lv, v.linear.X());
    cell("vy", lv, v.linear.Y());
    cell("vz", lv, v.linear.Z());
    cell("wx", av, v.angular.X());
    cell("wy", av, v.angular.Y());
    cell("wz", av, v.angular.Z());
    for (std::size_t k = 0; k < rotors; ++k) {
      row.emplace_back(fmt::format("rotor_{}", k),
                       k < v.rotors.size() ? fmt::format("{}", v.rotors[k]) : "");
    }
  }
  return out;
}

Recording read_recording(const std::filesystem::path& path) {
  Recording rec;
  rec.path = path.string();
  std::uint16_t channel = 0;
  bool ended = false;  // no samples follow (the models changed, or a reset)
  rec.complete = read_messages(
      path,
      [&](const McapSummary::Channel& ch) {
        if (ch.topic != kStateTopic) return;
        read_state_channel(ch, rec);
        channel = ch.id;
      },
      [&](const McapMessage& m) {
        if (m.channel != channel || channel == 0 || ended) return;
        const Duration t(static_cast<std::int64_t>(m.log_time));
        if (m.data.empty() || m.data[0] == char(kStateEnd)) {
          ended = true;
          rec.ends_early = fmt::format(
              "the recorded world's models changed at sim time {} s (a model spawned or removed)",
              exact_seconds(t));
          return;
        }
        if (!rec.samples.empty() && t <= rec.samples.back().time) {
          ended = true;
          rec.ends_early = fmt::format("the recorded run was reset at sim time {} s",
                                       exact_seconds(rec.samples.back().time));
          return;
        }
        rec.samples.push_back({t, rec.data.size(), m.data.size()});
        rec.data.append(m.data);
      },
      /*allow_truncated=*/true);
  if (channel == 0) {
    throw Error(rec.path, fmt::format("has no {} channel: replay needs the recorded state (a "
                                      "recording made with --record-topics that left it out, or "
                                      "by an older Kestrel)",
                                      kStateTopic));
  }
  return rec;
}

void check_world(const Recording& rec, const ecs::Registry& reg, ecs::Entity world,
                 std::optional<Duration> step_size) {
  const StateEntities now = state_entities(reg, world);
  std::string problems;
  auto compare = [&](const std::vector<std::string>& recorded, const std::vector<ecs::Entity>& es,
                     const char* noun) {
    std::set<std::string> have, want(recorded.begin(), recorded.end());
    for (ecs::Entity e : es) have.insert(reg.scoped_name(e));
    for (const auto& n : recorded) {
      if (!have.count(n)) problems += fmt::format("\n  {} '{}' was recorded and is not in the world", noun, n);
    }
    for (const auto& n : have) {
      if (!want.count(n)) problems += fmt::format("\n  {} '{}' is in the world and was not recorded", noun, n);
    }
  };
  compare(rec.models, now.models, "model");
  compare(rec.links, now.links, "link");
  if (step_size && *step_size != rec.step_size) {
    problems += fmt::format("\n  the world's step size is {} s, the recording's {} s",
                            exact_seconds(*step_size), exact_seconds(rec.step_size));
  }
  if (!problems.empty()) {
    throw Error(rec.path, fmt::format("does not match the world {} it replays (it changed since "
                                      "it was recorded?):{}",
                                      rec.world.string(), problems));
  }
}

namespace {

class Replay final : public System,
                     public ISystemConfigure,
                     public ISystemUpdate,
                     public ISystemReset {
 public:
  explicit Replay(std::shared_ptr<const Recording> rec) : rec_(std::move(rec)) {}

  void configure(ecs::Entity world, const Element&, ecs::Registry& reg, sim::EventBus&) override {
    check_world(*rec_, reg, world, std::nullopt);  // the step size is checked each step
    for (const auto* names : {&rec_->models, &rec_->links}) {
      for (const auto& n : *names) entities_.push_back(reg.find_scoped(n));
    }
  }

  void update(const UpdateInfo& info, ecs::Registry& reg) override {
    if (info.paused) return;
    if (info.dt != rec_->step_size) {
      throw Error(rec_->path, fmt::format("was recorded with steps of {} s; the replay's step is "
                                          "{} s (set_physics?): replay needs the recorded step",
                                          exact_seconds(rec_->step_size), exact_seconds(info.dt)));
    }
    const Duration t = info.sim_time + info.dt;  // the state the recorded physics wrote now
    const auto& s = rec_->samples;
    const auto it = std::upper_bound(s.begin(), s.end(), t,
                                     [](Duration a, const Recording::Sample& b) { return a < b.time; });
    if (it == s.begin()) return;  // before the first sample: the world as loaded
    const std::size_t i = static_cast<std::size_t>(it - s.begin()) - 1;
    if (i == applied_) return;
    applied_ = i;
    apply(s[i], reg);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { applied_ = kNone; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};

  template <class T, class V>
  static void write(ecs::Registry& reg, ecs::Entity e, const V& value) {
    if (T* c = reg.try_get<T>(e)) {
      c->value = value;
    } else {
      reg.add<T>(e).value = value;
    }
  }

  void apply(const Recording::Sample& sample, ecs::Registry& reg) {
    decode(*rec_, sample.time, std::string_view(rec_->data).substr(sample.offset, sample.size),
           values_);
    for (std::size_t i = 0; i < values_.size(); ++i) {
      const Values& v = values_[i];
      const ecs::Entity e = entities_[i];
      if (v.bits & kHasWorldPose) write<c::WorldPose>(reg, e, v.world);
      if (v.bits & kHasPose) write<c::Pose>(reg, e, v.pose);
      if (v.bits & kHasLinearVel) write<c::WorldLinearVelocity>(reg, e, v.linear);
      if (v.bits & kHasAngularVel) write<c::WorldAngularVelocity>(reg, e, v.angular);
      if (v.bits & kHasRotors) {
        auto* r = reg.try_get<c::RotorVelocities>(e);
        (r ? *r : reg.add<c::RotorVelocities>(e)).velocity = v.rotors;
      }
    }
  }

  std::shared_ptr<const Recording> rec_;
  std::vector<ecs::Entity> entities_;  // the layout's models, then its links
  std::vector<Values> values_;
  std::size_t applied_ = kNone;
};

}  // namespace

std::unique_ptr<System> make_replay_system(std::shared_ptr<const Recording> recording) {
  return std::make_unique<Replay>(std::move(recording));
}

}  // namespace kestrel::record
