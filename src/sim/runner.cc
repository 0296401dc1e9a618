#include "kestrel/sim/runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <thread>
#include <unordered_map>

#include "kestrel/components/pacing.h"
#include "kestrel/components/world.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/log.h"
#include "kestrel/core/task_pool.h"

namespace kestrel::sim {

using Clock = std::chrono::steady_clock;

// Parallel PostUpdate on n threads: n - 1 workers and the stepping thread.
struct Runner::Pool : TaskPool {
  explicit Pool(unsigned n) : TaskPool(n - 1) {}
  // Runs every task, returns when all are done; rethrows the first exception.
  void run_all(const std::vector<std::function<void()>>& tasks) {
    run(tasks.size(), [&](std::size_t i) { tasks[i](); });
  }
};

static void validate(const Runner::Options& o) {
  if (o.step_size <= Duration{0}) {
    throw Error("step size must be positive, found " + std::to_string(o.step_size.count()) + " ns");
  }
  if (!(o.real_time_factor >= 0)) {
    throw Error("real-time factor must be >= 0 (0 = as fast as possible), found " +
                std::to_string(o.real_time_factor));
  }
}

Runner::Runner(Options options) : options_(std::move(options)) {
  log::init();  // systems log through the one sink
  validate(options_);
  world_ = registry_.create();
  registry_.add<components::Name>(world_, options_.world_name);
  registry_.add<components::World>(world_);
  registry_.add<components::WorldSeed>(world_, options_.seed);
  paused_ = options_.paused;
  info_.dt = options_.step_size;
  paced_rtf_ = options_.real_time_factor;
  if (options_.post_update_threads > 1)
    pool_ = std::make_unique<Pool>(options_.post_update_threads);
  stop_signal_request_ = events_.subscribe<StopSignalRequest>([this](const StopSignalRequest& r) {
    if (r.signal) *r.signal = &stop_signal_;
  });
}

void Runner::stop() {
  stop_requested_ = true;
  stop_signal_.raise();
}

// Systems go first, while everything they may call back into (post(), the registry) exists.
Runner::~Runner() {
  pre_.clear(), upd_.clear(), post_.clear(), reset_.clear();
  while (!systems_.empty()) systems_.pop_back();
}

void Runner::set_options(Options options) {
  KESTREL_DEMAND(!configured_);
  validate(options);
  options_ = std::move(options);
  registry_.get<components::Name>(world_).value = options_.world_name;
  registry_.get<components::WorldSeed>(world_).value = options_.seed;
  paused_ = options_.paused;
  info_.dt = options_.step_size;
  paced_rtf_ = options_.real_time_factor;
  pool_.reset();
  if (options_.post_update_threads > 1)
    pool_ = std::make_unique<Pool>(options_.post_update_threads);
  model_pool_.reset();
}

SystemEntry Runner::make_entry(std::unique_ptr<System> system, ecs::Entity entity,
                               std::shared_ptr<const Element> config, std::string name,
                               std::string origin) const {
  KESTREL_DEMAND(system != nullptr);
  SystemEntry s;
  s.priority = system->priority();
  if (!config) config = Element::empty("plugin");
  // Gazebo's per-plugin override; both spellings. A near miss (Gazebo's own sensors.sdf writes
  // <gz::system_priority>) is ignored by Gazebo: Kestrel ignores it too, and says so.
  for (const char* key : {"gz:system_priority", "ignition:system_priority"}) {
    if (config->has(key)) s.priority = config->get<int>(key);
  }
  for (const auto& ch : config->children()) {
    const std::string& n = ch->name();
    if (n.ends_with("system_priority") && n != "gz:system_priority" &&
        n != "ignition:system_priority") {
      spdlog::warn(
          "{}: <{}> is not Gazebo's <gz:system_priority>: ignored, '{}' keeps its "
          "priority {}",
          ch->where(), n, name, s.priority);
    }
  }
  s.configure_priority = dynamic_cast<ISystemConfigurePriority*>(system.get());
  s.configure = dynamic_cast<ISystemConfigure*>(system.get());
  s.pre_update = dynamic_cast<ISystemPreUpdate*>(system.get());
  s.update = dynamic_cast<ISystemUpdate*>(system.get());
  s.post_update = dynamic_cast<ISystemPostUpdate*>(system.get());
  s.reset = dynamic_cast<ISystemReset*>(system.get());
  s.model_local = dynamic_cast<ISystemModelLocal*>(system.get());
  s.system = std::move(system);
  s.entity = entity == ecs::kNullEntity ? world_ : entity;
  s.config = std::move(config);
  s.name = std::move(name);
  s.origin = std::move(origin);
  return s;
}

SystemEntry& Runner::add_system(std::unique_ptr<System> system, ecs::Entity entity,
                                std::shared_ptr<const Element> config, std::string name,
                                std::string origin) {
  KESTREL_DEMAND(!configured_);
  systems_.push_back(
      make_entry(std::move(system), entity, std::move(config), std::move(name), std::move(origin)));
  return systems_.back();
}

void Runner::set_config(std::size_t index, std::shared_ptr<const Element> config) {
  KESTREL_DEMAND(!configured_ && index < systems_.size() && config);
  systems_[index].config = std::move(config);
}

static bool by_priority(const SystemEntry& a, const SystemEntry& b) {
  return a.priority < b.priority;
}

// The phase lists point into systems_: rebuilt whenever systems_ changes (between steps only).
void Runner::rebuild_phases() {
  pre_.clear(), upd_.clear(), post_.clear(), reset_.clear();
  for (auto& s : systems_) {
    if (!s.active) continue;
    if (s.pre_update) pre_.push_back(&s);
    if (s.update) upd_.push_back(&s);
    if (s.post_update) post_.push_back(&s);
    if (s.reset) reset_.push_back(&s);
  }
  // Runs of model-local PreUpdates, split by top-level model (the world's child the system's
  // entity descends from; none for a system on the world itself).
  auto top_model = [&](ecs::Entity e) {
    while (e != ecs::kNullEntity && e != world_) {
      const ecs::Entity p = registry_.parent(e);
      if (p == world_) return e;
      e = p;
    }
    return ecs::kNullEntity;
  };
  const unsigned threads = options_.model_threads ? options_.model_threads : usable_cpus();
  pre_segments_.clear();
  for (std::size_t i = 0; i < pre_.size();) {
    std::size_t j = i;
    std::vector<ecs::Entity> tops;
    while (j < pre_.size() && pre_[j]->model_local) {
      const ecs::Entity top = top_model(pre_[j]->entity);
      if (top == ecs::kNullEntity) break;
      tops.push_back(top);
      ++j;
    }
    PreSegment seg{i, std::max(j, i + 1), {}};
    std::unordered_map<ecs::Entity, std::size_t> group_of;
    for (std::size_t k = i; k < j; ++k) {
      const auto [it, fresh] = group_of.try_emplace(tops[k - i], seg.groups.size());
      if (fresh) seg.groups.emplace_back();
      seg.groups[it->second].push_back(k);
    }
    if (threads < 2 || seg.groups.size() < kMinParallelModels) seg.groups.clear();
    if (!seg.groups.empty() && !model_pool_) model_pool_ = std::make_unique<TaskPool>(threads - 1);
    i = seg.end;
    if (seg.groups.empty() && !pre_segments_.empty() && pre_segments_.back().groups.empty()) {
      pre_segments_.back().end = seg.end;  // serial runs are one segment
    } else {
      pre_segments_.push_back(std::move(seg));
    }
  }
}

// PreUpdate in priority order; the model-local runs by model on model_pool_. A run that fails
// reports the error the serial order would have met first (each model's systems stop at their
// first error; the others' ran as they would have before it).
void Runner::pre_update_phase() {
  for (const PreSegment& seg : pre_segments_) {
    if (seg.groups.empty()) {
      for (std::size_t k = seg.begin; k < seg.end; ++k)
        pre_[k]->pre_update->pre_update(info_, registry_);
      continue;
    }
    pre_errors_.assign(seg.groups.size(), {0, nullptr});
    model_pool_->run(seg.groups.size(), [&](std::size_t g) {
      for (std::size_t k : seg.groups[g]) {
        try {
          pre_[k]->pre_update->pre_update(info_, registry_);
        } catch (...) {
          pre_errors_[g] = {k, std::current_exception()};
          return;
        }
      }
    });
    const std::pair<std::size_t, std::exception_ptr>* first = nullptr;
    for (const auto& e : pre_errors_) {
      if (e.second && (!first || e.first < first->first)) first = &e;
    }
    if (first) std::rethrow_exception(first->second);
  }
}

void Runner::configure() {
  KESTREL_DEMAND(!configured_);
  std::stable_sort(systems_.begin(), systems_.end(), by_priority);
  for (auto& s : systems_) {
    if (s.configure_priority)
      s.configure_priority->configure_priority(s.entity, *s.config, registry_, events_);
  }
  // A signal during a long configure (a big physics build) stops it between systems.
  for (auto& s : systems_) {
    throw_if_interrupted("configuring " + s.name);
    if (s.configure) s.configure->configure(s.entity, *s.config, registry_, events_);
  }
  throw_if_interrupted("configuring the world");
  rebuild_phases();
  registry_.end_step();
  initial_.emplace(registry_.snapshot());
  configured_ = true;
  pace_origin_ = Clock::now();
}

void Runner::add_systems_now(std::vector<NewSystem> systems) {
  KESTREL_DEMAND(configured_);
  std::vector<SystemEntry> fresh;
  for (auto& n : systems) {
    fresh.push_back(make_entry(std::move(n.system), n.entity, std::move(n.config),
                               std::move(n.name), std::move(n.origin)));
    fresh.back().initial = false;
  }
  std::stable_sort(fresh.begin(), fresh.end(), by_priority);
  // An exception leaves `fresh` to be destroyed here: nothing was added.
  for (auto& s : fresh) {
    if (s.configure_priority)
      s.configure_priority->configure_priority(s.entity, *s.config, registry_, events_);
  }
  for (auto& s : fresh) {
    if (s.configure) s.configure->configure(s.entity, *s.config, registry_, events_);
  }
  for (auto& s : fresh) {
    auto at = std::upper_bound(systems_.begin(), systems_.end(), s, by_priority);
    systems_.insert(at, std::move(s));
  }
  rebuild_phases();
}

std::size_t Runner::remove_systems_of(ecs::Entity root) {
  KESTREL_DEMAND(configured_);
  std::size_t n = 0;
  for (auto it = systems_.begin(); it != systems_.end();) {
    ecs::Entity e = it->entity;
    while (e != ecs::kNullEntity && e != root) e = registry_.parent(e);
    if (e != root || !it->active) {
      ++it;
      continue;
    }
    ++n;
    if (it->initial) {
      it->active = false;
      ++it;
    } else {
      it = systems_.erase(it);
    }
  }
  if (n > 0) rebuild_phases();
  return n;
}

namespace {
// The runner whose posted functions this thread is running (apply_control), and where what
// they post goes: their own boundary's queue, not the next one's.
thread_local const Runner* t_applying = nullptr;
thread_local std::deque<std::function<void(Runner&)>>* t_nested = nullptr;
}  // namespace

void Runner::post(std::function<void(Runner&)> fn) {
  if (t_applying == this) {
    t_nested->push_back(std::move(fn));
    return;
  }
  std::lock_guard lock(control_mutex_);
  control_.push_back(std::move(fn));
}

void Runner::set_paused(bool paused) {
  post([paused](Runner& r) {
    r.paused_ = paused;
    r.steps_pending_ = 0;
  });
}

void Runner::step_n(std::uint64_t n) {
  post([n](Runner& r) {
    r.paused_ = true;
    r.steps_pending_ += n;
  });
}

void Runner::run_to(Duration t) {
  post([t](Runner& r) {
    r.run_to_ = t;
    r.paused_ = false;
  });
}

void Runner::request_reset(bool time_only) {
  post([time_only](Runner& r) { r.reset_now(time_only); });
}

void Runner::set_real_time_factor(double rtf) {
  if (!(rtf >= 0)) throw Error("real-time factor must be >= 0, found " + std::to_string(rtf));
  post([rtf](Runner& r) {
    r.options_.real_time_factor = rtf;
    r.pace_origin_ = Clock::now();
    r.pace_sim_origin_ = r.info_.sim_time;
  });
}

void Runner::set_step_size(Duration dt) {
  if (dt <= Duration{0}) throw Error("step size must be positive");
  post([dt](Runner& r) {
    r.options_.step_size = dt;
    r.info_.dt = dt;
  });
}

void Runner::set_seed(std::uint64_t seed) {
  post([seed](Runner& r) { r.seed_ = seed; });
}

// Ends the step; a seed change is applied here, where no removal is pending (snapshot's
// precondition) and no system is mid-phase.
void Runner::end_step() {
  registry_.end_step();
  if (!seed_) return;
  const std::uint64_t seed = *seed_;
  seed_.reset();
  options_.seed = seed;
  // Handlers derive their streams from the initial state with the new seed; what they write
  // there is discarded by restoring the current state.
  const ecs::Snapshot current = registry_.snapshot();
  registry_.restore(*initial_);
  registry_.get<components::WorldSeed>(world_).value = seed;
  events_.publish(WorldSeedChanged{seed, &registry_});
  registry_.restore(current);
  registry_.get<components::WorldSeed>(world_).value = seed;
  registry_.mark_changed<components::WorldSeed>(world_);
}

// What was posted before this boundary, then what those functions post (at this same boundary,
// so a request made of several changes — a reset, then a pause — never has a step between
// them). What other threads post meanwhile waits for the next boundary: a client that keeps
// posting cannot hold the world at one boundary.
void Runner::apply_control() {
  std::unique_lock lock(control_mutex_);
  if (control_.empty()) return;  // the usual step: no deque built (it allocates even when empty)
  std::deque<std::function<void(Runner&)>> pending, nested;
  pending.swap(control_);
  lock.unlock();
  struct Applying {  // restores the thread's state however a function leaves
    const Runner* runner;
    std::deque<std::function<void(Runner&)>>* queue;
    ~Applying() { t_applying = runner, t_nested = queue; }
  } restore{t_applying, t_nested};
  t_applying = this;
  t_nested = &nested;
  for (auto& fn : pending) fn(*this);
  while (!nested.empty()) {
    auto fn = std::move(nested.front());
    nested.pop_front();
    fn(*this);
  }
}

void Runner::reset_now(bool time_only) {
  KESTREL_DEMAND(configured_);
  info_.sim_time = Duration{0};
  info_.iterations = 0;
  info_.real_time = Duration{0};
  pace_origin_ = Clock::now();
  pace_sim_origin_ = Duration{0};
  window_.clear();
  if (time_only) return;
  // Back to the systems configure() left: run-time ones go (their entities are not in the
  // initial state), removed initial ones come back with their entities.
  std::erase_if(systems_, [](const SystemEntry& s) { return !s.initial; });
  for (auto& s : systems_) s.active = true;
  rebuild_phases();
  registry_.restore(*initial_);
  options_.seed = registry_.get<components::WorldSeed>(world_).value;
  UpdateInfo ri = info_;
  ri.dt = Duration{0};
  for (auto* s : reset_) s->reset->reset(ri, registry_);
  registry_.end_step();
}

void Runner::post_update_phase() {
  const ecs::Registry& ro = registry_;
  if (!pool_ || post_.size() < 2) {
    for (auto* s : post_) s->post_update->post_update(info_, ro);
    return;
  }
  std::vector<std::function<void()>> tasks;
  tasks.reserve(post_.size());
  for (auto* s : post_) tasks.emplace_back([&, s] { s->post_update->post_update(info_, ro); });
  pool_->run_all(tasks);
}

bool Runner::step_once() {
  KESTREL_DEMAND(configured_);
  apply_control();
  const bool stepping = !paused_ || steps_pending_ > 0;
  info_.paused = !stepping;
  info_.dt = stepping ? options_.step_size : Duration{0};
  if (!stepping) {
    // Paused: systems still see the world (PostUpdate only, as Gazebo does).
    post_update_phase();
    end_step();
    return false;
  }
  if (steps_pending_ > 0) --steps_pending_;

  // Command and control systems, then physics, then sensors and publishers.
  pre_update_phase();
  for (auto* s : upd_) s->update->update(info_, registry_);
  post_update_phase();
  events_.publish(StepDone{info_});
  end_step();

  // Time advances by exactly one step: an integer count of nanoseconds.
  ++info_.iterations;
  info_.sim_time += options_.step_size;
  if (run_to_ && info_.sim_time >= *run_to_) {
    run_to_.reset();
    paused_ = true;
  }
  return true;
}

// Real time while any system asks for it (components::RealTimePacing), else the world's factor.
double Runner::wanted_real_time_factor() const {
  bool real_time = false;
  registry_.each<components::RealTimePacing>(
      [&](ecs::Entity, const components::RealTimePacing& p) { real_time = real_time || p.active; });
  return real_time ? 1.0 : options_.real_time_factor;
}

void Runner::pace() {
  const double rtf = wanted_real_time_factor();
  if (rtf != paced_rtf_) {  // a new factor counts from now
    paced_rtf_ = rtf;
    pace_origin_ = Clock::now();
    pace_sim_origin_ = info_.sim_time;
    return;
  }
  if (rtf <= 0) return;
  // Deadline of this sim time measured from the pacing origin: no drift accumulates.
  const auto sim_elapsed = info_.sim_time - pace_sim_origin_;
  const auto deadline =
      pace_origin_ + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double, std::nano>(sim_elapsed.count() / rtf));
  auto now = Clock::now();
  if (now > deadline + std::chrono::milliseconds(100)) {
    // Far behind (debugger, overload, a system that waited): re-anchor instead of racing.
    pace_origin_ = now;
    pace_sim_origin_ = info_.sim_time;
    return;
  }
  constexpr auto kSpin = std::chrono::microseconds(200);
  if (deadline - now > kSpin) std::this_thread::sleep_until(deadline - kSpin);
  while (Clock::now() < deadline) {
  }
}

void Runner::run(std::optional<std::uint64_t> max_iterations,
                 std::optional<Duration> max_sim_time) {
  KESTREL_DEMAND(configured_);
  pace_origin_ = Clock::now();
  pace_sim_origin_ = info_.sim_time;
  auto last_wall = Clock::now();
  while (!stop_requested_) {
    if (max_iterations && info_.iterations >= *max_iterations) break;
    if (max_sim_time && info_.sim_time >= *max_sim_time) break;
    bool stepped = false;
    try {
      stepped = step_once();
    } catch (const StepInterrupted&) {
      break;  // a system's wait was ended by stop(): the step is abandoned
    }
    if (stepped) {
      pace();
    } else {
      // Paused: keep the pacing anchor current and do not burn a core.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      pace_origin_ = Clock::now();
      pace_sim_origin_ = info_.sim_time;
    }
    const auto now = Clock::now();
    if (stepped) info_.real_time += std::chrono::duration_cast<Duration>(now - last_wall);
    last_wall = now;

    // Stats over a sliding window of ~1 s of wall time.
    window_.push_back({now, info_.sim_time, info_.iterations});
    while (window_.size() > 2 && now - window_.front().wall > std::chrono::seconds(1)) {
      window_.pop_front();
    }
    if (info_.iterations % 64 == 0 || !stepped) {
      std::lock_guard lock(stats_mutex_);
      stats_.sim_time = info_.sim_time;
      stats_.real_time = info_.real_time;
      stats_.iterations = info_.iterations;
      stats_.paused = paused_;
      const auto& f = window_.front();
      const double wall = std::chrono::duration<double>(now - f.wall).count();
      if (wall > 0) {
        stats_.rtf = to_seconds(info_.sim_time - f.sim) / wall;
        stats_.iterations_per_s = static_cast<double>(info_.iterations - f.it) / wall;
      }
    }
  }
  {
    std::lock_guard lock(stats_mutex_);
    stats_.sim_time = info_.sim_time;
    stats_.real_time = info_.real_time;
    stats_.iterations = info_.iterations;
    stats_.paused = paused_;
  }
  events_.publish(RunEnded{info_});
}

RunStats Runner::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

}  // namespace kestrel::sim
