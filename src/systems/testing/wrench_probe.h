#pragma once
// Test support for the aerodynamic and hydrodynamic systems: a world loaded with a probe that
// records, every step, the wrench the systems under test added to one link (read after every
// other PreUpdate, before Physics applies and clears it).

#include <functional>
#include <memory>
#include <string>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems::testing {

struct WrenchProbe {
  /// Loads `sdf`, adds the probe for link `link` (scoped name), configures.
  WrenchProbe(const std::string& sdf, const std::string& link) : w(sdf, false) {
    w.runner->add_system(
        std::make_unique<PreUpdateProbe>([this, link](const UpdateInfo&, ecs::Registry& r) {
          wrench = r.get<components::ExternalWorldWrenchCmd>(w.find(link));
          if (on_step) on_step(r);
        }),
        w.runner->world(), Element::empty("plugin"), "probe", "test");
    w.runner->configure();
  }
  LoadedWorld w;
  components::ExternalWorldWrenchCmd wrench;    ///< this step's, as the systems left it
  std::function<void(ecs::Registry&)> on_step;  ///< also called by the probe
};

}  // namespace kestrel::systems::testing
