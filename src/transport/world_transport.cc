// The world transport system: world control, statistics, clock, set_physics, /gazebo/worlds,
// and the sensor/actuator bridges (bridges.cc). Service callbacks run on transport threads and
// never touch the registry: they queue work on the Runner.
#include <fmt/format.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/clock.pb.h>
#include <ignition/msgs/physics.pb.h>
#include <ignition/msgs/stringmsg_v.pb.h>
#include <ignition/msgs/world_control.pb.h>
#include <ignition/msgs/world_stats.pb.h>

#include <cmath>
#include <optional>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/transport/transport.h"
#include "transport/bridges.h"
#include "transport/common.h"
#include "transport/outbox.h"

namespace kestrel::transport {
namespace {

namespace c = kestrel::components;
namespace msgs = ignition::msgs;
using detail::log_line;
using SteadyClock = std::chrono::steady_clock;

void add_header_value(msgs::Header* h, const std::string& key, std::uint64_t v) {
  auto* d = h->add_data();
  d->set_key(key);
  d->add_value(std::to_string(v));
}

class WorldTransport final : public System, public ISystemConfigure, public ISystemPostUpdate {
 public:
  WorldTransport(sim::Runner& runner, Options options)
      : runner_(runner), options_(std::move(options)) {
    if (!(options_.stats_rate_hz > 0)) {
      throw Error(
          fmt::format("transport: stats rate must be > 0 Hz, found {}", options_.stats_rate_hz));
    }
  }

  ~WorldTransport() override {
    if (outbox_) outbox_->flush();  // no queued Subscribe runs after node_ is gone
    node_.reset();
  }

  void configure(ecs::Entity, const Element&, ecs::Registry& registry,
                 sim::EventBus& events) override {
    world_ =
        ignition::transport::TopicUtils::AsValidTopic(registry.get<c::Name>(runner_.world()).value);
    if (world_.empty()) {
      throw Error("transport: the world name '" + registry.get<c::Name>(runner_.world()).value +
                  "' cannot be part of a topic name");
    }
    prefix_ = "/world/" + world_;
    node_ = std::make_unique<ignition::transport::Node>();

    advertise_service<msgs::WorldControl, msgs::Boolean>(
        prefix_ + "/control",
        [this](const msgs::WorldControl& q, msgs::Boolean& a) { return control(q, a); });
    advertise_service<msgs::Physics, msgs::Boolean>(
        prefix_ + "/set_physics",
        [this](const msgs::Physics& q, msgs::Boolean& a) { return set_physics(q, a); });
    std::function<bool(msgs::StringMsg_V&)> worlds = [this](msgs::StringMsg_V& rep) {
      rep.add_data(world_);
      return true;
    };
    if (!node_->Advertise("/gazebo/worlds", worlds)) {
      throw Error("transport: cannot advertise service /gazebo/worlds");
    }
    outbox_ = std::make_shared<detail::Outbox>(counters_);
    const std::string stats_type = msgs::WorldStatistics().GetTypeName();
    const std::string clock_type = msgs::Clock().GetTypeName();
    stats_pub_ = outbox_->channel(prefix_ + "/stats", stats_type);
    stats_pub_root_ = outbox_->channel("/stats", stats_type);
    clock_pub_ = outbox_->channel(prefix_ + "/clock", clock_type, /*latest_only=*/true);
    clock_pub_root_ = outbox_->channel("/clock", clock_type, /*latest_only=*/true);

    bridges_ = std::make_unique<detail::Bridges>(runner_, *node_, *counters_, *outbox_);
    bridges_->configure(registry);

    detail::TransportReady ready;
    ready.runner = &runner_;
    ready.world = world_;
    ready.prefix = prefix_;
    ready.request_timeout = options_.request_timeout;
    ready.counters = counters_.get();  // valid while ready.outbox lives (it shares them)
    ready.outbox = outbox_;
    events.publish(ready);
    outbox_->flush();  // the world's topics are advertised before it runs
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& registry) override {
    const bool stepped = info.dt > Duration{0};
    const Duration now_sim = info.sim_time + info.dt;  // time at the end of this step
    const auto now = SteadyClock::now();
    const bool stats_due = now >= next_stats_;
    if (stats_due) {
      next_stats_ = now + std::chrono::duration_cast<SteadyClock::duration>(
                              std::chrono::duration<double>(1.0 / options_.stats_rate_hz));
    }
    if (stepped || stats_due) publish_clock(info, now_sim);
    if (stats_due) publish_stats(info, now_sim, registry);
    bridges_->post_update(info, registry);
  }

 private:
  // Every exception ends here as a refusal with its reason, never in ignition-transport.
  template <class Req, class Rep>
  void advertise_service(const std::string& name, std::function<bool(const Req&, Rep&)> cb) {
    std::function<bool(const Req&, Rep&)> guarded = [this, name, cb](const Req& q, Rep& a) {
      try {
        return cb(q, a);
      } catch (const std::exception& e) {
        return reject(a, name + ": refused: " + e.what());
      } catch (...) {
        return reject(a, name + ": refused: unexpected error");
      }
    };
    if (!node_->Advertise(name, guarded)) {
      throw Error("transport: cannot advertise service " + name);
    }
  }

  template <class M>
  void publish(detail::Outbox::Channel* ch, const M& m) {
    outbox_->send(ch, std::make_unique<M>(m));
  }

  void publish_clock(const UpdateInfo& info, Duration now_sim) {
    const bool a = clock_pub_->connected, b = clock_pub_root_->connected;
    if (!a && !b) return;
    msgs::Clock m;
    detail::stamp(m.mutable_header(), now_sim);
    detail::to_msg(now_sim, m.mutable_sim());
    detail::to_msg(info.real_time, m.mutable_real());
    detail::to_msg(
        std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch()),
        m.mutable_system());
    if (a) publish(clock_pub_, m);
    if (b) publish(clock_pub_root_, m);
  }

  void publish_stats(const UpdateInfo& info, Duration now_sim, const ecs::Registry& registry) {
    const auto s = runner_.stats();
    msgs::WorldStatistics m;
    auto* h = m.mutable_header();
    detail::stamp(h, now_sim);
    add_header_value(h, "dropped_messages", counters_->dropped.load());
    add_header_value(h, "publish_failures", counters_->publish_failures.load());
    add_header_value(h, "rejected_requests", counters_->rejected_requests.load());
    add_header_value(h, "subscribe_failures", counters_->subscribe_failures.load());
    add_header_value(h, "conflated_clock_messages", counters_->conflated.load());
    detail::to_msg(now_sim, m.mutable_sim_time());
    detail::to_msg(info.real_time, m.mutable_real_time());
    detail::to_msg(Duration{0}, m.mutable_pause_time());
    m.set_paused(info.paused);
    m.set_iterations(info.iterations + (info.dt > Duration{0} ? 1 : 0));
    m.set_model_count(static_cast<std::int32_t>(registry.count<c::Model>()));
    m.set_real_time_factor(s.rtf);
    detail::to_msg(runner_.options().step_size, m.mutable_step_size());
    publish(stats_pub_, m);
    publish(stats_pub_root_, m);
  }

  bool reject(msgs::Boolean& rep, const std::string& why) {
    ++counters_->rejected_requests;
    log_line(why);
    rep.set_data(false);
    return false;
  }

  // Gazebo's order: reset, then pause / step / multi_step, then run_to_sim_time.
  bool control(const msgs::WorldControl& req, msgs::Boolean& rep) {
    const std::string svc = prefix_ + "/control";
    if (req.has_reset() && req.reset().model_only()) {
      return reject(rep, svc + ": reset.model_only is not supported (use all or time_only)");
    }
    // Checked before anything is applied: a refused request changes nothing.
    std::optional<Duration> run_to;
    if (req.has_run_to_sim_time()) {
      const auto& t = req.run_to_sim_time();
      const double s = static_cast<double>(t.sec()) + 1e-9 * t.nsec();
      run_to = checked_seconds(s, /*positive=*/false);
      if (!run_to || *run_to < Duration{0} || t.nsec() < 0 || t.nsec() >= 1'000'000'000) {
        return reject(rep, fmt::format("{}: run_to_sim_time must be a time {} with nsec in [0, "
                                       "1e9), found sec {} nsec {}; nothing changed",
                                       svc, seconds_range(false), t.sec(), t.nsec()));
      }
      run_to = Duration{t.sec() * 1'000'000'000 + t.nsec()};
    }
    // One posted function: the whole request applies at one step boundary (a step between the
    // reset and the pause would leave the paused world one step past its reset).
    runner_.post([req, run_to](sim::Runner& r) {
      if (req.has_reset()) r.request_reset(req.reset().time_only() && !req.reset().all());
      // proto3: seed 0 means "not given". Applied after a reset in the same request.
      if (req.seed() != 0) r.set_seed(req.seed());
      if (req.multi_step() > 0) {
        r.step_n(req.multi_step());
      } else if (req.step()) {
        r.step_n(1);
      } else {
        r.set_paused(req.pause());
      }
      if (run_to) r.run_to(*run_to);
    });
    rep.set_data(true);
    return true;
  }

  // Only the fields a request carries change. Messages (gravity, magnetic_field)
  // have presence. proto3 scalars do not: max_step_size and real_time_factor count as present
  // when > 0, as in Gazebo, or when named in the header's "set_fields" data (the only way to
  // ask for real_time_factor 0, "as fast as possible").
  bool set_physics(const msgs::Physics& req, msgs::Boolean& rep) {
    const std::string svc = prefix_ + "/set_physics";
    bool named_step = false, named_rtf = false;
    for (const auto& d : req.header().data()) {
      if (d.key() != "set_fields") continue;
      for (const auto& f : d.value()) {
        if (f == "max_step_size") {
          named_step = true;
        } else if (f == "real_time_factor") {
          named_rtf = true;
        } else if (f != "gravity" && f != "magnetic_field") {
          return reject(rep, fmt::format("{}: header set_fields names '{}': expected "
                                         "max_step_size, real_time_factor, gravity or "
                                         "magnetic_field; nothing changed",
                                         svc, f));
        }
      }
    }
    const double step_s = req.max_step_size(), rtf = req.real_time_factor();
    if (step_s < 0 || rtf < 0 || !std::isfinite(step_s) || !std::isfinite(rtf)) {
      return reject(rep, fmt::format("{}: max_step_size and real_time_factor must be >= 0 "
                                     "(0 = unchanged unless named in header set_fields), found "
                                     "{} s and {}; nothing changed",
                                     svc, step_s, rtf));
    }
    const bool set_step = step_s > 0 || named_step, set_rtf = rtf > 0 || named_rtf;
    const auto checked = checked_seconds(step_s, /*positive=*/true);
    if (set_step && !checked) {
      return reject(rep, fmt::format("{}: max_step_size must be a step size {}, found {} s; "
                                     "nothing changed",
                                     svc, seconds_range(true), step_s));
    }
    const Duration dt = checked.value_or(Duration{0});
    auto vec = [](const msgs::Vector3d& v) {
      return ignition::math::Vector3d(v.x(), v.y(), v.z());
    };
    std::optional<ignition::math::Vector3d> gravity, field;
    if (req.has_gravity()) gravity = vec(req.gravity());
    if (req.has_magnetic_field()) field = vec(req.magnetic_field());
    for (const auto* v : {&gravity, &field}) {
      if (*v && !(*v)->IsFinite()) {
        return reject(rep, fmt::format("{}: gravity and magnetic_field must be finite, found "
                                       "({}, {}, {}); nothing changed",
                                       svc, (*v)->X(), (*v)->Y(), (*v)->Z()));
      }
    }
    // Applied on the step thread so that a refusal there (magnetic field with spherical
    // coordinates) still changes nothing.
    auto result = detail::on_step_thread<std::string>(
        runner_,
        [=](sim::Runner& r) -> std::string {
          auto& reg = r.registry();
          const ecs::Entity w = r.world();
          if (field && reg.has<c::SphericalCoordinates>(w)) {
            return "magnetic_field cannot be set in a world with <spherical_coordinates>: the "
                   "magnetometer uses the World Magnetic Model there";
          }
          // Physics compiles gravity into its model: it builds it now, with one trial step, and
          // a gravity it cannot simulate is put back before anything else changes.
          if (gravity) {
            const auto* had = reg.try_get<c::Gravity>(w);
            const bool existed = had != nullptr;
            const c::Gravity before = existed ? *had : c::Gravity{};
            reg.set<c::Gravity>(w, c::Gravity{*gravity});
            sim::CheckPhysics::Result check;
            r.events().publish(sim::CheckPhysics{&reg, &check});
            if (!check.error.empty()) {
              if (existed) {
                reg.set<c::Gravity>(w, before);
              } else {
                reg.remove<c::Gravity>(w);
              }
              return fmt::format(
                  "gravity ({}, {}, {}) m/s²: physics cannot simulate the world "
                  "with it: {}",
                  gravity->X(), gravity->Y(), gravity->Z(), check.error);
            }
          }
          if (set_step) r.set_step_size(dt);
          if (set_rtf) r.set_real_time_factor(rtf);
          if (auto* p = reg.try_get<c::PhysicsParams>(w); p && (set_step || set_rtf)) {
            if (set_step) p->max_step_size = dt;
            if (set_rtf) p->real_time_factor = rtf;
            reg.mark_changed<c::PhysicsParams>(w);
          }
          if (field) reg.set<c::MagneticField>(w, c::MagneticField{*field});
          return {};
        },
        options_.request_timeout);
    if (!result) return reject(rep, svc + ": the world did not run the request in time");
    if (!result->empty()) return reject(rep, svc + ": " + *result + "; nothing changed");
    rep.set_data(true);
    return true;
  }

  sim::Runner& runner_;
  Options options_;
  // Shared with the Outbox, which other systems hold and which can outlive this one.
  std::shared_ptr<detail::Counters> counters_ = std::make_shared<detail::Counters>();
  std::string world_, prefix_;
  std::shared_ptr<detail::Outbox> outbox_;
  detail::Outbox::Channel *stats_pub_ = nullptr, *stats_pub_root_ = nullptr, *clock_pub_ = nullptr,
                          *clock_pub_root_ = nullptr;
  SteadyClock::time_point next_stats_{};
  std::unique_ptr<detail::Bridges> bridges_;
  // Declared last, destroyed first: no subscription or service callback runs after the members
  // it uses are gone.
  std::unique_ptr<ignition::transport::Node> node_;
};

}  // namespace

std::unique_ptr<System> make_world_transport_system(sim::Runner& runner, Options options) {
  return std::make_unique<WorldTransport>(runner, std::move(options));
}

}  // namespace kestrel::transport
