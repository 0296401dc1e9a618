// Gazebo's SceneBroadcaster: poses on /world/W/pose/info and /world/W/dynamic_pose/info
// (Pose_V, 60 Hz of wall time while someone listens), the scene on /world/W/scene/info and the
// state on /world/W/state (services, built on the step thread).
#include <fmt/format.h>
#include <ignition/msgs/empty.pb.h>
#include <ignition/msgs/joint.pb.h>
#include <ignition/msgs/light.pb.h>
#include <ignition/msgs/link.pb.h>
#include <ignition/msgs/model.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/scene.pb.h>
#include <ignition/msgs/serialized_map.pb.h>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"
#include "transport/outbox.h"

namespace kestrel::transport {
namespace {

namespace c = kestrel::components;
namespace msgs = ignition::msgs;
using SteadyClock = std::chrono::steady_clock;

// FNV-1a 64: the type ids of the components listed by /world/W/state, computed from Gazebo's
// component names ("ign_gazebo_components.Name"). See README for what the state holds.
constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

msgs::Joint::Type joint_type(c::JointType t) {
  switch (t) {
    case c::JointType::kRevolute:
    case c::JointType::kContinuous:
      return msgs::Joint::REVOLUTE;
    case c::JointType::kPrismatic:
      return msgs::Joint::PRISMATIC;
    case c::JointType::kBall:
      return msgs::Joint::BALL;
    case c::JointType::kUniversal:
      return msgs::Joint::UNIVERSAL;
    case c::JointType::kScrew:
      return msgs::Joint::SCREW;
    case c::JointType::kRevolute2:
      return msgs::Joint::REVOLUTE2;
    case c::JointType::kGearbox:
      return msgs::Joint::GEARBOX;
    case c::JointType::kFixed:
      return msgs::Joint::FIXED;
  }
  return msgs::Joint::FIXED;
}

void fill_vec(const ignition::math::Vector3d& v, msgs::Vector3d* m) {
  m->set_x(v.X());
  m->set_y(v.Y());
  m->set_z(v.Z());
}

class SceneBroadcaster final : public System,
                               public ISystemConfigurePriority,
                               public ISystemConfigure,
                               public ISystemPostUpdate {
 public:
  ~SceneBroadcaster() override { node_.reset(); }

  void configure_priority(ecs::Entity, const Element&, ecs::Registry&,
                          sim::EventBus& events) override {
    ready_sub_ = events.subscribe<detail::TransportReady>(
        [this](const detail::TransportReady& r) { start(r); });
  }

  void configure(ecs::Entity entity, const Element&, ecs::Registry&, sim::EventBus&) override {
    world_ = entity;
  }

  void post_update(const UpdateInfo& info, const ecs::Registry& reg) override {
    if (!node_) return;
    if (!pose_pub_->connected && !dyn_pub_->connected) return;
    const auto now = SteadyClock::now();
    if (now < next_) return;
    next_ = now + std::chrono::microseconds(16'667);  // 60 Hz
    const Duration t = info.sim_time + info.dt;
    if (pose_pub_->connected) publish_poses(reg, t, false, pose_pub_);
    if (dyn_pub_->connected) publish_poses(reg, t, true, dyn_pub_);
  }

 private:
  void start(const detail::TransportReady& r) {
    ctx_ = r;
    node_ = std::make_unique<ignition::transport::Node>();
    const std::string type = msgs::Pose_V().GetTypeName();
    pose_pub_ = ctx_.outbox->channel(ctx_.prefix + "/pose/info", type);
    dyn_pub_ = ctx_.outbox->channel(ctx_.prefix + "/dynamic_pose/info", type);
    std::function<bool(const msgs::Empty&, msgs::Scene&)> scene = [this](const msgs::Empty&,
                                                                         msgs::Scene& rep) {
      return on_step(rep, [this](sim::Runner& run, msgs::Scene& m) { fill_scene(run, m); });
    };
    std::function<bool(const msgs::Empty&, msgs::SerializedStepMap&)> state =
        [this](const msgs::Empty&, msgs::SerializedStepMap& rep) {
          return on_step(
              rep, [this](sim::Runner& run, msgs::SerializedStepMap& m) { fill_state(run, m); });
        };
    if (!node_->Advertise(ctx_.prefix + "/scene/info", scene) ||
        !node_->Advertise(ctx_.prefix + "/state", state)) {
      throw Error("transport: cannot advertise " + ctx_.prefix + "/scene/info or /state");
    }
  }

  // Builds a reply on the step thread (the registry is only read there).
  template <class M, class Fill>
  bool on_step(M& rep, Fill fill) {
    auto r = detail::on_step_thread<std::string>(
        *ctx_.runner,
        [&fill](sim::Runner& run) {
          M m;
          fill(run, m);
          return m.SerializeAsString();
        },
        ctx_.request_timeout);
    if (!r) {
      ++ctx_.counters->rejected_requests;
      detail::log_line(fmt::format("{}: no answer from the world within {} ms", ctx_.prefix,
                                   ctx_.request_timeout.count()));
      return false;
    }
    return rep.ParseFromString(*r);
  }

  void publish_poses(const ecs::Registry& reg, Duration t, bool dynamic_only,
                     detail::Outbox::Channel* ch) {
    msgs::Pose_V v;
    detail::stamp(v.mutable_header(), t);
    auto add = [&](ecs::Entity e, const c::Pose& p) {
      auto* m = v.add_pose();
      m->set_name(reg.get<c::Name>(e).value);
      m->set_id(static_cast<std::uint32_t>(e));
      detail::to_msg(p.value, m);
    };
    reg.each<c::Model, c::Pose>([&](ecs::Entity e, const c::Model&, const c::Pose& p) {
      if (dynamic_only) {
        const auto* s = reg.try_get<c::Static>(e);
        if (s && s->value) return;
      }
      add(e, p);
    });
    reg.each<c::Link, c::Pose>([&](ecs::Entity e, const c::Link&, const c::Pose& p) {
      if (dynamic_only) {
        const auto* s = reg.try_get<c::Static>(reg.parent(e));
        if (s && s->value) return;
      }
      add(e, p);
    });
    ctx_.outbox->send(ch, std::make_unique<msgs::Pose_V>(std::move(v)));
  }

  static void fill_model(const ecs::Registry& reg, ecs::Entity e, msgs::Model* m) {
    m->set_name(reg.get<c::Name>(e).value);
    m->set_id(static_cast<std::uint32_t>(e));
    if (const auto* s = reg.try_get<c::Static>(e)) m->set_is_static(s->value);
    if (const auto* p = reg.try_get<c::Pose>(e)) detail::to_msg(p->value, m->mutable_pose());
    for (ecs::Entity k : reg.children(e)) {
      if (reg.has<c::Model>(k)) {
        fill_model(reg, k, m->add_model());
      } else if (reg.has<c::Link>(k)) {
        auto* l = m->add_link();
        l->set_name(reg.get<c::Name>(k).value);
        l->set_id(static_cast<std::uint32_t>(k));
        if (const auto* p = reg.try_get<c::Pose>(k)) detail::to_msg(p->value, l->mutable_pose());
        if (const auto* in = reg.try_get<c::Inertial>(k)) {
          l->mutable_inertial()->set_mass(in->value.MassMatrix().Mass());
        }
      } else if (const auto* jd = reg.try_get<c::JointData>(k)) {
        auto* j = m->add_joint();
        j->set_name(reg.get<c::Name>(k).value);
        j->set_id(static_cast<std::uint32_t>(k));
        j->set_type(joint_type(jd->type));
        j->set_parent(jd->parent_name);
        j->set_parent_id(static_cast<std::uint32_t>(jd->parent));
        j->set_child(jd->child_name);
        j->set_child_id(static_cast<std::uint32_t>(jd->child));
        if (const auto* p = reg.try_get<c::Pose>(k)) detail::to_msg(p->value, j->mutable_pose());
        fill_vec(jd->axis.xyz, j->mutable_axis1()->mutable_xyz());
        j->mutable_axis1()->set_limit_lower(jd->axis.lower);
        j->mutable_axis1()->set_limit_upper(jd->axis.upper);
        if (jd->axis2) fill_vec(jd->axis2->xyz, j->mutable_axis2()->mutable_xyz());
      }
    }
  }

  void fill_scene(sim::Runner& run, msgs::Scene& m) const {
    const auto& reg = run.registry();
    m.set_name(reg.get<c::Name>(world_).value);
    if (const auto* s = reg.try_get<c::Scene>(world_)) {
      auto color = [](const ignition::math::Vector3d& v, msgs::Color* col) {
        col->set_r(static_cast<float>(v.X()));
        col->set_g(static_cast<float>(v.Y()));
        col->set_b(static_cast<float>(v.Z()));
        col->set_a(1.0f);
      };
      color(s->ambient, m.mutable_ambient());
      color(s->background, m.mutable_background());
      m.set_shadows(s->shadows);
      m.set_grid(s->grid);
    }
    for (ecs::Entity e : reg.children(world_)) {
      if (reg.removal_pending(e)) continue;
      if (reg.has<c::Model>(e)) fill_model(reg, e, m.add_model());
      if (const auto* l = reg.try_get<c::Light>(e)) {
        auto* lm = m.add_light();
        lm->set_name(reg.get<c::Name>(e).value);
        lm->set_id(static_cast<std::uint32_t>(e));
        lm->set_type(l->type == "spot"          ? msgs::Light::SPOT
                     : l->type == "directional" ? msgs::Light::DIRECTIONAL
                                                : msgs::Light::POINT);
        if (const auto* p = reg.try_get<c::Pose>(e)) detail::to_msg(p->value, lm->mutable_pose());
      }
    }
  }

  void fill_state(sim::Runner& run, msgs::SerializedStepMap& m) const {
    const auto& reg = run.registry();
    const auto info = run.info();
    auto* st = m.mutable_stats();
    detail::to_msg(info.sim_time, st->mutable_sim_time());
    detail::to_msg(info.real_time, st->mutable_real_time());
    st->set_iterations(info.iterations);
    st->set_paused(run.stats().paused);
    st->set_model_count(static_cast<std::int32_t>(reg.count<c::Model>()));
    detail::to_msg(run.options().step_size, st->mutable_step_size());
    auto* state = m.mutable_state();
    detail::stamp(state->mutable_header(), info.sim_time);
    static const std::uint64_t kName = fnv1a("ign_gazebo_components.Name");
    static const std::uint64_t kParent = fnv1a("ign_gazebo_components.ParentEntity");
    static const std::uint64_t kPose = fnv1a("ign_gazebo_components.Pose");
    static const std::uint64_t kModel = fnv1a("ign_gazebo_components.Model");
    static const std::uint64_t kLink = fnv1a("ign_gazebo_components.Link");
    static const std::uint64_t kJoint = fnv1a("ign_gazebo_components.Joint");
    static const std::uint64_t kWorld = fnv1a("ign_gazebo_components.World");
    for (ecs::Entity e : reg.entities()) {
      const bool model = reg.has<c::Model>(e), link = reg.has<c::Link>(e),
                 joint = reg.has<c::Joint>(e), world = e == world_;
      if (!model && !link && !joint && !world) continue;
      auto& em = (*state->mutable_entities())[e];
      em.set_id(e);
      auto put = [&](std::uint64_t type, std::string bytes) {
        auto& comp = (*em.mutable_components())[static_cast<std::int64_t>(type)];
        comp.set_type(type);
        comp.set_component(std::move(bytes));
      };
      put(kName, reg.get<c::Name>(e).value);
      if (reg.parent(e) != ecs::kNullEntity) put(kParent, std::to_string(reg.parent(e)));
      if (const auto* p = reg.try_get<c::Pose>(e)) {
        msgs::Pose pm;
        detail::to_msg(p->value, &pm);
        put(kPose, pm.SerializeAsString());
      }
      put(world ? kWorld : model ? kModel : link ? kLink : kJoint, "");
    }
  }

  ecs::Entity world_ = ecs::kNullEntity;
  detail::TransportReady ctx_;
  sim::EventBus::Subscription ready_sub_;
  SteadyClock::time_point next_{};
  detail::Outbox::Channel *pose_pub_ = nullptr, *dyn_pub_ = nullptr;
  std::unique_ptr<ignition::transport::Node> node_;
};

}  // namespace

std::unique_ptr<System> make_scene_broadcaster_system() {
  return std::make_unique<SceneBroadcaster>();
}

}  // namespace kestrel::transport
