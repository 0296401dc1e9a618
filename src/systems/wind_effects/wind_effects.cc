// WindEffects: the mean wind is the world's <wind><linear_velocity> (components::Wind at load);
// each step the horizontal magnitude and direction follow first-order lags with sine and noise
// terms, the vertical component gets noise, an optional discrete "1 − cos" gust is added, the
// result is written to components::Wind, and every link with EnableWind is pushed by
// F = k · m · (wind + gust − v_link) at its centre of mass (k = force_approximation_scaling_factor,
// v_link the link origin's velocity; gust = components::WindGust, a fault's, not part of the Wind
// written).
// Only links that can move are pushed: a link of a static model, or one welded to the world by a
// chain of fixed joints, is named once in a warning (Gazebo's wind demo has such a roof).

#include "wind_effects.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using sensors::Noise;
using sensors::reject_unread;

constexpr double kTwoPi = 2.0 * std::numbers::pi;
constexpr double kDeg = std::numbers::pi / 180.0;

// One filtered, oscillating, noisy scalar (Gazebo's horizontal magnitude or direction, or the
// vertical component), as gz-sim's WindEffects updates it each step:
//   state ← (1 − k)·state + k·mean with k = dt / time_for_rise (at most 1: Kestrel's guard for a
//   time_for_rise shorter than the step, where Gazebo's filter would overshoot);
//   value = state + amplitude·scale·sin(2π t / period), then noise.
struct Channel {
  double time_for_rise = 1;  // [s], Gazebo's default
  double sin_amplitude = 0;  // magnitude: fraction of the filtered mean; direction: degrees
  double sin_period = 1;     // [s], Gazebo's default
  Noise noise;
  double state = 0;

  // `scale_by_state`: the sine's amplitude is a fraction of the filtered mean (magnitude).
  double step(double mean, double t, double dt, bool scale_by_state) {
    const double k = std::min(1.0, dt / time_for_rise);
    state = (1.0 - k) * state + k * mean;
    const double scale = scale_by_state ? state : 1.0;
    const double v = state + sin_amplitude * scale * std::sin(kTwoPi * t / sin_period);
    return noise.apply(v, dt);
  }
};

class WindEffects final : public System,
                          public ISystemConfigure,
                          public ISystemPreUpdate,
                          public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    world_ = entity;
    if (!r.has<c::World>(world_)) {
      throw Error(config.where(),
                  "WindEffects must be attached to the world, found " + r.describe(entity));
    }
    const auto* wind = r.try_get<c::Wind>(world_);
    mean_ = wind ? wind->linear_velocity : Vector3d::Zero;
    if (!wind) r.add<c::Wind>(world_, c::Wind{mean_});
    const std::string scoped = r.scoped_name(world_);
    const std::uint64_t seed = r.has<c::WorldSeed>(world_) ? r.get<c::WorldSeed>(world_).value : 0;
    auto noise = [&](const Element* parent, const char* channel) {
      const Element* n = parent ? parent->child("noise") : nullptr;
      return Noise(sensors::parse_noise(n), sensors::derive_seed(seed, scoped, channel));
    };

    k_ = config.get_or<double>("force_approximation_scaling_factor", 1.0);
    if (!(k_ >= 0) || !std::isfinite(k_)) {
      throw Error(config.where(), "<force_approximation_scaling_factor> must be >= 0 [1/s]");
    }
    const Element* h = config.child("horizontal");
    const Element* mag = h ? h->child("magnitude") : nullptr;
    const Element* dir = h ? h->child("direction") : nullptr;
    read_channel(mag, "amplitude_percent", magnitude_);
    magnitude_.noise = noise(mag, "wind/magnitude");
    read_channel(dir, "amplitude", direction_);
    direction_.noise = noise(dir, "wind/direction");
    const Element* v = config.child("vertical");
    if (v) {
      vertical_.time_for_rise = get_time_for_rise(*v);
    }
    vertical_.noise = noise(v, "wind/vertical");
    if (mag) reject_unread(*mag, "expected <time_for_rise>, <sin>, <noise>");
    if (dir) reject_unread(*dir, "expected <time_for_rise>, <sin>, <noise>");
    if (h) reject_unread(*h, "expected <magnitude>, <direction>");
    if (v) reject_unread(*v, "expected <time_for_rise>, <noise>");
    if (const Element* g = config.child("gust")) {
      gust_start_ = from_seconds(g->get<double>("start"));
      gust_duration_ = from_seconds(g->get<double>("duration"));
      gust_velocity_ = g->get<Vector3d>("velocity");
      if (gust_duration_ <= Duration{0}) {
        throw Error(g->where(), "<gust><duration> must be > 0 [s]");
      }
      reject_unread(*g, "expected <start>, <duration>, <velocity>");
    }
    for (const char* key : {"gz:system_priority", "ignition:system_priority"}) config.child(key);
    reject_unread(config,
                  "expected <force_approximation_scaling_factor>, <horizontal>, "
                  "<vertical>, <gust>");
    // The filters rise from calm (magnitude 0) and start at the mean direction.
    direction_.state = std::atan2(mean_.Y(), mean_.X()) / kDeg;
    initial_ = State{magnitude_, direction_, vertical_};
    // Which links wind pushes; the others are named now, so `kestrel check` shows them too.
    if (k_ > 0) refresh(r);
    // A run-time seed change (sim::Runner::set_seed): the noise streams restart from it (the
    // filters keep their state); reset returns to the streams of the world's initial seed.
    reseed_ =
        events.subscribe<sim::WorldSeedChanged>([this, scoped](const sim::WorldSeedChanged& e) {
          auto again = [&](const Noise& n, const char* channel) {
            return Noise(n.params(), sensors::derive_seed(e.seed, scoped, channel));
          };
          magnitude_.noise = again(magnitude_.noise, "wind/magnitude");
          direction_.noise = again(direction_.noise, "wind/direction");
          vertical_.noise = again(vertical_.noise, "wind/vertical");
        });
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.dt <= Duration{0}) return;
    const double t = to_seconds(info.sim_time), dt = to_seconds(info.dt);
    const double mean_mag = std::hypot(mean_.X(), mean_.Y());
    const double mean_dir = std::atan2(mean_.Y(), mean_.X()) / kDeg;
    const double m = magnitude_.step(mean_mag, t, dt, true);
    const double d = direction_.step(mean_dir, t, dt, false) * kDeg;
    Vector3d wind(m * std::cos(d), m * std::sin(d), vertical_.step(mean_.Z(), t, dt, false));
    if (gust_duration_ > Duration{0} && info.sim_time >= gust_start_ &&
        info.sim_time < gust_start_ + gust_duration_) {
      const double phase = to_seconds(info.sim_time - gust_start_) / to_seconds(gust_duration_);
      wind += gust_velocity_ * (0.5 * (1.0 - std::cos(kTwoPi * phase)));
    }
    r.get<c::Wind>(world_).linear_velocity = wind;
    r.mark_changed<c::Wind>(world_, ecs::ComponentState::kPeriodic);
    if (k_ == 0) return;
    // A fault's gust (FaultInjection, which runs before) blows on top of the wind.
    if (const auto* gust = r.try_get<c::WindGust>(world_)) wind += gust->linear_velocity;

    refresh(r);
    for (ecs::Entity e : pushed_) {
      if (r.removal_pending(e)) continue;  // Physics drops it from this step on
      const auto* inertial = r.try_get<c::Inertial>(e);
      const auto* pose = r.try_get<c::WorldPose>(e);
      const auto* v = r.try_get<c::WorldLinearVelocity>(e);
      if (!inertial || !pose || !v) continue;  // not built by Physics yet
      // As Gazebo: the velocity of the link origin, the force at the centre of mass.
      const Vector3d r_com = pose->value.Rot().RotateVector(inertial->value.Pose().Pos());
      const Vector3d f = k_ * inertial->value.MassMatrix().Mass() * (wind - v->value);
      auto* cmd = r.try_get<c::ExternalWorldWrenchCmd>(e);
      if (!cmd) cmd = &r.add<c::ExternalWorldWrenchCmd>(e);
      cmd->force += f;
      cmd->torque += r_com.Cross(f);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    magnitude_ = initial_.magnitude;
    direction_ = initial_.direction;
    vertical_ = initial_.vertical;
  }

 private:
  // Gazebo refuses a time_for_rise of (nearly) 0; so does Kestrel, and a negative one.
  static double get_time_for_rise(const Element& e) {
    const double tau = e.get_or<double>("time_for_rise", 1.0);
    if (!(tau >= 1e-6) || !std::isfinite(tau)) {
      throw Error(e.child("time_for_rise")->where(),
                  fmt::format("<time_for_rise> must be > 0 [s] (Gazebo refuses less than 1e-6), "
                              "found {}",
                              tau));
    }
    return tau;
  }

  static void read_channel(const Element* e, const char* amplitude, Channel& ch) {
    if (!e) return;
    ch.time_for_rise = get_time_for_rise(*e);
    if (const Element* s = e->child("sin")) {
      ch.sin_amplitude = s->get_or<double>(amplitude, 0.0);
      ch.sin_period = s->get_or<double>("period", 1.0);
      if (!(ch.sin_period > 0) || !std::isfinite(ch.sin_period)) {
        throw Error(s->where(), "<period> must be > 0 [s]");
      }
      reject_unread(*s, std::string("expected <") + amplitude + ">, <period>");
    }
  }

  // The links with <enable_wind> that can move, listed again whenever the registry's layout
  // changed (a link, joint or model added or removed changes it); the others are warned about
  // once each.
  void refresh(const ecs::Registry& r) {
    if (r.layout_epoch() == epoch_) return;
    epoch_ = r.layout_epoch();
    pushed_.clear();
    if (r.count<c::EnableWind>() == 0) return;
    std::unordered_map<ecs::Entity, ecs::Entity> joint_of;  // child link → its joint
    r.each<c::JointData>([&](ecs::Entity j, const c::JointData& jd) {
      if (!r.removal_pending(j)) joint_of.emplace(jd.child, j);
    });
    r.each<c::EnableWind, c::Link>([&](ecs::Entity e, const c::EnableWind& ew, const c::Link&) {
      if (!ew.value || r.removal_pending(e)) return;
      const std::string why = why_immobile(r, e, joint_of);
      if (why.empty()) {
        pushed_.push_back(e);
      } else if (told_.insert(e).second) {
        const auto* at = r.try_get<c::SourceLocation>(e);
        spdlog::warn(
            "{}: [{}] WindEffects: <enable_wind> has no effect on this link: it cannot "
            "move ({})",
            at ? fmt::format("{}:{}", at->file, at->line) : r.describe(e), r.scoped_name(e), why);
      }
    });
  }

  // Why a link cannot move, as Physics decides it (empty if it can): a static model above it,
  // or a chain of fixed joints from it up to the world.
  static std::string why_immobile(const ecs::Registry& r, ecs::Entity link,
                                  const std::unordered_map<ecs::Entity, ecs::Entity>& joint_of) {
    std::unordered_set<ecs::Entity> seen;  // a kinematic loop is Physics' error, not a hang here
    for (ecs::Entity l = link; seen.insert(l).second;) {
      for (ecs::Entity p = r.parent(l); p != ecs::kNullEntity; p = r.parent(p)) {
        if (const auto* s = r.try_get<c::Static>(p); s && s->value && r.has<c::Model>(p)) {
          return fmt::format("model '{}' is static", r.scoped_name(p));
        }
      }
      const auto it = joint_of.find(l);
      if (it == joint_of.end()) return {};  // a free link
      const auto& jd = r.get<c::JointData>(it->second);
      if (jd.type != c::JointType::kFixed) return {};
      if (jd.parent == ecs::kNullEntity) {
        const std::string weld = fmt::format("fixed joint '{}'", r.scoped_name(it->second));
        return l == link ? weld + " welds it to the world"
                         : fmt::format("fixed joints hold it to '{}', which {} welds to the world",
                                       r.scoped_name(l), weld);
      }
      l = jd.parent;
    }
    return {};
  }

  struct State {
    Channel magnitude, direction;
    Channel vertical;
  };
  ecs::Entity world_ = ecs::kNullEntity;
  Vector3d mean_;
  double k_ = 1.0;
  Channel magnitude_, direction_;
  Channel vertical_;
  Duration gust_start_{0}, gust_duration_{0};
  Vector3d gust_velocity_;
  State initial_;
  sim::EventBus::Subscription reseed_;
  std::uint64_t epoch_ = ~std::uint64_t{0};  // registry layout pushed_ was listed for
  std::vector<ecs::Entity> pushed_;          // links wind pushes, in entity order
  std::unordered_set<ecs::Entity> told_;     // links already named in a warning
};

}  // namespace

std::unique_ptr<System> make_wind_effects_system() { return std::make_unique<WindEffects>(); }

}  // namespace kestrel::systems
