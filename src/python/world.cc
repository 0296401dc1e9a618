#include "python/world.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <thread>

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/world/setup.h"

namespace kestrel::python {
namespace {

namespace c = kestrel::components;
namespace fs = std::filesystem;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

void demand_finite(const double* v, std::size_t n, const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) {
      throw ArgumentError(
          fmt::format("{}: element {} is {}, expected a finite number", what, i, v[i]));
    }
  }
}

thread_local World* t_current = nullptr;

// Makes `w` World::current() for a scope (nested: the outer one comes back).
class Current {
 public:
  explicit Current(World* w) : outer_(t_current) { t_current = w; }
  ~Current() { t_current = outer_; }

 private:
  World* outer_;
};

}  // namespace

World* World::current() { return t_current; }

void World::demand_writable(const char* what) const {
  if (read_only) {
    throw ArgumentError(fmt::format(
        "{}: the world is read-only in post_update (commands belong in pre_update or update)",
        what));
  }
}

World::World(WorldOptions o) {
  const Current current(this);
  std::error_code ec;
  if (!fs::is_regular_file(o.path, ec)) {
    throw PathError(
        fmt::format("world file '{}': {}", o.path.string(),
                    fs::exists(o.path, ec) ? "not a regular file" : "No such file or directory"));
  }
  sim::Runner::Options ro;
  ro.seed = o.seed;
  runner_ = std::make_unique<sim::Runner>(ro);
  world::WorldSetupOptions setup;
  setup.resolve.builtins = o.builtins;
  // Warnings are logged (stderr), errors thrown with every finding, as `kestrel run` does.
  const auto result = world::load_world_into_runner(o.path, *runner_, setup);
  for (const auto& f : result.findings.items()) {
    spdlog::warn("{}", sdf::format_finding(f).substr(
                           std::string(sdf::severity_name(f.severity)).size() + 2));
  }
  auto opts = runner_->options();
  opts.real_time_factor = o.rtf;
  runner_->set_options(opts);
  for (auto& [system, name] : o.systems) {
    runner_->add_system(std::move(system), runner_->world(), nullptr, name, "kestrel.World");
  }
  // No transport, no viewer, no recorder: `kestrel run --no-transport` without outputs.
  runner_->registry().set<c::RenderSettings>(runner_->world(), {true, 0});
  runner_->configure();
}

World::~World() = default;

void World::step(std::uint64_t n) {
  if (stepping_) throw ArgumentError("step: called from a system while this world steps");
  demand_writable("step");
  const Current current(this);
  stepping_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{stepping_};
  auto& r = *runner_;
  if (paused_) {  // paused iterations: PostUpdate only, time stands still (Gazebo's)
    for (std::uint64_t i = 0; i < n; ++i) r.step_once();
    return;
  }
  const double rtf = r.options().real_time_factor;
  if (rtf <= 0) {
    for (std::uint64_t i = 0; i < n; ++i) r.step_once();
    return;
  }
  // Paced: each step's deadline from this call's start, as the Runner paces (no drift).
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const double dt_wall = to_seconds(r.options().step_size) / rtf;
  for (std::uint64_t i = 0; i < n; ++i) {
    r.step_once();
    std::this_thread::sleep_until(
        t0 + std::chrono::duration_cast<Clock::duration>(
                 std::chrono::duration<double>(dt_wall * static_cast<double>(i + 1))));
  }
}

void World::reset(std::optional<std::uint64_t> seed) {
  if (stepping_) throw ArgumentError("reset: called from a system while this world steps");
  const Current current(this);
  runner_->reset_now();
  if (!seed || *seed == this->seed()) return;
  // set_seed is applied at the end of the next step boundary: one paused step (PostUpdate
  // only, no time) applies it now, where a fresh world with that seed would be.
  runner_->set_seed(*seed);
  runner_->set_paused(true);
  runner_->step_once();
  if (!paused_) runner_->set_paused(false);
}

// ns / 1e9 is the double nearest the exact decimal (0.03, as the truth CSV writes it), where
// to_seconds' ns · 1e-9 can be one unit off (0.030000000000000002).
double World::time() const { return static_cast<double>(runner_->info().sim_time.count()) / 1e9; }
double World::step_size() const {
  return static_cast<double>(runner_->options().step_size.count()) / 1e9;
}

std::uint64_t World::seed() const { return registry().get<c::WorldSeed>(runner_->world()).value; }

void World::set_paused(bool paused) {
  paused_ = paused;
  runner_->set_paused(paused);
}

std::vector<std::string> World::models() const {
  const auto& r = registry();
  std::vector<std::string> out;
  for (ecs::Entity e : r.children(runner_->world())) {
    if (r.has<c::Model>(e) && !r.removal_pending(e)) out.push_back(r.get<c::Name>(e).value);
  }
  return out;
}

ecs::Entity World::model(const std::string& name) const {
  const auto& r = registry();
  const ecs::Entity e = r.child_by_name(runner_->world(), name);
  if (e == ecs::kNullEntity || !r.has<c::Model>(e) || r.removal_pending(e)) {
    throw NameError(fmt::format("no model '{}' in world '{}' (models: {})", name, this->name(),
                                join(models())));
  }
  return e;
}

std::vector<std::string> World::links(const std::string& model_name) const {
  const auto& r = registry();
  const ecs::Entity m = model(model_name);
  const std::string prefix = r.scoped_name(m) + "::";
  std::vector<std::string> out;
  for (ecs::Entity d : r.descendants(m)) {
    if (r.has<c::Link>(d)) out.push_back(r.scoped_name(d).substr(prefix.size()));
  }
  return out;
}

ecs::Entity World::find_in_model(const std::string& model_name, const std::string& scoped) const {
  const auto& r = registry();
  const ecs::Entity m = model(model_name);
  return r.find_scoped(r.scoped_name(m) + "::" + scoped);
}

ecs::Entity World::link(const std::string& scoped) const {
  const auto sep = scoped.find("::");
  if (sep == std::string::npos) {
    throw NameError(
        fmt::format("link '{}': expected MODEL::LINK (models: {})", scoped, join(models())));
  }
  const std::string m = scoped.substr(0, sep);
  const ecs::Entity e = find_in_model(m, scoped.substr(sep + 2));
  if (e == ecs::kNullEntity || !registry().has<c::Link>(e)) {
    throw NameError(fmt::format("no link '{}' in model '{}' (links: {})", scoped.substr(sep + 2), m,
                                join(links(m))));
  }
  return e;
}

Pose7 World::model_pose(const std::string& name) const {
  const auto& X = registry().get<c::WorldPose>(model(name)).value;
  return {X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(),
          X.Rot().X(), X.Rot().Y(), X.Rot().Z()};
}

void World::set_model_pose(const std::string& name, const Pose7& p) {
  demand_writable("set_model_pose");
  auto& r = registry();
  const ecs::Entity e = model(name);
  demand_finite(p.data(), p.size(), "set_model_pose('" + name + "')");
  for (int i = 0; i < 3; ++i) {
    if (std::abs(p[i]) > c::kMaxWorldCoordinate) {
      throw ArgumentError(fmt::format(
          "set_model_pose('{}'): position ({}, {}, {}) m is outside the world: each coordinate "
          "must be within ±{} m",
          name, p[0], p[1], p[2], c::kMaxWorldCoordinate));
    }
  }
  Quaterniond q(p[3], p[4], p[5], p[6]);
  if (q.W() * q.W() + q.X() * q.X() + q.Y() * q.Y() + q.Z() * q.Z() == 0) {
    throw ArgumentError(fmt::format(
        "set_model_pose('{}'): the orientation (qw qx qy qz) is zero, expected a rotation", name));
  }
  q.Normalize();
  const Pose3d X(Vector3d(p[0], p[1], p[2]), q);
  r.set<c::WorldPoseCmd>(e, c::WorldPoseCmd{X});
  r.set<c::Pose>(e, c::Pose{X});
  r.set<c::WorldPose>(e, c::WorldPose{X});
}

Twist6 World::model_velocity(const std::string& name) const {
  const auto& r = registry();
  const ecs::Entity m = model(name);
  // As the truth CSV: the model origin's from its canonical (first) link.
  for (ecs::Entity d : r.descendants(m)) {
    if (!r.has<c::Link>(d)) continue;
    const auto* v = r.try_get<c::WorldLinearVelocity>(d);
    const auto* w = r.try_get<c::WorldAngularVelocity>(d);
    if (!v || !w) break;
    const auto& X = r.get<c::WorldPose>(m).value;
    const Vector3d v_M = v->value + w->value.Cross(X.Pos() - r.get<c::WorldPose>(d).value.Pos());
    const Vector3d w_M = X.Rot().RotateVectorReverse(w->value);
    return {v_M.X(), v_M.Y(), v_M.Z(), w_M.X(), w_M.Y(), w_M.Z()};
  }
  return {0, 0, 0, 0, 0, 0};  // a static model, which physics does not move
}

std::vector<std::pair<std::string, std::vector<double>>> World::joint_positions(
    const std::string& name) const {
  const auto& r = registry();
  const ecs::Entity m = model(name);
  const std::string prefix = r.scoped_name(m) + "::";
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (ecs::Entity d : r.descendants(m)) {
    if (!r.has<c::Joint>(d)) continue;
    const auto* q = r.try_get<c::JointPosition>(d);
    out.emplace_back(r.scoped_name(d).substr(prefix.size()), q ? q->data : std::vector<double>{});
  }
  return out;
}

void World::set_joint_velocity_cmd(const std::string& model_name, const std::string& joint,
                                   const std::vector<double>& velocity) {
  demand_writable("set_joint_velocity_cmd");
  auto& r = registry();
  const ecs::Entity j = find_in_model(model_name, joint);
  if (j == ecs::kNullEntity || !r.has<c::Joint>(j)) {
    std::vector<std::string> names;
    for (const auto& [n, q] : joint_positions(model_name)) names.push_back(n);
    throw NameError(
        fmt::format("no joint '{}' in model '{}' (joints: {})", joint, model_name, join(names)));
  }
  if (velocity.empty()) {
    r.remove<c::JointVelocityCmd>(j);
    return;
  }
  const auto* q = r.try_get<c::JointPosition>(j);
  const std::size_t axes = q ? q->data.size() : 0;
  if (velocity.size() != axes) {
    throw ArgumentError(
        fmt::format("set_joint_velocity_cmd('{}', '{}'): {} values for a joint "
                    "with {} axes",
                    model_name, joint, velocity.size(), axes));
  }
  demand_finite(velocity.data(), velocity.size(), "set_joint_velocity_cmd('" + joint + "')");
  r.set<c::JointVelocityCmd>(j, c::JointVelocityCmd{velocity});
}

void World::set_motor_speeds(const std::string& name, const std::vector<double>& speeds) {
  demand_writable("set_motor_speeds");
  auto& r = registry();
  const ecs::Entity m = model(name);
  const auto* rotors = r.try_get<c::RotorVelocities>(m);
  if (!rotors || !r.has<c::ActuatorCommands>(m)) {
    throw ArgumentError(fmt::format(
        "set_motor_speeds('{}'): the model has no motor model (MulticopterMotorModel) to read "
        "them",
        name));
  }
  if (speeds.size() != rotors->velocity.size()) {
    throw ArgumentError(
        fmt::format("set_motor_speeds('{}'): {} speeds for {} motors (actuator "
                    "numbers 0-{})",
                    name, speeds.size(), rotors->velocity.size(), rotors->velocity.size() - 1));
  }
  demand_finite(speeds.data(), speeds.size(), "set_motor_speeds('" + name + "')");
  // As transport writes a motor_speed message: stamped with the sim time it arrived at.
  r.set<c::ActuatorCommands>(m, c::ActuatorCommands{speeds, runner_->info().sim_time});
}

std::vector<double> World::rotor_speeds(const std::string& name) const {
  const auto* v = registry().try_get<c::RotorVelocities>(model(name));
  return v ? v->velocity : std::vector<double>{};
}

void World::apply_wrench(const std::string& scoped, const Vec3& force, const Vec3& torque) {
  demand_writable("apply_wrench");
  auto& r = registry();
  const ecs::Entity l = link(scoped);
  demand_finite(force.data(), 3, "apply_wrench('" + scoped + "') force");
  demand_finite(torque.data(), 3, "apply_wrench('" + scoped + "') torque");
  auto* w = r.try_get<c::ExternalWorldWrenchCmd>(l);
  if (!w) w = &r.add<c::ExternalWorldWrenchCmd>(l);
  w->force += Vector3d(force[0], force[1], force[2]);
  w->torque += Vector3d(torque[0], torque[1], torque[2]);
}

ecs::Entity World::sensor(const std::string& scoped) const {
  const auto& r = registry();
  ecs::Entity e = r.find_scoped(name() + "::" + scoped);
  if (e == ecs::kNullEntity) e = r.find_scoped(scoped);
  if (e == ecs::kNullEntity || !r.has<c::Sensor>(e)) {
    std::vector<std::string> names;
    const std::string prefix = name() + "::";
    r.each<c::Sensor>([&](ecs::Entity s, const c::Sensor&) {
      names.push_back(r.scoped_name(s).substr(prefix.size()));
    });
    throw NameError(fmt::format("no sensor '{}' (sensors: {})", scoped, join(names)));
  }
  return e;
}

std::string World::spawn(const std::string& sdf_text) {
  demand_writable("spawn");
  if (stepping_) {
    throw ArgumentError(
        "spawn: not from a system while the world steps (the systems' lists "
        "change only between steps): call it between step() calls");
  }
  const Current current(this);
  auto& r = registry();
  fs::path file;
  try {
    file = spool_.write(sdf_text);
  } catch (const Error& e) {
    throw Error(std::string("spawn: ") + e.what());
  }
  // The model's own <pose> (X_WM; the cache spawns at the pose it is given), as the create
  // service reads it.
  Pose3d X_WM;
  const auto root = Element::parse(sdf_text, "<spawn>");
  const Element* model = root->name() == "model" ? root.get() : root->child("model");
  if (!model) throw Error(root->where(), "spawn: the SDF text holds no <model>");
  if (const Element* pose = model->child("pose"); pose && !pose->text().empty()) {
    double v[6];
    std::istringstream in(pose->text());
    for (double& x : v) {
      if (!(in >> x)) {
        throw Error(pose->where(), "spawn: <pose> must hold 6 numbers (x y z roll pitch yaw)");
      }
    }
    if (pose->attribute("degrees").value_or("false") == "true") {
      for (int i = 3; i < 6; ++i) v[i] *= M_PI / 180.0;
    }
    X_WM = Pose3d(v[0], v[1], v[2], v[3], v[4], v[5]);
  }
  sdf::Findings findings;
  std::vector<PluginDecl> plugins;
  const std::size_t before = r.children(runner_->world()).size();
  ecs::Entity e = ecs::kNullEntity;
  try {
    e = cache_.spawn(file, r, runner_->world(), "", X_WM, &findings, &plugins);
  } catch (...) {
    // What the loader created before it threw goes with it.
    const auto kids = r.children(runner_->world());
    if (kids.size() > before) r.remove_now(kids.back());
    throw;
  }
  std::string problem;
  for (const auto& f : findings.items()) {
    if (f.severity == sdf::Severity::kError && problem.empty()) problem = sdf::format_finding(f);
  }
  if (problem.empty() && !plugins.empty()) {
    sim::LoadPlugins::Result loaded;
    runner_->events().publish(sim::LoadPlugins{plugins, &loaded});
    problem = loaded.error;
  }
  if (problem.empty()) {
    sim::CheckPhysics::Result checked;
    runner_->events().publish(sim::CheckPhysics{&r, &checked});
    if (!checked.error.empty()) {
      runner_->remove_systems_of(e);
      problem = "physics cannot simulate the world with it: " + checked.error;
    }
  }
  const std::string spawned = r.get<c::Name>(e).value;
  if (!problem.empty()) {
    r.remove_now(e);
    throw Error("spawn '" + spawned + "': " + problem + " (nothing was added)");
  }
  return spawned;
}

void World::remove(const std::string& name) {
  demand_writable("remove");
  if (stepping_) {
    throw ArgumentError(
        "remove: not from a system while the world steps (the systems' lists "
        "change only between steps): call it between step() calls");
  }
  auto& r = registry();
  const ecs::Entity e = model(name);
  runner_->remove_systems_of(e);
  // The commands left for Physics go with it, as the remove service drops them.
  auto drop = [&](ecs::Entity d) {
    r.remove<c::ExternalWorldWrenchCmd>(d);
    r.remove<c::JointForceCmd>(d);
    r.remove<c::JointVelocityCmd>(d);
    r.remove<c::JointPositionReset>(d);
    r.remove<c::JointVelocityReset>(d);
    r.remove<c::WorldPoseCmd>(d);
    r.remove<c::LinearVelocityCmd>(d);
    r.remove<c::AngularVelocityCmd>(d);
  };
  drop(e);
  for (ecs::Entity d : r.descendants(e)) drop(d);
  r.request_remove(e, true);
}

void World::add_systems_now(std::vector<sim::NewSystem> systems) {
  demand_writable("add_system");
  if (stepping_) throw ArgumentError("add_system: not from a system while the world steps");
  const Current current(this);
  runner_->add_systems_now(std::move(systems));
}

}  // namespace kestrel::python
