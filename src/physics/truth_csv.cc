#include "kestrel/physics/truth_csv.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/core/output.h"
#include "kestrel/sim/events.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

class TruthCsv final : public System,
                       public ISystemConfigure,
                       public ISystemPostUpdate,
                       public ISystemReset {
 public:
  explicit TruthCsv(const TruthCsvOptions& o)
      : options_(o), file_(check_rate(o).path, "the truth CSV (--truth-csv)") {
    if (o.rate_hz > 0) period_ = next_ = from_seconds(1.0 / o.rate_hz);
  }

  void configure(ecs::Entity entity, const Element&, ecs::Registry&,
                 sim::EventBus& events) override {
    world_ = entity;
    // The end of a run: what is still buffered is written and checked (a full disk fails here).
    ended_ = events.subscribe<sim::RunEnded>([this](const sim::RunEnded&) { file_.flush(); });
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    const Duration t = info.sim_time + info.dt;  // time of the state physics just wrote
    if (period_ > Duration{0}) {
      if (t < next_) return;
      while (next_ <= t) next_ += period_;
    }
    if (models_dirty_ || structure_changed(r)) collect(r);
    if (!header_written_) write_header(r);
    const std::string ts = exact_seconds(t);
    for (const Row& row : rows_) {
      const auto* wp = r.try_get<c::WorldPose>(row.model);
      const auto* lp = r.try_get<c::WorldPose>(row.link);
      const auto* v = r.try_get<c::WorldLinearVelocity>(row.link);
      const auto* w = r.try_get<c::WorldAngularVelocity>(row.link);
      if (!wp || !lp || !v || !w) continue;
      const auto& X = wp->value;
      // Model origin velocity from the canonical link's: v_M = v_L + w × (p_M − p_L).
      const Vector3d v_M = v->value + w->value.Cross(X.Pos() - lp->value.Pos());
      const Vector3d w_M = X.Rot().RotateVectorReverse(w->value);
      line_.clear();
      fmt::format_to(std::back_inserter(line_), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", ts,
                     row.field, X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(), X.Rot().X(),
                     X.Rot().Y(), X.Rot().Z(), v_M.X(), v_M.Y(), v_M.Z(), w_M.X(), w_M.Y(),
                     w_M.Z());
      // rotor_0 … [rad/s] from RotorVelocities; empty cells for a model with fewer rotors.
      const auto* rotors = r.try_get<c::RotorVelocities>(row.model);
      for (std::size_t i = 0; i < rotor_columns_; ++i) {
        line_.push_back(',');
        if (rotors && i < rotors->velocity.size()) {
          fmt::format_to(std::back_inserter(line_), "{}", rotors->velocity[i]);
        }
      }
      if (rotors && rotors->velocity.size() > rotor_columns_ && !row.warned) {
        row.warned = true;
        spdlog::warn(
            "truth CSV: model '{}' has {} rotors; the file's header, written at its first row, "
            "has columns for {}: rotors {} and above are not written",
            row.name, rotors->velocity.size(), rotor_columns_, rotor_columns_);
      }
      line_.push_back('\n');
      file_.write(line_);
      file_.end_record();
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    next_ = period_;
    models_dirty_ = true;
    file_.flush();
  }

 private:
  struct Row {
    ecs::Entity model, link;
    std::string name;   // the model's name
    std::string field;  // as a CSV field
    mutable bool warned = false;
  };

  static const TruthCsvOptions& check_rate(const TruthCsvOptions& o) {
    if (!std::isfinite(o.rate_hz) || o.rate_hz < 0) {
      throw Error(
          fmt::format("--truth-rate must be a finite number >= 0 [Hz], found {}", o.rate_hz));
    }
    return o;
  }

  // Rotor columns for the most rotors a model has now (a quadcopter gets rotor_0 … rotor_3).
  void write_header(const ecs::Registry& r) {
    header_written_ = true;
    for (const Row& row : rows_) {
      if (const auto* rotors = r.try_get<c::RotorVelocities>(row.model)) {
        rotor_columns_ = std::max(rotor_columns_, rotors->velocity.size());
      }
    }
    std::string h = "sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz";
    for (std::size_t i = 0; i < rotor_columns_; ++i) h += fmt::format(",rotor_{}", i);
    h += '\n';
    file_.write(h);
    file_.end_record(/*row=*/false);
  }

  static bool structure_changed(const ecs::Registry& r) {
    bool changed = false;
    auto hit = [&](ecs::Entity, const auto&) {
      changed = true;
      return false;
    };
    r.each_new<c::Model>(hit);
    if (!changed) r.each_removed<c::Model>(hit);
    if (!changed) r.each_new<c::Link>(hit);
    return changed;
  }

  void collect(const ecs::Registry& r) {
    models_dirty_ = false;
    rows_.clear();
    for (ecs::Entity m : r.children(world_)) {
      if (!r.has<c::Model>(m) || r.removal_pending(m)) continue;
      if (auto* s = r.try_get<c::Static>(m); s && s->value) continue;
      for (ecs::Entity d : r.descendants(m)) {
        if (!r.has<c::Link>(d)) continue;
        const auto* n = r.try_get<c::Name>(m);
        const std::string name = n ? n->value : r.scoped_name(m);
        rows_.push_back({m, d, name, csv_field(name)});
        break;
      }
    }
  }

  TruthCsvOptions options_;
  OutputFile file_;
  Duration period_{0}, next_{0};
  ecs::Entity world_ = ecs::kNullEntity;
  bool models_dirty_ = true;
  bool header_written_ = false;
  std::size_t rotor_columns_ = 0;
  std::vector<Row> rows_;
  std::string line_;
  sim::EventBus::Subscription ended_;
};

}  // namespace

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

std::unique_ptr<System> make_truth_csv_system(const TruthCsvOptions& options) {
  return std::make_unique<TruthCsv>(options);
}

}  // namespace kestrel::physics
