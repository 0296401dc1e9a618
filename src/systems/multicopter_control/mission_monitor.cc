#include "kestrel/systems/mission_monitor.h"

#include <fmt/format.h>

#include <map>

#include "kestrel/components/multicopter.h"

namespace kestrel::systems {

namespace c = kestrel::components;

std::unique_ptr<MissionMonitor> MissionMonitor::attach(sim::Runner& runner, bool stop_when_done) {
  auto& r = runner.registry();
  if (r.count<c::MissionState>() == 0) return nullptr;
  std::unique_ptr<MissionMonitor> m(new MissionMonitor());
  r.each<c::MissionState>([&](ecs::Entity e, const c::MissionState&) { m->models_.push_back(e); });
  m->refresh(r);
  MissionMonitor* self = m.get();
  sim::Runner* run = &runner;
  m->sub_ =
      runner.events().subscribe<sim::StepDone>([self, run, stop_when_done](const sim::StepDone&) {
        self->refresh(run->registry());
        if (stop_when_done && self->all_done_) run->stop();
      });
  return m;
}

// Every step, for every vehicle: fields are assigned in place (names cached at the first
// refresh), so a swarm's step allocates nothing here.
void MissionMonitor::refresh(const ecs::Registry& r) {
  if (names_.size() != models_.size()) {
    names_.clear();
    for (ecs::Entity e : models_) names_.push_back(r.scoped_name(e));
  }
  std::size_t faults = 0;
  r.each<c::FaultLog>([&](ecs::Entity, const c::FaultLog& l) { faults += l.events.size(); });
  std::lock_guard lock(m_);
  std::size_t n = 0;
  bool done = true;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const ecs::Entity e = models_[i];
    const auto* st = r.try_get<c::MissionState>(e);
    if (!st) continue;
    if (vehicles_.size() <= n) vehicles_.emplace_back();
    Vehicle& v = vehicles_[n++];
    if (v.name != names_[i]) v.name = names_[i];
    v.phase = c::mission_phase_name(st->phase);
    v.waypoint = st->waypoint;
    v.waypoint_count = st->waypoint_count;
    v.distance = st->distance;
    v.flight_time = st->flight_time;
    v.max_tracking_error = st->max_tracking_error;
    if (v.reason != st->reason) v.reason = st->reason;
    const auto* b = r.try_get<c::Battery>(e);
    v.energy_used = b ? b->energy_used : -1.0;
    done =
        done && (st->phase == c::MissionPhase::kCompleted || st->phase == c::MissionPhase::kFailed);
  }
  vehicles_.resize(n);
  faults_ = faults;
  all_done_ = done;
}

std::string MissionMonitor::status() const {
  std::lock_guard lock(m_);
  if (vehicles_.size() == 1) {
    const Vehicle& v = vehicles_[0];
    std::string s = fmt::format("{}: {}", v.name, v.phase);
    if (v.phase == "waypoint" || v.phase == "hold") {
      s += fmt::format(" {}/{}", v.waypoint + 1, v.waypoint_count);
    }
    return s + fmt::format(", {:.1f} m to go", v.distance);
  }
  std::map<std::string, int> by_phase;
  for (const Vehicle& v : vehicles_) ++by_phase[v.phase];
  std::string s = fmt::format("{} vehicles:", vehicles_.size());
  for (const auto& [phase, n] : by_phase) s += fmt::format(" {} {}", n, phase);
  return s;
}

std::vector<MissionMonitor::Vehicle> MissionMonitor::vehicles() const {
  std::lock_guard lock(m_);
  return vehicles_;
}

std::size_t MissionMonitor::faults() const {
  std::lock_guard lock(m_);
  return faults_;
}

int MissionMonitor::exit_code() const {
  std::lock_guard lock(m_);
  for (const Vehicle& v : vehicles_) {
    if (v.phase != "completed") return 1;
  }
  return 0;
}

void MissionMonitor::print_summary(std::FILE* out) const {
  const auto vs = vehicles();
  std::size_t completed = 0;
  for (const Vehicle& v : vs) completed += v.phase == "completed";
  std::fprintf(out, "mission: %s (%zu of %zu vehicles)\n",
               completed == vs.size() ? "completed" : "NOT completed", completed, vs.size());
  const std::size_t shown = std::min<std::size_t>(vs.size(), 10);
  for (std::size_t i = 0; i < shown; ++i) {
    const Vehicle& v = vs[i];
    std::string energy = v.energy_used >= 0 ? fmt::format("{:.0f} J ({:.2f} Wh)", v.energy_used,
                                                          v.energy_used / 3600)
                                            : "n/a (no battery)";
    std::fprintf(out,
                 "  %s: %s, flight time %.1f s, max tracking error %.3f m, energy used %s%s%s\n",
                 v.name.c_str(), v.phase.c_str(), v.flight_time, v.max_tracking_error,
                 energy.c_str(), v.reason.empty() ? "" : ", reason: ", v.reason.c_str());
  }
  if (vs.size() > shown) std::fprintf(out, "  ... and %zu more\n", vs.size() - shown);
  if (const auto f = faults()) std::fprintf(out, "  faults injected: %zu (see the log)\n", f);
}

}  // namespace kestrel::systems
