// Components <-> topics for multicopters and sensors (see bridges.h).
#include "transport/bridges.h"

#include <ignition/msgs/actuators.pb.h>
#include <ignition/msgs/battery_state.pb.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/double.pb.h>
#include <ignition/msgs/empty.pb.h>
#include <ignition/msgs/float.pb.h>
#include <ignition/msgs/int32.pb.h>
#include <ignition/msgs/joint_trajectory.pb.h>
#include <ignition/msgs/model.pb.h>
#include <ignition/msgs/odometry.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/stringmsg.pb.h>
#include <ignition/msgs/twist.pb.h>
#include <ignition/msgs/vector3d.pb.h>

#include <mutex>
#include <optional>

#include "kestrel/components/joint_trajectory.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/multicopter.h"
#include "transport/entity_wrench.h"
#include "transport/outbox.h"

namespace kestrel::transport::detail {

namespace c = kestrel::components;
namespace msgs = ignition::msgs;

namespace {

// The latest not-yet-applied value of one subscription, applied at the next step boundary.
template <class V>
struct Pending {
  std::mutex m;
  std::optional<V> value;
  bool posted = false;
};

// Charging while a charging current flows; full at capacity; discharging while the load is
// applied; otherwise (empty, or draining not started or stopped) not charging.
msgs::BatteryState::PowerSupplyStatus power_supply_status(const c::Battery& b) {
  // Gazebo's order: charging, draining, above 90 %, otherwise not charging.
  if (b.charging) return msgs::BatteryState::CHARGING;
  if (b.draining) return msgs::BatteryState::DISCHARGING;
  if (b.percentage > 0.9) return msgs::BatteryState::FULL;
  return msgs::BatteryState::NOT_CHARGING;
}

void to_msg(const ignition::math::Vector3d& v, msgs::Vector3d* m) {
  m->set_x(v.X());
  m->set_y(v.Y());
  m->set_z(v.Z());
}

void add_data(msgs::Header* h, const char* key, const std::string& value) {
  auto* d = h->add_data();
  d->set_key(key);
  d->add_value(value);
}

// The header Gazebo's odometry systems send: stamp, frame_id, child_frame_id (if any).
void odometry_header(const c::OdometryOutput& o, msgs::Header* h) {
  stamp(h, o.stamp);
  add_data(h, "frame_id", o.frame_id);
  if (!o.child_frame_id.empty()) add_data(h, "child_frame_id", o.child_frame_id);
}

// sec + nsec as a Duration, saturated to its range (a peer's 10^10 s must not overflow).
Duration saturated_duration(std::int64_t sec, std::int64_t nsec) {
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(sec, std::int64_t{1'000'000'000}, &ns) ||
      __builtin_add_overflow(ns, nsec, &ns)) {
    return sec < 0 ? Duration::min() : Duration::max();
  }
  return Duration{ns};
}

// A JointTrajectory as the controller reads it (components/joint_trajectory.h).
void joint_trajectory_from_msg(c::JointTrajectoryEntry& d, const msgs::JointTrajectory& m) {
  d.has_stamp = m.has_header() && m.header().has_stamp();
  d.stamp = d.has_stamp ? saturated_duration(m.header().stamp().sec(), m.header().stamp().nsec())
                        : Duration{0};
  d.joint_names.assign(m.joint_names().begin(), m.joint_names().end());
  d.points.clear();
  for (const auto& p : m.points()) {
    c::JointTrajectoryPoint& q = d.points.emplace_back();
    q.positions.assign(p.positions().begin(), p.positions().end());
    q.velocities.assign(p.velocities().begin(), p.velocities().end());
    q.accelerations.assign(p.accelerations().begin(), p.accelerations().end());
    q.effort.assign(p.effort().begin(), p.effort().end());
    q.time_from_start = saturated_duration(p.time_from_start().sec(), p.time_from_start().nsec());
  }
}

}  // namespace

struct Bridges::Impl {
  sim::Runner& runner;
  ignition::transport::Node& node;
  Counters& counters;
  Outbox& outbox;
  std::set<std::pair<ecs::Entity, std::string>> subscribed;  // (entity, topic)
  std::map<std::string, Outbox::Channel*> channels;
  std::size_t topic_count = ~std::size_t{0};
  std::uint64_t last_iterations = 0;
  SensorPublisher sensors;

  Impl(sim::Runner& r, ignition::transport::Node& n, Counters& k, Outbox& o)
      : runner(r), node(n), counters(k), outbox(o), sensors(o) {}

  // A thread-safe sink for values of V: the latest one is set on `e` at the next step boundary.
  template <class V>
  std::function<void(V)> sink(ecs::Entity e) {
    auto pending = std::make_shared<Pending<V>>();
    sim::Runner* r = &runner;
    Counters* k = &counters;
    return [pending, r, k, e](V value) {
      std::lock_guard lock(pending->m);
      if (pending->value) ++k->dropped;
      pending->value = std::move(value);
      if (pending->posted) return;
      pending->posted = true;
      r->post([pending, e](sim::Runner& run) {
        std::optional<V> v;
        {
          std::lock_guard l(pending->m);
          v.swap(pending->value);
          pending->posted = false;
        }
        if (!v || !run.registry().alive(e)) return;
        if constexpr (std::is_same_v<V, c::ActuatorCommands>) v->stamp = run.info().sim_time;
        run.registry().set<V>(e, std::move(*v));
      });
    };
  }

  // Runs `subscribe(node)` on the Outbox thread (the step thread never takes transport's lock:
  // outbox.h) unless (e, topic) is already subscribed, topic is empty or e is being removed.
  // @throws Error if the topic name is invalid.
  template <class Subscribe>
  void subscribe_once(ecs::Entity e, const std::string& topic, Subscribe subscribe) {
    if (topic.empty() || runner.registry().removal_pending(e)) return;
    if (!subscribed.insert({e, topic}).second) return;
    if (!ignition::transport::TopicUtils::IsValidTopic(topic)) {
      throw Error("transport: cannot subscribe to '" + topic + "' (" +
                  runner.registry().describe(e) + "): not a valid topic name");
    }
    outbox.run([n = &node, topic, subscribe, k = &counters]() mutable {
      if (!subscribe(*n)) {
        ++k->subscribe_failures;
        log_line("cannot subscribe to " + topic);
      }
    });
  }

  // Subscribes `topic` with message type M; each message becomes the value V set on `e`.
  template <class M, class V, class Convert>
  void subscribe(ecs::Entity e, const std::string& topic, Convert convert) {
    std::function<void(const M&)> cb = [put = sink<V>(e), convert](const M& msg) {
      put(convert(msg));
    };
    subscribe_once(e, topic, [topic, cb](ignition::transport::Node& n) mutable {
      return n.Subscribe(topic, cb);
    });
  }

  // Subscribes `topic` for any message type; each message sets `value` on `e`.
  template <class V>
  void subscribe_any(ecs::Entity e, const std::string& topic, V value) {
    ignition::transport::RawCallback cb =
        [put = sink<V>(e), value](const char*, std::size_t,
                                  const ignition::transport::MessageInfo&) { put(value); };
    subscribe_once(e, topic, [topic, cb](ignition::transport::Node& n) mutable {
      return n.SubscribeRaw(topic, cb);
    });
  }

  // Subscribes `topic` with message type M for the entries of `e`'s Inputs (TopicInputs,
  // JointTrajectoryTopics) that name it: at the next step boundary the latest message is
  // written into each of them by `apply`. With `service`, a one-way service named `topic` with
  // request M is advertised instead.
  template <class M, class Inputs, class Entry, class Apply>
  void subscribe_input(ecs::Entity e, const std::string& topic, std::vector<Entry> Inputs::*field,
                       Apply apply, bool service = false) {
    auto pending = std::make_shared<Pending<M>>();
    sim::Runner* run = &runner;
    Counters* k = &counters;
    std::function<void(const M&)> cb = [=](const M& msg) {
      std::lock_guard lock(pending->m);
      if (pending->value) ++k->dropped;
      pending->value = msg;
      if (pending->posted) return;
      pending->posted = true;
      run->post([=](sim::Runner& rr) {
        std::optional<M> v;
        {
          std::lock_guard l(pending->m);
          v.swap(pending->value);
          pending->posted = false;
        }
        if (!v || !rr.registry().alive(e)) return;
        auto* in = rr.registry().try_get<Inputs>(e);
        if (!in) return;
        for (Entry& entry : (*in).*field) {
          if (entry.topic != topic) continue;
          apply(entry, *v);
          ++entry.count;
        }
        rr.registry().mark_changed<Inputs>(e);
      });
    };
    subscribe_once(e, topic, [topic, cb, service](ignition::transport::Node& n) mutable {
      return service ? n.Advertise(topic, cb) : n.Subscribe(topic, cb);
    });
  }

  // An EventInput with any_type: every message on `topic`, whatever its type, counts once at
  // the next step boundary in the entries that name it (messages between two boundaries: one).
  void subscribe_event_any(ecs::Entity e, const std::string& topic) {
    auto pending = std::make_shared<Pending<bool>>();
    sim::Runner* run = &runner;
    Counters* k = &counters;
    ignition::transport::RawCallback cb = [=](const char*, std::size_t,
                                              const ignition::transport::MessageInfo&) {
      std::lock_guard lock(pending->m);
      if (pending->value) ++k->dropped;
      pending->value = true;
      if (pending->posted) return;
      pending->posted = true;
      run->post([=](sim::Runner& rr) {
        {
          std::lock_guard l(pending->m);
          pending->value.reset();
          pending->posted = false;
        }
        if (!rr.registry().alive(e)) return;
        auto* in = rr.registry().try_get<c::TopicInputs>(e);
        if (!in) return;
        for (c::EventInput& entry : in->event) {
          if (entry.topic == topic && entry.any_type) ++entry.count;
        }
        rr.registry().mark_changed<c::TopicInputs>(e);
      });
    };
    subscribe_once(e, topic, [topic, cb](ignition::transport::Node& n) mutable {
      return n.SubscribeRaw(topic, cb);
    });
  }

  // A thread-safe appender of items to the `field` entries of `e` that name `topic`: every item
  // is appended at the next step boundary, in arrival order (none is dropped).
  template <class Entry, class Item>
  std::function<void(Item)> appender(ecs::Entity e, const std::string& topic,
                                     std::vector<Entry> c::TopicInputs::*field) {
    sim::Runner* run = &runner;
    return [=](Item item) {
      run->post([=](sim::Runner& rr) {
        if (!rr.registry().alive(e)) return;
        auto* in = rr.registry().try_get<c::TopicInputs>(e);
        if (!in) return;
        for (Entry& entry : (*in).*field) {
          if (entry.topic != topic) continue;
          entry.received.push_back(item);
          ++entry.count;
        }
        rr.registry().mark_changed<c::TopicInputs>(e);
      });
    };
  }

  static c::EntityRef entity_ref(const msgs::Entity& m) {
    return c::EntityRef{m.id(), m.name(), static_cast<int>(m.type())};
  }

  void subscribe_inputs(ecs::Entity e, const c::TopicInputs& in) {
    for (const auto& t : in.entity_wrench) {
      auto put = appender<c::EntityWrenchInput, c::EntityWrench>(e, t.topic,
                                                                 &c::TopicInputs::entity_wrench);
      // EntityWrench is not in msgs 8.2: a raw subscription with Gazebo's type name
      // (entity_wrench.h parses it with protobuf).
      ignition::transport::RawCallback cb = [put, topic = t.topic](
                                                const char* data, std::size_t size,
                                                const ignition::transport::MessageInfo&) {
        const auto m = parse_entity_wrench(std::string(data, size));
        if (!m) {
          log_line(topic + ": not an ignition.msgs.EntityWrench; ignored");
          return;
        }
        c::EntityWrench w;
        w.has_entity = m->entity.has_value();
        w.has_wrench = m->wrench.has_value();
        if (m->entity) w.entity = entity_ref(*m->entity);
        if (m->wrench) {
          const auto& f = m->wrench->force();
          const auto& tq = m->wrench->torque();
          w.force.Set(f.x(), f.y(), f.z());
          w.torque.Set(tq.x(), tq.y(), tq.z());
          w.has_force_offset = m->wrench->has_force_offset();
        }
        put(std::move(w));
      };
      subscribe_once(e, t.topic, [topic = t.topic, cb](ignition::transport::Node& n) mutable {
        return n.SubscribeRaw(topic, cb, kEntityWrenchType);
      });
    }
    for (const auto& t : in.entity) {
      std::function<void(const msgs::Entity&)> cb =
          [put = appender<c::EntityInput, c::EntityRef>(e, t.topic, &c::TopicInputs::entity)](
              const msgs::Entity& m) { put(entity_ref(m)); };
      subscribe_once(e, t.topic, [topic = t.topic, cb](ignition::transport::Node& n) mutable {
        return n.Subscribe(topic, cb);
      });
    }
    for (const auto& t : in.twist) {
      subscribe_input<msgs::Twist>(
          e, t.topic, &c::TopicInputs::twist, [](c::TwistInput& d, const msgs::Twist& m) {
            d.linear.Set(m.linear().x(), m.linear().y(), m.linear().z());
            d.angular.Set(m.angular().x(), m.angular().y(), m.angular().z());
          });
    }
    for (const auto& t : in.boolean) {
      subscribe_input<msgs::Boolean>(
          e, t.topic, &c::TopicInputs::boolean,
          [](c::BoolInput& d, const msgs::Boolean& m) { d.value = m.data(); });
    }
    for (const auto& t : in.real) {
      subscribe_input<msgs::Double>(
          e, t.topic, &c::TopicInputs::real,
          [](c::DoubleInput& d, const msgs::Double& m) { d.value = m.data(); });
    }
    for (const auto& t : in.vector3) {
      subscribe_input<msgs::Vector3d>(
          e, t.topic, &c::TopicInputs::vector3,
          [](c::Vector3Input& d, const msgs::Vector3d& m) { d.value.Set(m.x(), m.y(), m.z()); });
    }
    for (const auto& t : in.int32) {
      subscribe_input<msgs::Int32>(
          e, t.topic, &c::TopicInputs::int32,
          [](c::Int32Input& d, const msgs::Int32& m) { d.value = m.data(); });
    }
    for (const auto& t : in.actuators) {
      subscribe_input<msgs::Actuators>(
          e, t.topic, &c::TopicInputs::actuators,
          [](c::ActuatorsInput& d, const msgs::Actuators& m) {
            d.position.assign(m.position().begin(), m.position().end());
            d.velocity.assign(m.velocity().begin(), m.velocity().end());
            d.normalized.assign(m.normalized().begin(), m.normalized().end());
          });
    }
    for (const auto& t : in.event) {
      if (t.any_type) {
        subscribe_event_any(e, t.topic);
      } else {
        subscribe_input<msgs::Empty>(e, t.topic, &c::TopicInputs::event,
                                     [](c::EventInput&, const msgs::Empty&) {});
      }
    }
    for (const auto& t : in.boolean_service) {
      subscribe_input<msgs::Boolean>(
          e, t.topic, &c::TopicInputs::boolean_service,
          [](c::BoolInput& d, const msgs::Boolean& m) { d.value = m.data(); }, true);
    }
  }

  // Publishes the TopicOutputs entries whose sequence moved since they were last published.
  std::map<std::tuple<ecs::Entity, int, std::size_t>, std::uint64_t> published;
  std::map<ecs::Entity, std::optional<c::MissionState>> mission_sent;  // last state published
  // (Sequence 0 is "nothing yet", also after a reset rewound it.)
  bool advanced(ecs::Entity e, int kind, std::size_t i, std::uint64_t sequence) {
    auto& last = published[{e, kind, i}];
    if (last == sequence) return false;
    last = sequence;
    return sequence != 0;
  }

  void publish_outputs(const ecs::Registry& r) {
    r.each<c::JointTrajectoryTopics>([&](ecs::Entity e, const c::JointTrajectoryTopics& t) {
      for (std::size_t i = 0; i < t.entries.size(); ++i) {
        const auto& entry = t.entries[i];
        if (!advanced(e, 6, i, entry.progress_sequence)) continue;
        msgs::Float m;
        m.set_data(entry.progress);
        publish(entry.progress_topic, m);
      }
    });
    r.each<c::TopicOutputs>([&](ecs::Entity e, const c::TopicOutputs& out) {
      for (std::size_t i = 0; i < out.odometry.size(); ++i) {
        const auto& o = out.odometry[i];
        if (!advanced(e, 0, i, o.sequence)) continue;
        msgs::Odometry m;
        odometry_header(o, m.mutable_header());
        to_msg(o.pose, m.mutable_pose());
        to_msg(o.linear, m.mutable_twist()->mutable_linear());
        to_msg(o.angular, m.mutable_twist()->mutable_angular());
        if (!o.topic.empty()) publish(o.topic, m);
        if (!o.tf_topic.empty()) {
          msgs::Pose_V tf;
          auto* p = tf.add_pose();
          *p = m.pose();
          *p->mutable_header() = m.header();
          publish(o.tf_topic, tf);
        }
      }
      for (std::size_t i = 0; i < out.poses.size(); ++i) {
        const auto& o = out.poses[i];
        if (!advanced(e, 1, i, o.sequence) || o.topic.empty()) continue;
        msgs::Pose_V v;
        for (const auto& item : o.items) {
          msgs::Pose p;
          stamp(p.mutable_header(), o.stamp);
          add_data(p.mutable_header(), "frame_id", item.frame_id);
          add_data(p.mutable_header(), "child_frame_id", item.child_frame_id);
          p.set_name(item.name);
          to_msg(item.pose, &p);
          if (o.vector) {
            *v.add_pose() = std::move(p);
          } else {
            publish(o.topic, p);
          }
        }
        if (o.vector) publish(o.topic, v);
      }
      for (std::size_t i = 0; i < out.real.size(); ++i) {
        if (!advanced(e, 2, i, out.real[i].sequence)) continue;
        msgs::Double m;
        m.set_data(out.real[i].value);
        publish(out.real[i].topic, m);
      }
      for (std::size_t i = 0; i < out.boolean.size(); ++i) {
        if (!advanced(e, 3, i, out.boolean[i].sequence)) continue;
        msgs::Boolean m;
        m.set_data(out.boolean[i].value);
        publish(out.boolean[i].topic, m);
      }
      for (std::size_t i = 0; i < out.joint_state.size(); ++i) {
        if (!advanced(e, 4, i, out.joint_state[i].sequence)) continue;
        publish(out.joint_state[i].topic, joint_state_msg(out.joint_state[i]));
      }
      for (std::size_t i = 0; i < out.string.size(); ++i) {
        if (!advanced(e, 5, i, out.string[i].sequence) || out.string[i].topic.empty()) continue;
        msgs::StringMsg m;
        m.set_data(out.string[i].value);
        // A state change is rare and may follow a subscription by less than the Outbox's
        // connection refresh (10 ms): handed over whatever `connected` says.
        outbox.send(channel_for<msgs::StringMsg>(out.string[i].topic),
                    std::make_unique<msgs::StringMsg>(m));
      }
    });
  }

  static msgs::Model joint_state_msg(const c::JointStateOutput& o) {
    msgs::Model m;
    stamp(m.mutable_header(), o.stamp);
    m.set_name(o.name);
    m.set_id(o.id);
    to_msg(o.pose, m.mutable_pose());
    for (const auto& j : o.joints) {
      msgs::Joint* jm = m.add_joint();
      jm->set_name(j.name);
      jm->set_id(j.id);
      to_msg(j.pose, jm->mutable_pose());
      jm->set_parent(j.parent);
      jm->set_child(j.child);
      const auto axis = [](const c::JointStateOutput::Axis& a, msgs::Axis* am) {
        am->set_position(a.position);
        am->set_velocity(a.velocity);
        am->set_force(a.force);
      };
      if (j.has_axis1) axis(j.axis1, jm->mutable_axis1());
      if (j.has_axis1_info) {
        msgs::Axis* a = jm->mutable_axis1();
        to_msg(j.xyz, a->mutable_xyz());
        a->set_limit_lower(j.lower);
        a->set_limit_upper(j.upper);
        a->set_damping(j.damping);
      }
      if (j.has_axis2) axis(j.axis2, jm->mutable_axis2());
    }
    return m;
  }

  // Publishes a copy of m on `topic` if someone listens (the channel is advertised on first use).
  template <class M>
  void publish(const std::string& topic, const M& m) {
    Outbox::Channel* ch = channel_for<M>(topic);
    if (ch->connected) outbox.send(ch, std::make_unique<M>(m));
  }

  // The channel of `topic` with message type M (advertised on first use).
  template <class M>
  Outbox::Channel* channel_for(const std::string& topic) {
    auto it = channels.find(topic);
    if (it == channels.end()) {
      it = channels.emplace(topic, outbox.channel(topic, M().GetTypeName())).first;
    }
    return it->second;
  }

  // Event outputs (a message when something happens, maybe once) are advertised when their
  // entry appears, so a subscriber is connected by the time the event is published.
  void advertise_events(const c::TopicOutputs& out) {
    for (const auto& o : out.real) {
      if (!o.topic.empty()) channel_for<msgs::Double>(o.topic);
    }
    for (const auto& o : out.boolean) {
      if (!o.topic.empty()) channel_for<msgs::Boolean>(o.topic);
    }
    for (const auto& o : out.string) {
      if (!o.topic.empty()) channel_for<msgs::StringMsg>(o.topic);
    }
  }

  template <class... Ts>
  struct Types {};
  using TopicTypes =
      Types<c::ActuatorCommandTopic, c::TwistCommandTopic, c::VelocityControlEnableTopic,
            c::RotorVelocityTopic, c::BatteryTopic, c::MissionCommandTopic, c::FaultCommandTopic,
            c::BatteryRechargeTopic, c::BatteryDrainTopics, c::TopicInputs, c::TopicOutputs,
            c::JointTrajectoryTopics>;

  // The number of topic components, and whether an entity created or being removed this step
  // has one (the registry's new/removed lists are empty in the usual step: nothing to visit).
  template <class... Ts>
  static std::pair<std::size_t, bool> survey(const ecs::Registry& r, Types<Ts...>) {
    bool changed = false;
    const auto hit = [&](ecs::Entity, const auto&) {
      changed = true;
      return false;
    };
    (..., (changed || (r.each_new<Ts>(hit), changed) || (r.each_removed<Ts>(hit), changed)));
    return {(std::size_t{0} + ... + r.count<Ts>()), changed};
  }

  // Drops the subscriptions of entities being removed (or gone) and unsubscribes a topic no
  // remaining entity uses, before any new subscription is queued on the Outbox thread (a model
  // removed and one of the same name spawned in one step get one subscription: the new one's).
  void drop_removed(const ecs::Registry& r) {
    std::set<std::string> dropped;
    for (auto it = subscribed.begin(); it != subscribed.end();) {
      if (r.alive(it->first) && !r.removal_pending(it->first)) {
        ++it;
        continue;
      }
      dropped.insert(it->second);
      it = subscribed.erase(it);
    }
    for (const auto& [e, topic] : subscribed) dropped.erase(topic);
    for (const auto& topic : dropped) {
      outbox.run([n = &node, topic] { n->Unsubscribe(topic); });
    }
  }

  // Subscribes the command topics of entities that have one and are not being removed. Skipped
  // when nothing can have changed: the same number of topic components and no entity with one
  // created or removed this step (a model removed in one step and another spawned in the next
  // leave the count unchanged) and no reset (which brings removed entities back).
  void scan(const ecs::Registry& r, std::uint64_t iterations) {
    const auto [n, changed] = survey(r, TopicTypes{});
    const bool reset = iterations < last_iterations;
    last_iterations = iterations;
    if (n == topic_count && !changed && !reset) return;
    topic_count = n;
    drop_removed(r);
    r.each<c::ActuatorCommandTopic>([&](ecs::Entity e, const c::ActuatorCommandTopic& t) {
      subscribe<msgs::Actuators, c::ActuatorCommands>(e, t.topic, [](const msgs::Actuators& m) {
        c::ActuatorCommands v;
        v.velocity.assign(m.velocity().begin(), m.velocity().end());
        return v;
      });
    });
    r.each<c::TwistCommandTopic>([&](ecs::Entity e, const c::TwistCommandTopic& t) {
      subscribe<msgs::Twist, c::TwistCommand>(e, t.topic, [](const msgs::Twist& m) {
        c::TwistCommand v;
        v.linear.Set(m.linear().x(), m.linear().y(), m.linear().z());
        v.angular.Set(m.angular().x(), m.angular().y(), m.angular().z());
        v.received = true;
        return v;
      });
    });
    r.each<c::VelocityControlEnableTopic>([&](ecs::Entity e,
                                              const c::VelocityControlEnableTopic& t) {
      subscribe<msgs::Boolean, c::VelocityControlEnable>(
          e, t.topic, [](const msgs::Boolean& m) { return c::VelocityControlEnable{m.data()}; });
    });
    // Missions and faults as text (the SDF syntax); the systems parse and validate them.
    r.each<c::MissionCommandTopic>([&](ecs::Entity e, const c::MissionCommandTopic& t) {
      subscribe<msgs::StringMsg, c::MissionCommand>(e, t.topic, [topic = t.topic](const auto& m) {
        return c::MissionCommand{m.data(), "topic " + topic};
      });
    });
    r.each<c::FaultCommandTopic>([&](ecs::Entity e, const c::FaultCommandTopic& t) {
      subscribe<msgs::StringMsg, c::FaultCommand>(e, t.topic, [topic = t.topic](const auto& m) {
        return c::FaultCommand{m.data(), "topic " + topic};
      });
    });
    r.each<c::BatteryRechargeTopic>([&](ecs::Entity e, const c::BatteryRechargeTopic& t) {
      for (const bool on : {true, false}) {
        subscribe<msgs::Boolean, c::BatteryRecharge>(
            e, on ? t.start : t.stop,
            [on](const msgs::Boolean&) { return c::BatteryRecharge{on}; });
      }
    });
    // Draining: any message type (Gazebo's power_draining_topic / stop_power_draining_topic).
    r.each<c::BatteryDrainTopics>([&](ecs::Entity e, const c::BatteryDrainTopics& t) {
      using A = c::BatteryDrainCommand::Action;
      for (const auto& topic : t.start) subscribe_any(e, topic, c::BatteryDrainCommand{A::kStart});
      for (const auto& topic : t.stop) subscribe_any(e, topic, c::BatteryDrainCommand{A::kStop});
    });
    r.each<c::TopicInputs>(
        [&](ecs::Entity e, const c::TopicInputs& in) { subscribe_inputs(e, in); });
    r.each<c::TopicOutputs>(
        [&](ecs::Entity, const c::TopicOutputs& out) { advertise_events(out); });
    r.each<c::JointTrajectoryTopics>([&](ecs::Entity e, const c::JointTrajectoryTopics& t) {
      for (const auto& entry : t.entries) {
        subscribe_input<msgs::JointTrajectory>(e, entry.topic, &c::JointTrajectoryTopics::entries,
                                               &joint_trajectory_from_msg);
        channel_for<msgs::Float>(entry.progress_topic);  // an event: advertised beforehand
      }
    });
    // The other publishers are created on first use in post_update.
  }
};

Bridges::Bridges(sim::Runner& runner, ignition::transport::Node& node, Counters& counters,
                 Outbox& outbox)
    : impl_(std::make_unique<Impl>(runner, node, counters, outbox)) {}
Bridges::~Bridges() = default;

void Bridges::configure(const ecs::Registry& registry) { impl_->scan(registry, 0); }

void Bridges::post_update(const UpdateInfo& info, const ecs::Registry& r) {
  impl_->scan(r, info.iterations);
  impl_->sensors.post_update(r);
  if (info.dt <= Duration{0}) return;  // paused: nothing new to publish
  const Duration now = info.sim_time + info.dt;
  r.each<c::RotorVelocities, c::RotorVelocityTopic>(
      [&](ecs::Entity, const c::RotorVelocities& v, const c::RotorVelocityTopic& t) {
        if (!t.topic.empty()) {
          msgs::Actuators m;
          stamp(m.mutable_header(), now);
          for (double w : v.velocity) m.add_velocity(w);
          impl_->publish(t.topic, m);
        }
        for (std::size_t i = 0; i < t.per_actuator.size() && i < v.velocity.size(); ++i) {
          if (t.per_actuator[i].empty()) continue;
          msgs::Double d;
          stamp(d.mutable_header(), now);
          d.set_data(v.velocity[i]);
          impl_->publish(t.per_actuator[i], d);
        }
      });
  impl_->publish_outputs(r);
  // The mission's progress on its state topic, when its phase, item or waypoint changes.
  r.each<c::MissionState, c::MissionStateTopic>(
      [&](ecs::Entity e, const c::MissionState& s, const c::MissionStateTopic& t) {
        if (t.topic.empty()) return;
        auto& last = impl_->mission_sent[e];
        if (last && last->phase == s.phase && last->item == s.item &&
            last->waypoint == s.waypoint && last->reason == s.reason) {
          return;  // every step: nothing built unless something changed
        }
        last = s;
        std::string text = std::string("phase ") + c::mission_phase_name(s.phase) + ", item " +
                           std::to_string(s.item) + ", waypoint " + std::to_string(s.waypoint) +
                           " of " + std::to_string(s.waypoint_count);
        if (!s.reason.empty()) text += ": " + s.reason;
        msgs::StringMsg m;
        stamp(m.mutable_header(), now);
        m.set_data(text);
        impl_->publish(t.topic, m);
      });
  r.each<c::Battery, c::BatteryTopic>(
      [&](ecs::Entity, const c::Battery& b, const c::BatteryTopic& t) {
        if (t.topic.empty()) return;
        msgs::BatteryState m;
        stamp(m.mutable_header(), now);
        m.set_voltage(b.voltage);
        // [A], positive while discharging (negative with invert_current_sign), as Gazebo.
        m.set_current(t.invert_current ? -b.current : b.current);
        m.set_charge(b.charge);
        m.set_capacity(b.capacity);
        m.set_percentage(b.percentage * t.percentage_scale);
        m.set_power_supply_status(power_supply_status(b));
        impl_->publish(t.topic, m);
      });
}

}  // namespace kestrel::transport::detail
