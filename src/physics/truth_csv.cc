#include "kestrel/physics/truth_csv.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr std::size_t kRotorColumns = 8;  // rotor_0 … rotor_7

class TruthCsv final : public System,
                       public ISystemConfigure,
                       public ISystemPostUpdate,
                       public ISystemReset {
 public:
  explicit TruthCsv(const TruthCsvOptions& o) : options_(o) {
    if (!std::isfinite(o.rate_hz) || o.rate_hz < 0) {
      throw Error(
          fmt::format("--truth-rate must be a finite number >= 0 [Hz], found {}", o.rate_hz));
    }
    if (o.rate_hz > 0) period_ = next_ = from_seconds(1.0 / o.rate_hz);
    file_ = std::fopen(o.path.c_str(), "w");
    if (!file_) throw Error(o.path, "cannot open the truth CSV file for writing");
    std::fputs(
        "sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,rotor_0,rotor_1,rotor_2,"
        "rotor_3,rotor_4,rotor_5,rotor_6,rotor_7\n",
        file_);
  }
  ~TruthCsv() override {
    if (file_) std::fclose(file_);  // flushes
  }

  void configure(ecs::Entity entity, const Element&, ecs::Registry&, sim::EventBus&) override {
    world_ = entity;
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& r) override {
    if (info.paused || info.dt <= Duration{0}) return;
    const Duration t = info.sim_time + info.dt;  // time of the state physics just wrote
    if (period_ > Duration{0}) {
      if (t < next_) return;
      while (next_ <= t) next_ += period_;
    }
    if (models_dirty_ || structure_changed(r)) collect(r);
    // Exact decimal seconds from the integer nanoseconds ("0.03", not "0.030000000000000002").
    std::string ts = fmt::format("{}.{:09d}", t.count() / 1'000'000'000, t.count() % 1'000'000'000);
    ts.erase(ts.find_last_not_of('0') + 1);
    if (ts.back() == '.') ts.pop_back();
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
                     row.name, X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(), X.Rot().X(),
                     X.Rot().Y(), X.Rot().Z(), v_M.X(), v_M.Y(), v_M.Z(), w_M.X(), w_M.Y(),
                     w_M.Z());
      // rotor_0 … rotor_7 [rad/s] from RotorVelocities; empty cells without rotors.
      const auto* rotors = r.try_get<c::RotorVelocities>(row.model);
      for (std::size_t i = 0; i < kRotorColumns; ++i) {
        line_.push_back(',');
        if (rotors && i < rotors->velocity.size()) {
          fmt::format_to(std::back_inserter(line_), "{}", rotors->velocity[i]);
        }
      }
      line_.push_back('\n');
      std::fwrite(line_.data(), 1, line_.size(), file_);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    next_ = period_;
    models_dirty_ = true;
    std::fflush(file_);
  }

 private:
  struct Row {
    ecs::Entity model, link;
    std::string name;
  };

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
        rows_.push_back({m, d, n ? n->value : r.scoped_name(m)});
        break;
      }
    }
  }

  TruthCsvOptions options_;
  std::FILE* file_ = nullptr;
  Duration period_{0}, next_{0};
  ecs::Entity world_ = ecs::kNullEntity;
  bool models_dirty_ = true;
  std::vector<Row> rows_;
  std::string line_;
};

}  // namespace

std::unique_ptr<System> make_truth_csv_system(const TruthCsvOptions& options) {
  return std::make_unique<TruthCsv>(options);
}

}  // namespace kestrel::physics
