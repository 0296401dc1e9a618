// Label (gz::sim::systems::Label): gives a visual, or every visual of a model's links, the
// semantic label segmentation cameras see (src/sensors/label/README.md).

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {
namespace {

namespace c = components;

// Labels are written before any system configures (ISystemConfigurePriority): the rendering
// Sensors system builds its scene, labels included, at its own configure.
class Label final : public System, public ISystemConfigurePriority {
 public:
  void configure_priority(ecs::Entity entity, const Element& config, ecs::Registry& r,
                          sim::EventBus&) override {
    const Element* l = config.child("label");
    if (!l) throw Error(config.where(), "Label needs <label> (an integer 0..255)");
    const int label = l->value<int>();
    reject_unread(config, "expected <label>");
    if (label < 0 || label > 255) {
      throw Error(l->where(), "<label> must be in 0..255, found " + std::to_string(label));
    }
    if (r.has<c::Visual>(entity)) {
      r.set<c::SemanticLabel>(entity, {label});
    } else if (r.has<c::Model>(entity)) {
      for (ecs::Entity link : r.children(entity)) {
        if (!r.has<c::Link>(link)) continue;
        for (ecs::Entity v : r.children(link)) {
          if (r.has<c::Visual>(v)) r.set<c::SemanticLabel>(v, {label});
        }
      }
    } else {
      throw Error(config.where(), "the Label system belongs in a <visual> or a <model>; " +
                                      r.describe(entity) + " is neither");
    }
  }
};

}  // namespace

std::unique_ptr<System> make_label_system() { return std::make_unique<Label>(); }

}  // namespace kestrel::sensors
