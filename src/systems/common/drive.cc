#include "common/drive.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {

namespace c = kestrel::components;

ecs::Entity require_model(const ecs::Registry& r, ecs::Entity entity, const Element& config,
                          std::string_view system) {
  if (!r.has<c::Model>(entity)) {
    throw Error(config.where(), fmt::format("{} must be declared inside a <model> (it is attached "
                                            "to {})",
                                            system, r.describe(entity)));
  }
  return entity;
}

std::string model_topic(const ecs::Registry& r, ecs::Entity model, std::string_view suffix) {
  return "/model/" + r.get<c::Name>(model).value + "/" + std::string(suffix);
}

std::string canonical_link_name(const ecs::Registry& r, ecs::Entity model) {
  for (ecs::Entity e : r.children(model)) {
    if (r.has<c::Link>(e)) return r.get<c::Name>(e).value;
  }
  return {};
}

std::vector<ecs::Entity> wheel_joints(const ecs::Registry& r, ecs::Entity model,
                                      const Element& config, std::string_view parameter) {
  std::vector<ecs::Entity> out;
  const auto elements = config.children(parameter);
  if (elements.empty()) {
    throw Error(config.where(), fmt::format("<{}> is missing: name at least one joint", parameter));
  }
  for (const Element* e : elements) {
    const auto name = e->value<std::string>();
    // find_joint reports the first <parameter> element's line; report this one's.
    ecs::Entity j = ecs::kNullEntity;
    try {
      j = find_joint(r, model, name, config, parameter);
    } catch (const Error& err) {
      const std::string what = err.what();
      const auto at = what.find(": <");
      throw Error(e->where(), at == std::string::npos ? what : what.substr(at + 2));
    }
    const auto type = r.get<c::JointData>(j).type;
    if (type != c::JointType::kRevolute && type != c::JointType::kContinuous &&
        type != c::JointType::kPrismatic) {
      throw Error(e->where(), fmt::format("<{}> '{}' must be a revolute, continuous or prismatic "
                                          "joint (one axis to command)",
                                          parameter, name));
    }
    out.push_back(j);
  }
  return out;
}

void read_speed_limits(const Element& config, std::string_view infix,
                       ignition::math::SpeedLimiter& limiter) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  struct Limit {
    const char* what;
    void (ignition::math::SpeedLimiter::*set_min)(double);
    void (ignition::math::SpeedLimiter::*set_max)(double);
  };
  for (const Limit& l : {Limit{"velocity", &ignition::math::SpeedLimiter::SetMinVelocity,
                               &ignition::math::SpeedLimiter::SetMaxVelocity},
                         Limit{"acceleration", &ignition::math::SpeedLimiter::SetMinAcceleration,
                               &ignition::math::SpeedLimiter::SetMaxAcceleration},
                         Limit{"jerk", &ignition::math::SpeedLimiter::SetMinJerk,
                               &ignition::math::SpeedLimiter::SetMaxJerk}}) {
    const std::string min_name = fmt::format("min_{}{}", infix, l.what);
    const std::string max_name = fmt::format("max_{}{}", infix, l.what);
    const double lo = get_finite_or(config, min_name, -inf),
                 hi = get_finite_or(config, max_name, inf);
    if (lo > hi) {
      throw Error(config.child(min_name)->where(),
                  fmt::format("<{}> {} exceeds <{}> {}", min_name, lo, max_name, hi));
    }
    if (config.child(min_name)) (limiter.*l.set_min)(lo);
    if (config.child(max_name)) (limiter.*l.set_max)(hi);
  }
}

void limit_twist(const ignition::math::SpeedLimiter& linear,
                 const ignition::math::SpeedLimiter& angular, TwistHistory& h, double& lin,
                 double& ang, Duration dt) {
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(dt);
  linear.Limit(lin, h.lin0, h.lin1, step);
  angular.Limit(ang, h.ang0, h.ang1, step);
  h.lin1 = h.lin0;
  h.ang1 = h.ang0;
  h.lin0 = lin;
  h.ang0 = ang;
}

std::size_t add_drive_odometry(ecs::Registry& r, ecs::Entity model, const Element& config) {
  c::OdometryOutput out;
  out.topic = config.get_or<std::string>("odom_topic", model_topic(r, model, "odometry"));
  out.tf_topic = config.get_or<std::string>("tf_topic", model_topic(r, model, "tf"));
  const std::string name = r.get<c::Name>(model).value;
  out.frame_id = config.get_or<std::string>("frame_id", name + "/odom");
  const std::string link = canonical_link_name(r, model);
  out.child_frame_id =
      config.get_or<std::string>("child_frame_id", link.empty() ? "" : name + "/" + link);
  return add_odometry_output(r, model, std::move(out));
}

void update_drive_odometry(ecs::Registry& r, ecs::Entity model, std::size_t index,
                           ignition::math::DiffDriveOdometry& odometry, double left, double right,
                           Duration now, PublishSchedule& schedule) {
  if (!odometry.Initialized()) {
    odometry.Init(time_point(now));
    return;
  }
  odometry.Update(ignition::math::Angle(left), ignition::math::Angle(right), time_point(now));
  if (!schedule.due(now)) return;
  auto& o = r.get<c::TopicOutputs>(model).odometry[index];
  o.stamp = now;
  o.pose = ignition::math::Pose3d(ignition::math::Vector3d(odometry.X(), odometry.Y(), 0),
                                  ignition::math::Quaterniond(0, 0, odometry.Heading().Radian()));
  o.linear.Set(odometry.LinearVelocity(), 0, 0);
  o.angular.Set(0, 0, odometry.AngularVelocity().Radian());
  ++o.sequence;
}

Duration publish_period(const Element& config, std::string_view parameter, double fallback) {
  const Element* e = config.child(parameter);
  const double f = e ? e->value<double>() : fallback;
  if (!std::isfinite(f) || f < 0) {
    throw Error(e ? e->where() : config.where(),
                fmt::format("<{}> must be a frequency >= 0 [Hz] (0: every step), found {}",
                            parameter, e ? e->text() : std::to_string(f)));
  }
  if (f == 0) return Duration{0};
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / f));
}

namespace {
template <class Entry>
std::size_t append(std::vector<Entry>& v, std::string topic) {
  Entry entry;
  entry.topic = std::move(topic);
  v.push_back(std::move(entry));
  return v.size() - 1;
}
c::TopicInputs& inputs(ecs::Registry& r, ecs::Entity e) {
  auto* in = r.try_get<c::TopicInputs>(e);
  return in ? *in : r.add<c::TopicInputs>(e);
}
c::TopicOutputs& outputs(ecs::Registry& r, ecs::Entity e) {
  auto* out = r.try_get<c::TopicOutputs>(e);
  return out ? *out : r.add<c::TopicOutputs>(e);
}
}  // namespace

std::size_t add_twist_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).twist, std::move(topic));
}
std::size_t add_bool_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).boolean, std::move(topic));
}
std::size_t add_double_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).real, std::move(topic));
}
std::size_t add_vector3_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).vector3, std::move(topic));
}
std::size_t add_int32_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).int32, std::move(topic));
}
std::size_t add_actuators_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).actuators, std::move(topic));
}
std::size_t add_bool_service_input(ecs::Registry& r, ecs::Entity e, std::string service) {
  return append(inputs(r, e).boolean_service, std::move(service));
}
std::size_t add_entity_wrench_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).entity_wrench, std::move(topic));
}
std::size_t add_entity_input(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(inputs(r, e).entity, std::move(topic));
}
std::size_t add_double_output(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(outputs(r, e).real, std::move(topic));
}
std::size_t add_bool_output(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(outputs(r, e).boolean, std::move(topic));
}
std::size_t add_joint_state_output(ecs::Registry& r, ecs::Entity e, std::string topic) {
  return append(outputs(r, e).joint_state, std::move(topic));
}
std::size_t add_odometry_output(ecs::Registry& r, ecs::Entity e, c::OdometryOutput o) {
  auto& v = outputs(r, e).odometry;
  v.push_back(std::move(o));
  return v.size() - 1;
}
std::size_t add_poses_output(ecs::Registry& r, ecs::Entity e, c::PosesOutput o) {
  auto& v = outputs(r, e).poses;
  v.push_back(std::move(o));
  return v.size() - 1;
}

void command_joint_velocity(ecs::Registry& r, ecs::Entity joint, double velocity) {
  if (auto* cmd = r.try_get<c::JointVelocityCmd>(joint)) {
    cmd->data.assign(1, velocity);
  } else {
    r.add<c::JointVelocityCmd>(joint, c::JointVelocityCmd{{velocity}});
  }
}

double joint_position(const ecs::Registry& r, ecs::Entity joint, double fallback) {
  const auto* p = r.try_get<c::JointPosition>(joint);
  return p && !p->data.empty() ? p->data[0] : fallback;
}

}  // namespace kestrel::systems
