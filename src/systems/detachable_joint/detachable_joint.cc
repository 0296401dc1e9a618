// DetachableJoint: holds a link of another model (or of its own) to one of its model's links
// with a fixed joint from the first step, releases it on an ignition.msgs.Empty on its detach
// topic and attaches it again (at the links' relative pose then) on any message on its attach
// topic, publishing "attached" / "detached", as gz-sim's (Fortress) DetachableJoint does. The
// joint is a components::DetachableJoint that Physics simulates as a weld it switches on and
// off. See README.md.
#include "detachable_joint/detachable_joint.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/detachable_joint.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

// The first of Gazebo's candidate topics that is not empty once made valid (validTopic).
std::string first_topic(std::initializer_list<std::string> candidates) {
  for (const std::string& t : candidates) {
    if (std::string v = as_valid_topic(t); !v.empty()) return v;
  }
  return {};
}

c::DetachableJoint joint_component(ecs::Entity parent, ecs::Entity child) {
  c::DetachableJoint dj;
  dj.parent_link = parent;
  dj.child_link = child;
  return dj;
}

class DetachableJoint final : public System,
                              public ISystemConfigurePriority,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  // Everything is read before any system configures, so that the joint exists when Physics
  // builds its first model (in its configure).
  void configure_priority(ecs::Entity entity, const Element& config, ecs::Registry& r,
                          sim::EventBus&) override {
    model_ = require_model(r, entity, config, "DetachableJoint");
    const std::string model = model_name(r, model_);
    const auto required = [&](const char* name) {
      const Element* e = config.child(name);
      if (!e) {
        throw Error(config.where(), fmt::format("DetachableJoint (model '{}'): <{}> is required",
                                                r.scoped_name(model_), name));
      }
      auto v = e->value<std::string>();
      if (v.empty()) {
        throw Error(e->where(), fmt::format("DetachableJoint (model '{}'): <{}> is empty",
                                            r.scoped_name(model_), name));
      }
      return v;
    };
    parent_link_ = find_link(r, model_, required("parent_link"), config, "parent_link");
    child_model_ = required("child_model");
    child_link_name_ = required("child_link");
    const std::string topic = config.get_or<std::string>("topic", "");
    const std::string detach = config.get_or<std::string>("detach_topic", "");
    // Gazebo logs an error and uses <detach_topic>; a contradiction is an error here.
    if (config.child("topic") && config.child("detach_topic") && topic != detach) {
      throw Error(config.child("topic")->where(),
                  fmt::format("DetachableJoint (model '{}'): <topic> '{}' and <detach_topic> '{}' "
                              "differ; give <detach_topic> only",
                              r.scoped_name(model_), topic, detach));
    }
    const std::string fallback = "/model/" + model + "/detachable_joint/";
    detach_topic_ = first_topic({detach.empty() ? topic : detach, fallback + "detach"});
    attach_topic_ =
        first_topic({config.get_or<std::string>("attach_topic", ""), fallback + "attach"});
    output_topic_ = first_topic({config.get_or<std::string>("output_topic", ""),
                                 "/model/" + child_model_ + "/detachable_joint/state"});
    suppress_warning_ = config.get_or("suppress_child_warning", false);
    reject_unknown_parameters(config, "DetachableJoint",
                              "parent_link, child_model, child_link, topic, detach_topic, "
                              "attach_topic, output_topic, suppress_child_warning");

    auto& in = r.has<c::TopicInputs>(model_) ? r.get<c::TopicInputs>(model_)
                                             : r.add<c::TopicInputs>(model_);
    detach_in_ = in.event.size();
    in.event.push_back({detach_topic_, false, 0});
    attach_in_ = in.event.size();
    in.event.push_back({attach_topic_, true, 0});
    auto& out = r.has<c::TopicOutputs>(model_) ? r.get<c::TopicOutputs>(model_)
                                               : r.add<c::TopicOutputs>(model_);
    state_out_ = out.string.size();
    out.string.push_back({output_topic_, "", 0});

    const ecs::Entity child = find_child_link(r);
    if (child != ecs::kNullEntity) {
      joint_ = r.create(model_);
      r.add<c::DetachableJoint>(joint_, joint_component(parent_link_, child));
    } else if (!suppress_warning_) {
      spdlog::warn(
          "DetachableJoint (model '{}'): child model '{}' with a link '{}' not found; "
          "attaching when it appears",
          r.scoped_name(model_), child_model_, child_link_name_);
    }
    initial_joint_ = joint_;
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    const auto& in = r.get<c::TopicInputs>(model_);
    // Gazebo's callbacks: a request is taken only in the state it changes.
    if (in.event[attach_in_].count != attach_seen_) {
      attach_seen_ = in.event[attach_in_].count;
      if (!attached_) attach_requested_ = true;
    }
    if (in.event[detach_in_].count != detach_seen_) {
      detach_seen_ = in.event[detach_in_].count;
      if (attached_) detach_requested_ = true;
    }
    if (!attached_ && attach_requested_) attach(r);
    if (attached_ && detach_requested_) {
      r.get<c::DetachableJoint>(joint_).attached = false;
      detach_requested_ = false;
      attached_ = false;
      publish(r, "detached");
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    joint_ = initial_joint_;
    attached_ = false;
    attach_requested_ = true;
    detach_requested_ = false;
    attach_seen_ = detach_seen_ = 0;
  }

 private:
  void attach(ecs::Registry& r) {
    if (joint_ == ecs::kNullEntity || !r.alive(joint_)) {
      const ecs::Entity child = find_child_link(r);
      if (child == ecs::kNullEntity) return;  // warned at configure
      joint_ = r.create(model_);              // Physics adds its weld (a rebuild)
      r.add<c::DetachableJoint>(joint_, joint_component(parent_link_, child));
    } else {
      auto& dj = r.get<c::DetachableJoint>(joint_);
      if (!r.alive(dj.child_link)) {  // the child model went: look again
        const ecs::Entity child = find_child_link(r);
        if (child == ecs::kNullEntity) return;
        dj.child_link = child;
      }
      dj.attached = true;  // Physics switches the weld on at the links' pose now
    }
    attach_requested_ = false;
    attached_ = true;
    publish(r, "attached");
  }

  void publish(ecs::Registry& r, const char* state) {
    auto& o = r.get<c::TopicOutputs>(model_).string[state_out_];
    o.value = state;
    ++o.sequence;
  }

  // Gazebo's child lookup: "__model__" is this model; otherwise the models of that name
  // anywhere (a scoped name "a::b" is matched from its last part), and when there are several,
  // the first one inside this model that has the link.
  ecs::Entity find_child_link(const ecs::Registry& r) const {
    if (child_model_ == "__model__") return r.child_by_name(model_, child_link_name_);
    std::vector<ecs::Entity> models;
    const auto dot = child_model_.rfind("::");
    const std::string last = dot == std::string::npos ? child_model_ : child_model_.substr(dot + 2);
    r.each<c::Model>([&](ecs::Entity e, const c::Model&) {
      if (r.removal_pending(e)) return;
      const auto* n = r.try_get<c::Name>(e);
      if (!n || n->value != last) return;
      if (dot != std::string::npos && !r.scoped_name(e).ends_with(child_model_)) return;
      models.push_back(e);
    });
    const auto link_of = [&](ecs::Entity m) {
      const ecs::Entity l = r.child_by_name(m, child_link_name_);
      return l != ecs::kNullEntity && r.has<c::Link>(l) ? l : ecs::kNullEntity;
    };
    if (models.size() == 1) return link_of(models[0]);
    for (ecs::Entity m : models) {
      bool inside = false;
      for (ecs::Entity p = r.parent(m); p != ecs::kNullEntity; p = r.parent(p)) {
        if (p == model_) inside = true;
      }
      if (inside && link_of(m) != ecs::kNullEntity) return link_of(m);
    }
    return ecs::kNullEntity;
  }

  ecs::Entity model_ = ecs::kNullEntity, parent_link_ = ecs::kNullEntity;
  ecs::Entity joint_ = ecs::kNullEntity, initial_joint_ = ecs::kNullEntity;
  std::string child_model_, child_link_name_, detach_topic_, attach_topic_, output_topic_;
  bool suppress_warning_ = false;
  std::size_t detach_in_ = 0, attach_in_ = 0, state_out_ = 0;
  std::uint64_t detach_seen_ = 0, attach_seen_ = 0;
  // Gazebo's state: not attached yet, attaching requested from the start.
  bool attached_ = false, attach_requested_ = true, detach_requested_ = false;
};

}  // namespace

std::unique_ptr<System> make_detachable_joint() { return std::make_unique<DetachableJoint>(); }

}  // namespace kestrel::systems
