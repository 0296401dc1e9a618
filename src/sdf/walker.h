#pragma once
// Turns libsdformat 12 DOM objects into entities (internal to src/sdf).

#include <sdf/sdf.hh>
#include <set>
#include <string>
#include <utility>

#include "kestrel/components/joint_mimic.h"
#include "kestrel/components/model.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sdf/world_loader.h"
#include "sources.h"

namespace kestrel::sdf::detail {

class Walker {
 public:
  Walker(ecs::Registry& registry, const Sources& sources, WorldDescription& description)
      : reg_(registry), src_(sources), d_(description) {}

  /// Fills the world entity and creates everything beneath it.
  void world(const ::sdf::World& w, ecs::Entity world);
  /// Creates a model entity (and its subtree) under `parent`, whose world pose is X_WP.
  /// `X_PM` is the model pose relative to the parent entity; `name` overrides the model's own.
  ecs::Entity model(const ::sdf::Model& m, ecs::Entity parent, const ignition::math::Pose3d& X_WP,
                    const ignition::math::Pose3d& X_PM, const std::string& name,
                    bool parent_static);

  /// Elements already reported as unsupported, "file:line:name" (to drop libsdformat's
  /// duplicate reports).
  bool reported(const std::string& file, int line, const std::string& name) const {
    return reported_.count(file + ":" + std::to_string(line) + ":" + name) > 0;
  }

 private:
  struct Loc {
    std::string file;
    int line = 0;
  };
  Loc loc(const ::sdf::ElementPtr& e) const;
  std::shared_ptr<const Element> original(const ::sdf::ElementPtr& e) const;
  ecs::Entity create(ecs::Entity parent, const std::string& name, const ::sdf::ElementPtr& el,
                     const ignition::math::Pose3d& X_PE, const ignition::math::Pose3d& X_WP);
  ignition::math::Pose3d resolve(const ::sdf::SemanticPose& sp, const std::string& relative_to,
                                 const ::sdf::ElementPtr& el, const std::string& what);
  void link(const ::sdf::Link& l, ecs::Entity model, const ignition::math::Pose3d& X_WM,
            bool is_static, bool model_wind);
  void joint(const ::sdf::Joint& j, ecs::Entity model, const ignition::math::Pose3d& X_WM);
  /// Reads the SDF 1.11 `<mimic>` of the joint's axis `k` (libsdformat 12 does not know it)
  /// from the original XML; its leader is resolved by resolve_mimics.
  void read_mimic(const Element* joint_xml, unsigned k, ecs::Entity joint);
  /// Resolves the leaders of the mimics read in `model`'s joints (after all of them exist).
  void resolve_mimics(ecs::Entity model);
  void sensor(const ::sdf::Sensor& s, ecs::Entity parent, const ignition::math::Pose3d& X_WP,
              const std::string& relative_to);
  void light(const ::sdf::Light& l, ecs::Entity parent, const ignition::math::Pose3d& X_WP,
             const std::string& relative_to);
  void plugins(const ::sdf::ElementPtr& el, ecs::Entity entity);
  /// Resolves a mesh/heightmap URI to a file (path left empty and a finding made if it cannot).
  void resolve_shape_file(components::Geometry& g, const ::sdf::ElementPtr& el, ecs::Entity e,
                          bool collision);
  void friction_direction(const Element& fdir1, ecs::Entity collision, components::Surface& s);
  void check_inertial(const Element* link, const ::sdf::Link& l, ecs::Entity e, bool is_static);
  void fluid_added_mass(const Element& fa, const ::sdf::Link& l, ecs::Entity e, const Loc& where);
  /// Reports every child of `el` whose name is not in `handled`: nothing is dropped silently.
  void unsupported_children(const Element* el, std::initializer_list<std::string_view> handled,
                            ecs::Entity e);
  void unsupported(const Element& el, ecs::Entity e, const std::string& why);
  /// If `el`, not valid SDF inside `parent`, is a misspelling of an element that is: an error
  /// naming it ("did you mean <mass>?"), and true.
  bool misspelt(const Element& parent, const Element& el, ecs::Entity e);
  void error(const Loc& l, ecs::Entity e, const std::string& message);
  void warning(const Loc& l, ecs::Entity e, const std::string& message);

  ecs::Registry& reg_;
  const Sources& src_;
  WorldDescription& d_;
  std::set<std::string> reported_;
  struct PendingMimic {
    ecs::Entity joint;
    components::JointMimic mimic;  // its leader still to resolve
    std::string leader, leader_axis;
    std::shared_ptr<const Element> xml;
  };
  std::vector<PendingMimic> mimics_;
  // <fdir1 gz:expressed_in="LINK">: the link, by name in the collision's model, once the
  // model's links exist (resolve_friction_frames).
  struct PendingFrictionFrame {
    ecs::Entity collision;
    std::string link;
    Loc where;
  };
  std::vector<PendingFrictionFrame> friction_frames_;
  void resolve_friction_frames(ecs::Entity model);
};

}  // namespace kestrel::sdf::detail
