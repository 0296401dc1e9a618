// JointTrajectoryController: follows an ignition.msgs.JointTrajectory with a position PID, a
// velocity PID and the effort feed-forward per 1-axis joint, as gz-sim's (Fortress)
// JointTrajectoryController computes it: each joint's target is the trajectory's first point
// whose time_from_start has not passed yet (no interpolation). See README.md.
#include "joint_trajectory_controller/joint_trajectory_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ignition/math/PID.hh>
#include <map>
#include <set>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/joint_trajectory.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

// The PID parameters, each repeatable (one value per joint, in joint order), with Gazebo's
// defaults: everything 0 except i_max and cmd_max -1 (below their minimum: no limit).
constexpr const char* kPidParameters[] = {"p_gain", "i_gain",  "d_gain",  "i_min",
                                          "i_max",  "cmd_min", "cmd_max", "cmd_offset"};
constexpr double kPidDefaults[] = {0, 0, 0, 0, -1, 0, -1, 0};

constexpr const char* kKnown =
    "joint_name, initial_position, position_{p_gain, i_gain, d_gain, i_min, i_max, cmd_min, "
    "cmd_max, cmd_offset}, velocity_{the same}, topic, use_header_start_time";

// Every value of the repeated parameter `name` (finite numbers).
std::vector<double> repeated(const Element& config, const std::string& name) {
  std::vector<double> out;
  for (const Element* e : config.children(name)) {
    const double v = e->value<double>();
    if (!std::isfinite(v)) {
      throw Error(e->where(), fmt::format("JointTrajectoryController: <{}> must be a finite "
                                          "number, not {}",
                                          name, e->text()));
    }
    out.push_back(v);
  }
  return out;
}

class JointTrajectoryController final : public System,
                                        public ISystemConfigure,
                                        public ISystemPreUpdate,
                                        public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "JointTrajectoryController");
    enable_joints(r, config);
    read_joint_parameters(config);
    // Gazebo reads the plugin's attribute (`<plugin use_header_start_time="true">`); the
    // element its documentation describes is read too.
    if (auto a = config.attribute("use_header_start_time")) {
      if (*a != "true" && *a != "1" && *a != "false" && *a != "0") {
        throw Error(config.where(), fmt::format("JointTrajectoryController: use_header_start_time="
                                                "\"{}\" is not a boolean (true, false, 1 or 0)",
                                                *a));
      }
      use_header_start_time_ = *a == "true" || *a == "1";
    }
    use_header_start_time_ = config.get_or("use_header_start_time", use_header_start_time_);
    std::string topic = config.get_or<std::string>("topic", "");
    if (topic.empty()) topic = model_topic(r, model_, "joint_trajectory");
    topic = as_valid_topic(topic);
    auto* topics = r.try_get<c::JointTrajectoryTopics>(model_);
    if (!topics) topics = &r.add<c::JointTrajectoryTopics>(model_);
    entry_ = topics->entries.size();
    auto& e = topics->entries.emplace_back();
    e.topic = topic;
    e.progress_topic = topic + "_progress";
    reject_unknown_parameters(config, "JointTrajectoryController", kKnown);
    for (const Joint& j : joints_) initial_.push_back(j);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    receive(r);  // Gazebo's subscriber callback
    if (info.paused) return;
    const Duration now = info.sim_time + info.dt;  // Gazebo's simTime: the end of the step
    bool update = false;
    if (status_ == Status::kNew) {
      if (start_ == Duration{0}) start_ = now;
      status_ = points_.empty() ? Status::kReached : Status::kActive;
      update = true;
    }
    if (status_ == Status::kActive && advance(now)) update = true;
    if (update && status_ != Status::kReached) {
      set_targets();
      if (last_point()) status_ = Status::kReached;
      auto& e = entry(r);
      e.progress = static_cast<float>(index_ + 1) / static_cast<float>(points_.size());
      ++e.progress_sequence;
    }
    // Gazebo's joint state is empty until Physics filled it at the end of the first step: the
    // PIDs are not updated then.
    const bool state = info.iterations > 0;
    for (Joint& j : joints_) {
      double force = j.effort;
      if (state) {
        const auto* q = r.try_get<c::JointPosition>(j.entity);
        const auto* v = r.try_get<c::JointVelocity>(j.entity);
        if (q && !q->data.empty()) force += j.position_pid.Update(q->data[0] - j.position, info.dt);
        if (v && !v->data.empty()) force += j.velocity_pid.Update(v->data[0] - j.velocity, info.dt);
      }
      joint_command<c::JointForceCmd>(r, j.entity, 1)[0] = force;
    }
  }

  void reset(const UpdateInfo&, ecs::Registry& r) override {
    // Gazebo's reset on a jump back in time: targets and PIDs as configured, no trajectory.
    joints_ = initial_;
    status_ = Status::kNew;
    index_ = 0;
    names_.clear();
    points_.clear();
    seen_ = entry(r).count;
  }

 private:
  struct Joint {
    ecs::Entity entity = ecs::kNullEntity;
    std::string name;
    double position = 0, velocity = 0, effort = 0;  // targets [rad or m, rad/s or m/s, N·m or N]
    ignition::math::PID position_pid{}, velocity_pid{};
  };
  enum class Status { kNew, kActive, kReached };

  // Gazebo's enabled joints: the <joint_name>s in order, else every 1-axis joint of the model.
  void enable_joints(const ecs::Registry& r, const Element& config) {
    std::set<ecs::Entity> seen;
    for (const Element* e : config.children("joint_name")) {
      const auto name = e->value<std::string>();
      const ecs::Entity joint = find_joint(r, model_, name, *e, "joint_name");
      if (!seen.insert(joint).second) {
        throw Error(e->where(), fmt::format("JointTrajectoryController: joint '{}' is named "
                                            "twice",
                                            name));
      }
      if (joint_axes(r, joint) != 1) {
        throw Error(e->where(), fmt::format("JointTrajectoryController: joint '{}' is not a "
                                            "revolute, continuous or prismatic joint (only "
                                            "joints with one axis are controlled)",
                                            name));
      }
      joints_.push_back(Joint{.entity = joint, .name = r.get<c::Name>(joint).value});
    }
    if (!joints_.empty()) return;
    for (ecs::Entity e : r.children(model_)) {
      if (!r.has<c::Joint>(e)) continue;
      const auto type = r.get<c::JointData>(e).type;
      if (joint_axes(r, e) == 1) {
        joints_.push_back(Joint{.entity = e, .name = r.get<c::Name>(e).value});
      } else if (type != c::JointType::kFixed) {
        spdlog::warn(
            "{}: JointTrajectoryController: joint '{}' has more than one axis and is "
            "not controlled (as Gazebo)",
            config.where(), r.get<c::Name>(e).value);
      }
    }
    if (joints_.empty()) {
      throw Error(config.where(), fmt::format("JointTrajectoryController: model '{}' has no "
                                              "revolute, continuous or prismatic joint to control",
                                              r.scoped_name(model_)));
    }
  }

  // The repeated parameters, the n-th value for the n-th joint.
  void read_joint_parameters(const Element& config) {
    const auto per_joint = [&](const std::string& name) {
      auto v = repeated(config, name);
      if (v.size() > joints_.size()) {
        throw Error(config.children(name)[joints_.size()]->where(),
                    fmt::format("JointTrajectoryController: {} <{}> for {} joint(s) ({}): the "
                                "n-th value is the n-th joint's",
                                v.size(), name, joints_.size(), joint_names()));
      }
      return v;
    };
    const auto initial = per_joint("initial_position");
    std::map<std::string, std::vector<double>> pid;
    for (const char* kind : {"position_", "velocity_"}) {
      for (const char* p : kPidParameters) {
        const std::string name = std::string(kind) + p;
        pid[name] = per_joint(name);
      }
    }
    for (std::size_t k = 0; k < joints_.size(); ++k) {
      const auto nth = [&](const std::vector<double>& v, double fallback) {
        return k < v.size() ? v[k] : fallback;
      };
      Joint& j = joints_[k];
      j.position = nth(initial, 0.0);
      for (auto [kind, out] :
           {std::pair{"position_", &j.position_pid}, std::pair{"velocity_", &j.velocity_pid}}) {
        double g[8];
        for (int i = 0; i < 8; ++i)
          g[i] = nth(pid[std::string(kind) + kPidParameters[i]], kPidDefaults[i]);
        // ignition::math::PID(p, i, d, imax, imin, cmdMax, cmdMin, cmdOffset)
        *out = ignition::math::PID(g[0], g[1], g[2], g[4], g[3], g[6], g[5], g[7]);
      }
    }
  }

  std::string joint_names() const {
    std::string s;
    for (const Joint& j : joints_) s += (s.empty() ? "" : ", ") + j.name;
    return s;
  }

  // A new message replaces the trajectory (Gazebo's JointTrajectoryCallback).
  void receive(const ecs::Registry& r) {
    const auto& m = entry(r);
    if (m.count == seen_) return;
    seen_ = m.count;
    if (m.joint_names.empty()) {
      spdlog::warn(
          "{}: JointTrajectoryController ({}): the JointTrajectory names no joint; "
          "ignored",
          m.topic, r.scoped_name(model_));
      return;
    }
    if (!m.points.empty() && !m.points[0].accelerations.empty()) {
      spdlog::warn("{}: JointTrajectoryController ({}): accelerations are ignored (as Gazebo)",
                   m.topic, r.scoped_name(model_));
    }
    if (status_ != Status::kReached) {
      spdlog::warn(
          "{}: JointTrajectoryController ({}): a new trajectory replaces the one "
          "being followed",
          m.topic, r.scoped_name(model_));
    }
    for (const auto& name : m.joint_names) {
      bool known = false;
      for (const Joint& j : joints_) known = known || j.name == name;
      if (!known) {
        spdlog::warn(
            "{}: JointTrajectoryController ({}): joint '{}' is not one it controls "
            "({}); its values are ignored",
            m.topic, r.scoped_name(model_), name, joint_names());
      }
    }
    start_ = use_header_start_time_ && m.has_stamp ? m.stamp : Duration{0};
    status_ = Status::kNew;
    index_ = 0;
    names_ = m.joint_names;
    points_ = m.points;
  }

  c::JointTrajectoryEntry& entry(ecs::Registry& r) const {
    return r.get<c::JointTrajectoryTopics>(model_).entries[entry_];
  }
  const c::JointTrajectoryEntry& entry(const ecs::Registry& r) const {
    return r.get<c::JointTrajectoryTopics>(model_).entries[entry_];
  }

  bool last_point() const { return index_ + 1 >= points_.size(); }

  // Moves to the first point whose time has not passed at `now`; true if it moved.
  bool advance(Duration now) {
    bool moved = false;
    while (!last_point() && points_[index_].time_from_start < now - start_) {
      ++index_;
      moved = true;
    }
    return moved;
  }

  // Each named joint takes the current point's values it has.
  void set_targets() {
    const auto& p = points_[index_];
    for (std::size_t n = 0; n < names_.size(); ++n) {
      for (Joint& j : joints_) {
        if (j.name != names_[n]) continue;
        if (n < p.positions.size()) j.position = p.positions[n];
        if (n < p.velocities.size()) j.velocity = p.velocities[n];
        if (n < p.effort.size()) j.effort = p.effort[n];
      }
    }
  }

  ecs::Entity model_ = ecs::kNullEntity;
  std::vector<Joint> joints_, initial_;
  std::size_t entry_ = 0;
  std::uint64_t seen_ = 0;
  bool use_header_start_time_ = false;
  Status status_ = Status::kNew;
  Duration start_{0};
  std::size_t index_ = 0;
  std::vector<std::string> names_;
  std::vector<c::JointTrajectoryPoint> points_;
};

}  // namespace

std::unique_ptr<System> make_joint_trajectory_controller() {
  return std::make_unique<JointTrajectoryController>();
}

}  // namespace kestrel::systems
