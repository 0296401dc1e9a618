// An external Kestrel system: applies a constant force (world frame) to one link every step.
//
//   <plugin filename="wind_disturbance" name="kestrel::examples::WindDisturbance">
//     <link_name>base_link</link_name>   <!-- required: a link of the model it is attached to -->
//     <force>1 0 0</force>               <!-- required: [N], world frame -->
//   </plugin>
//
// Attach it to a model (a <plugin> inside <model>). It adds its force into the link's
// components::ExternalWorldWrenchCmd before physics runs (priority pre-physics), so several
// disturbances on one link add up.

#include <ignition/math/Vector3.hh>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/system_plugin.h"

namespace kestrel::examples {

class WindDisturbance : public System, public ISystemConfigure, public ISystemPreUpdate {
 public:
  int priority() const override { return priority::kPrePhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& registry,
                 sim::EventBus&) override {
    const auto link_name = config.get<std::string>("link_name");
    force_ = config.get<ignition::math::Vector3d>("force");
    if (auto unread = config.unread_children(); !unread.empty()) {
      throw Error(unread.front()->where(), "WindDisturbance: unknown parameter <" +
                                               unread.front()->name() +
                                               "> (expected <link_name>, <force>)");
    }
    if (!registry.has<components::Model>(entity)) {
      throw Error(config.where(), "WindDisturbance must be attached to a model, found " +
                                      registry.scoped_name(entity));
    }
    link_ = registry.child_by_name(entity, link_name);
    if (link_ == ecs::kNullEntity || !registry.has<components::Link>(link_)) {
      throw Error(config.where(), "WindDisturbance: model " + registry.scoped_name(entity) +
                                      " has no link '" + link_name + "'");
    }
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& registry) override {
    if (info.paused) return;
    auto* cmd = registry.try_get<components::ExternalWorldWrenchCmd>(link_);
    if (!cmd) cmd = &registry.add<components::ExternalWorldWrenchCmd>(link_);
    cmd->force += force_;
  }

 private:
  ecs::Entity link_ = ecs::kNullEntity;
  ignition::math::Vector3d force_;  // [N], world frame
};

}  // namespace kestrel::examples

KESTREL_ADD_SYSTEM(kestrel::examples::WindDisturbance, "kestrel::examples::WindDisturbance")
