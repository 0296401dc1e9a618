// MotorFailureSystem: PX4's Gazebo plugin that fails one motor on command. The model's motor
// joints are those named rotor_<k>_joint; the number last received on the topic (ignition.msgs.
// Int32) names the failed motor counted from 1 (motor n is rotor_<n-1>_joint), 0 none. A
// failed motor's joint velocity command is forced to 0 every step, after the motor models have
// written theirs and before Physics, so the rotor stops and gives no thrust — as PX4's plugin
// does in PreUpdate after the motor models.

#include "motor_failure/motor_failure.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

// After the motor models (priority::kPrePhysics), before Physics (priority::kPhysics).
constexpr int kAfterMotorModels = priority::kPrePhysics + 1;
static_assert(kAfterMotorModels < priority::kPhysics);

// The motor number k of a joint named rotor_<k>_joint, or -1.
int rotor_number(const std::string& name) {
  constexpr std::string_view kPrefix = "rotor_", kSuffix = "_joint";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return -1;
  }
  const std::string digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(),
                                        [](unsigned char ch) { return std::isdigit(ch); })) {
    return -1;
  }
  return std::stoi(digits);
}

class MotorFailure final : public System,
                           public ISystemConfigure,
                           public ISystemPreUpdate,
                           public ISystemReset {
 public:
  int priority() const override { return kAfterMotorModels; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "MotorFailureSystem");
    name_ = r.scoped_name(model_);
    const std::string topic = config.get_or<std::string>(
        "MotorFailureTopic", model_topic(r, model_, "motor_failure/motor_number"));
    reject_unknown_parameters(config, "MotorFailureSystem", "MotorFailureTopic");
    input_ = add_int32_input(r, model_, topic);
    std::map<int, ecs::Entity> by_number;
    for (ecs::Entity e : r.descendants(model_)) {
      if (!r.has<c::JointData>(e) || r.parent(e) != model_) continue;
      const auto* nm = r.try_get<c::Name>(e);
      const int k = nm ? rotor_number(nm->value) : -1;
      if (k >= 0) by_number[k] = e;
    }
    joints_.clear();
    for (const auto& [k, e] : by_number) {
      if (static_cast<std::size_t>(k) >= joints_.size()) joints_.resize(k + 1, ecs::kNullEntity);
      joints_[k] = e;
    }
    if (joints_.empty()) {
      throw Error(config.where(),
                  fmt::format("MotorFailureSystem: model '{}' has no joint named rotor_<k>_joint "
                              "(the motors it can fail)",
                              name_));
    }
    spdlog::info("MotorFailureSystem: model '{}': {} motor joint(s); failures on {}", name_,
                 by_number.size(), topic);
    failed_ = 0;
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    const auto& in = r.get<c::TopicInputs>(model_).int32[input_];
    const int n = in.value;
    if (n != failed_) {
      if (exists(n)) {
        spdlog::warn("MotorFailureSystem: model '{}': motor {} failed at t={:.3f} s", name_, n,
                     to_seconds(info.sim_time));
      } else if (n != 0) {
        spdlog::warn(
            "MotorFailureSystem: model '{}': motor {} does not exist (motors 1..{}): "
            "ignored, as PX4's plugin ignores it",
            name_, n, joints_.size());
      } else if (exists(failed_)) {
        spdlog::info("MotorFailureSystem: model '{}': motor {} recovered at t={:.3f} s", name_,
                     failed_, to_seconds(info.sim_time));
      }
      failed_ = n;
    }
    if (!exists(failed_)) return;
    if (auto* cmd = r.try_get<c::JointVelocityCmd>(joints_[failed_ - 1])) {
      cmd->data.assign(1, 0.0);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { failed_ = 0; }

 private:
  // Motor n (counted from 1) is one of the model's rotor_<n-1>_joint joints.
  bool exists(int n) const {
    return n > 0 && n <= static_cast<int>(joints_.size()) && joints_[n - 1] != ecs::kNullEntity;
  }

  ecs::Entity model_ = ecs::kNullEntity;
  std::string name_;
  std::size_t input_ = 0;
  std::vector<ecs::Entity> joints_;  // by motor number − 1
  int failed_ = 0;
};

}  // namespace

std::unique_ptr<System> make_motor_failure() { return std::make_unique<MotorFailure>(); }

}  // namespace kestrel::systems
