// Gazebo's UserCommands: create (SDF string, SDF file, clone), create_multiple, remove,
// set_pose, set_pose_vector, each also under .../blocking. Every request is carried out on the
// step thread at the next step boundary (Runner::post), atomically: a request that fails
// changes nothing, answers false and logs one line naming the problem.
//
// Both variants reply after the request was applied (at most one step while running, about a
// millisecond while paused), so that a bad request answers false instead of a silent "true";
// the /blocking names exist for Gazebo's tools.
//
// Nothing a client sends may stop or stall the world. Files a request names are resolved and
// read on a helper thread with a time limit before the request reaches the step thread (a FIFO,
// a symlink loop, a 5,000-character path or a file system that does not answer is refused with
// the reason); what the step thread reads afterwards (the model file, its includes and meshes)
// is opened without blocking and only when a regular file. A spawn is built into the physics
// before it is answered (sim::CheckPhysics: a model the engine cannot simulate — a mass of
// 1e308, a joint loop — is taken out again); every exception ends at the service boundary as
// "false" with its reason.
#include "transport/user_commands.h"

#include <fmt/format.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>
#include <ignition/msgs/entity_factory_v.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <tinyxml2.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/files.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"

namespace kestrel::transport {
namespace {

namespace c = kestrel::components;
namespace fs = std::filesystem;
namespace msgs = ignition::msgs;
using ignition::math::Pose3d;

using detail::Rejected;
using detail::StepWork;

// ---- files, read off the step thread -------------------------------------------------------

/// The largest model file a request may name [bytes] (the loader's limit for any SDF file).
constexpr std::uint64_t kMaxModelFileBytes = sdf::LoadOptions{}.max_file_bytes;

/// What a create request needs from the file system, gathered before the request reaches the
/// step thread.
struct Prepared {
  fs::path file;               ///< the model file or model directory to spawn
  std::string name;            ///< its <model name> (for a directory without model.sdf: its name)
  std::optional<Pose3d> pose;  ///< its model <pose>, used when the request carries none
};

/// The first <model>'s name and <pose> in SDF text (the spawn uses them before libsdformat
/// parses the file).
void read_model_head(const std::string& text, const std::string& display, Prepared& out) {
  tinyxml2::XMLDocument doc;
  const auto* sdf = doc.Parse(text.data(), text.size()) == tinyxml2::XML_SUCCESS
                        ? doc.FirstChildElement("sdf")
                        : nullptr;
  const auto* model = sdf ? sdf->FirstChildElement("model") : nullptr;
  if (!model || !model->Attribute("name")) {
    throw Rejected{"'" + display + "' is not an SDF file with a named <model>" +
                   (doc.Error() ? std::string(": ") + doc.ErrorStr() : std::string())};
  }
  out.name = model->Attribute("name");
  const auto* pose = model->FirstChildElement("pose");
  if (!pose || !pose->GetText()) return;
  double v[6] = {0, 0, 0, 0, 0, 0};
  std::istringstream in(pose->GetText());
  for (double& x : v) in >> x;
  const char* deg = pose->Attribute("degrees");
  if (deg && std::string(deg) == "true") {
    for (int i = 3; i < 6; ++i) v[i] *= M_PI / 180.0;
  }
  out.pose = Pose3d(v[0], v[1], v[2], v[3], v[4], v[5]);
}

/// An existing path, or why not ("No such file or directory", "Too many levels of symbolic
/// links", "File name too long"), without throwing.
std::string path_problem(const fs::path& p, fs::file_status& st) {
  std::error_code ec;
  st = fs::status(p, ec);
  if (ec) return ec.message();
  if (!fs::exists(st)) return "No such file or directory";
  return {};
}

/// Resolves an EntityFactory sdf_filename — a path, a model directory, or model://NAME on the
/// resource search path — and reads its model head.
Prepared prepare_file(const std::string& uri) {
  constexpr std::string_view kScheme = "model://";
  const std::string shown = uri.size() > 200 ? uri.substr(0, 200) + "…" : uri;
  fs::path path;
  fs::file_status st;
  if (uri.rfind(kScheme, 0) != 0) {
    if (const auto p = path_problem(uri, st); !p.empty()) {
      throw Rejected{fmt::format("sdf_filename '{}' ({} characters): {}", shown, uri.size(), p)};
    }
    path = uri;
  } else {
    const std::string rest = uri.substr(kScheme.size());
    std::string searched;
    for (const auto& dir : sdf::resource_search_path({}, fs::current_path())) {
      if (path_problem(dir / rest, st).empty()) {
        path = dir / rest;
        break;
      }
      searched += " " + dir.string();
    }
    if (path.empty()) {
      throw Rejected{"sdf_filename '" + shown + "' not found on the resource path:" + searched};
    }
  }
  Prepared out;
  out.file = path;
  fs::path text_file = path;
  if (fs::is_directory(st)) {
    fs::file_status inner;
    if (!path_problem(path / "model.sdf", inner).empty()) {
      out.name = path.filename().string();  // model.config: the loader finds the file
      return out;
    }
    text_file = path / "model.sdf";
  }
  RegularFile f(text_file, kMaxModelFileBytes);
  if (!f.problem().empty()) {
    throw Rejected{fmt::format("sdf_filename '{}': {}", shown, f.problem())};
  }
  std::string text;
  try {
    text = f.read_all();
  } catch (const Error& e) {
    throw Rejected{e.what()};
  }
  read_model_head(text, text_file.string(), out);
  return out;
}

/// Spawned SDF text is written by a TextSpool (kestrel/sdf/world_loader.h), so that ModelCache
/// parses each text once; before, a text that names no model is refused.
void check_spawned_text(const std::string& text) {
  if (text.find("<model") == std::string::npos) {
    throw Rejected{text.find("<light") != std::string::npos ? "spawning lights is not supported"
                                                            : "the sdf string holds no <model>"};
  }
}

/// Runs `fn` on a thread of its own and waits at most `limit` for it: a file system that does
/// not answer stalls only that thread (left to finish or hang on its own), never the caller.
template <class R>
R with_time_limit(std::function<R()> fn, std::chrono::milliseconds limit, const std::string& what) {
  auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) {
    throw Rejected{
        fmt::format("{} did not finish within {} ms (a file system that does not "
                    "answer?); the request is dropped",
                    what, limit.count())};
  }
  return result.get();
}

/// A pose a client sent: finite, a usable orientation, inside kMaxWorldCoordinate.
std::string pose_problem(const Pose3d& X) {
  const auto& p = X.Pos();
  const auto& q = X.Rot();
  if (!p.IsFinite() || !std::isfinite(q.W()) || !std::isfinite(q.X()) || !std::isfinite(q.Y()) ||
      !std::isfinite(q.Z())) {
    return fmt::format(
        "pose is not finite: position ({}, {}, {}), orientation (w {}, x {}, y {}, "
        "z {})",
        p.X(), p.Y(), p.Z(), q.W(), q.X(), q.Y(), q.Z());
  }
  const double far = std::max({std::abs(p.X()), std::abs(p.Y()), std::abs(p.Z())});
  if (far > c::kMaxWorldCoordinate) {
    return fmt::format(
        "pose position ({}, {}, {}) m is outside the world: each coordinate must "
        "be within ±{} m",
        p.X(), p.Y(), p.Z(), c::kMaxWorldCoordinate);
  }
  return {};
}

// The requests, apart from transport (user_commands.h).
class Handlers final : public detail::UserCommandHandlers {
 public:
  Handlers(ecs::Entity world, std::chrono::milliseconds file_timeout)
      : world_(world), file_timeout_(file_timeout) {}

  StepWork create(const msgs::EntityFactory& q) override {
    auto ready = prepare({&q});
    return [this, q, ready](sim::Runner& run) {
      const ecs::Entity e = create(q, ready.front(), run);
      validate_physics({e}, run);
    };
  }

  StepWork create_multiple(const msgs::EntityFactory_V& q) override {
    std::vector<const msgs::EntityFactory*> all;
    for (const auto& f : q.data()) all.push_back(&f);
    auto ready = prepare(all);
    return [this, q, ready](sim::Runner& run) {
      std::vector<ecs::Entity> made;
      try {
        for (int i = 0; i < q.data_size(); ++i) {
          made.push_back(create(q.data(i), ready[static_cast<std::size_t>(i)], run));
        }
      } catch (...) {
        roll_back(made, run);
        throw;
      }
      validate_physics(made, run);
    };
  }

  StepWork remove(const msgs::Entity& q) override {
    return [this, q](sim::Runner& run) { remove(q, run); };
  }

  StepWork set_pose(const msgs::Pose& q) override {
    return [this, q](sim::Runner& run) { set_poses({&q}, run); };
  }

  StepWork set_pose_vector(const msgs::Pose_V& q) override {
    return [this, q](sim::Runner& run) {
      std::vector<const msgs::Pose*> v;
      for (const auto& p : q.pose()) v.push_back(&p);
      set_poses(v, run);
    };
  }

 private:
  // ---- create ----------------------------------------------------------------------------------

  // On the transport thread, before the step thread sees the request: the files of every
  // factory, read on a helper thread within the request time limit (one limit for all).
  std::vector<Prepared> prepare(const std::vector<const msgs::EntityFactory*>& factories) {
    std::vector<std::pair<int, std::string>> jobs;  // (case, text or file name) per factory
    for (const auto* f : factories) {
      if (f->from_case() == msgs::EntityFactory::kSdf) {
        jobs.emplace_back(msgs::EntityFactory::kSdf, f->sdf());
      } else if (f->from_case() == msgs::EntityFactory::kSdfFilename) {
        jobs.emplace_back(msgs::EntityFactory::kSdfFilename, f->sdf_filename());
      } else {
        jobs.emplace_back(0, std::string());
      }
    }
    std::function<std::vector<Prepared>()> read = [jobs, spool = spool_]() {
      std::vector<Prepared> out;
      for (const auto& [kind, arg] : jobs) {
        if (kind == msgs::EntityFactory::kSdf) {
          Prepared p;
          check_spawned_text(arg);
          p.file = spool->write(arg);
          read_model_head(arg, "the sdf string", p);
          out.push_back(std::move(p));
        } else if (kind == msgs::EntityFactory::kSdfFilename) {
          out.push_back(prepare_file(arg));
        } else {
          out.emplace_back();
        }
      }
      return out;
    };
    return with_time_limit(std::move(read), file_timeout_, "reading the model files");
  }

  ecs::Entity create(const msgs::EntityFactory& q, const Prepared& ready, sim::Runner& run) {
    if (!q.relative_to().empty() && q.relative_to() != "world") {
      throw Rejected{"relative_to '" + q.relative_to() + "' is not supported (only the world)"};
    }
    if (q.has_spherical_coordinates()) throw Rejected{"spherical_coordinates is not supported"};
    std::optional<Pose3d> pose;
    if (q.has_pose()) {
      pose = detail::from_msg(q.pose());
      if (auto p = pose_problem(*pose); !p.empty()) throw Rejected{p};
    }
    switch (q.from_case()) {
      case msgs::EntityFactory::kSdf:
      case msgs::EntityFactory::kSdfFilename:
        return spawn_file(ready, q.name(), q.allow_renaming(), pose, run);
      case msgs::EntityFactory::kCloneName:
        return clone(q.clone_name(), q.name(), q.allow_renaming(), pose, run);
      case msgs::EntityFactory::kModel:
        throw Rejected{
            "EntityFactory.model (a Model message) is not supported: send SDF text "
            "in 'sdf', a file in 'sdf_filename' or 'clone_name'"};
      case msgs::EntityFactory::kLight:
        throw Rejected{"spawning lights is not supported"};
      default:
        throw Rejected{
            "EntityFactory carries nothing to create: set one of sdf, sdf_filename, "
            "clone_name (example: sdf: \"<sdf version='1.9'><model name='m'>...\")"};
    }
  }

  // After every model of a request and its plugins were added: physics builds the world with
  // them now (one trial step included). A model it cannot simulate is taken out again with its
  // systems, and the request answers false with what physics said.
  void validate_physics(const std::vector<ecs::Entity>& made, sim::Runner& run) {
    sim::CheckPhysics::Result result;
    run.events().publish(sim::CheckPhysics{&run.registry(), &result});
    if (result.error.empty()) return;
    std::string names;
    for (auto e : made) {
      names += (names.empty() ? "'" : ", '") + run.registry().scoped_name(e) + "'";
    }
    roll_back(made, run);
    throw Rejected{fmt::format("physics cannot simulate the world with {} (nothing was added): {}",
                               names, result.error)};
  }

  static void roll_back(const std::vector<ecs::Entity>& made, sim::Runner& run) {
    for (auto e : made) {
      run.remove_systems_of(e);
      if (run.registry().alive(e)) run.registry().remove_now(e);
    }
  }

  std::string unique_name(const ecs::Registry& reg, const std::string& base, bool allow_renaming) {
    if (reg.child_by_name(world_, base) == ecs::kNullEntity) return base;
    if (!allow_renaming) {
      throw Rejected{"an entity named '" + base +
                     "' already exists (set allow_renaming: true "
                     "or choose another name)"};
    }
    for (int i = 0;; ++i) {
      const std::string n = fmt::format("{}_{}", base, i);
      if (reg.child_by_name(world_, n) == ecs::kNullEntity) return n;
    }
  }

  ecs::Entity spawn_file(const Prepared& ready, const std::string& name, bool allow_renaming,
                         std::optional<Pose3d> pose, sim::Runner& run) {
    auto& reg = run.registry();
    // The model's own name comes from the file; ModelCache tells on a clash, so find it first.
    const std::string n = unique_name(reg, name.empty() ? ready.name : name, allow_renaming);
    const Pose3d X = pose ? *pose : ready.pose.value_or(Pose3d{});
    if (auto p = pose_problem(X); !p.empty()) throw Rejected{"the model's <pose>: " + p};
    sdf::Findings findings;
    std::vector<PluginDecl> plugins;
    ecs::Entity e = ecs::kNullEntity;
    try {
      e = cache_.spawn(ready.file, reg, world_, n, X, &findings, &plugins);
    } catch (...) {
      // What the loader created before it threw goes with it.
      if (auto partial = reg.child_by_name(world_, n); partial != ecs::kNullEntity) {
        reg.remove_now(partial);
      }
      throw;
    }
    std::string problem;
    if (findings.has_errors()) {
      for (const auto& f : findings.items()) {
        if (f.severity == sdf::Severity::kError) {
          problem = sdf::format_finding(f);
          break;
        }
      }
    } else if (!plugins.empty()) {
      problem = add_plugins(plugins, run);
    }
    if (!problem.empty()) {
      reg.remove_now(e);
      throw Rejected{problem};
    }
    for (const auto& f : findings.items()) {
      detail::log_line(sdf::format_finding(f).substr(
          std::string(sdf::severity_name(f.severity)).size() + 2));  // its label is the sink's
    }
    return e;
  }

  // The spawned model's plugins, started by the composition layer that set the world up
  // (sim::LoadPlugins: resolved as a world file's, unresolved is an error, configured now in
  // priority order). Returns the problem, empty on success (then nothing was added).
  static std::string add_plugins(const std::vector<PluginDecl>& plugins, sim::Runner& run) {
    sim::LoadPlugins::Result result;
    run.events().publish(sim::LoadPlugins{plugins, &result});
    if (!result.handled) {
      return "the model declares plugins, but this world was not set up with a plugin loader "
             "(kestrel::world::load_world_into_runner), so they cannot be started";
    }
    return result.error;
  }

  // ---- clone -----------------------------------------------------------------------------------

  // A copy of every component of the model's subtree (no parsing). Without a name the clone is
  // named after the source with a suffix (source_0, source_1...).
  ecs::Entity clone(const std::string& source, const std::string& name, bool allow_renaming,
                    std::optional<Pose3d> pose, sim::Runner& run) {
    auto& reg = run.registry();
    const ecs::Entity src = reg.child_by_name(world_, source);
    if (src == ecs::kNullEntity || !reg.has<c::Model>(src) || reg.removal_pending(src)) {
      throw Rejected{"clone_name '" + source + "': no model of that name in the world"};
    }
    const auto subtree = reg.descendants(src);
    // A copy carries what the source's systems wrote at configure (their registrations on the
    // model), so configuring them again on the copy is not sound: refused.
    for (const auto& s : run.systems()) {
      if (s.active && (s.entity == src ||
                       std::find(subtree.begin(), subtree.end(), s.entity) != subtree.end())) {
        throw Rejected{"clone_name '" + source + "': the model has system " + s.name +
                       " attached; spawn it from its SDF instead (sdf or sdf_filename), which "
                       "brings its plugins"};
      }
    }
    const std::string n =
        unique_name(reg, name.empty() ? source : name, name.empty() || allow_renaming);
    std::map<ecs::Entity, ecs::Entity> map;
    const ecs::Entity e = copy_tree(reg, src, world_, map);
    reg.get<c::Name>(e).value = n;
    // Entity ids inside components point at the source's entities: remap them.
    for (const auto& [from, to] : map) {
      if (auto* j = reg.try_get<c::JointData>(to)) {
        if (auto it = map.find(j->parent); it != map.end()) j->parent = it->second;
        if (auto it = map.find(j->child); it != map.end()) j->child = it->second;
      }
      if (auto* k = reg.try_get<c::Contacts>(to)) k->points.clear();
    }
    const Pose3d X_WM_old = reg.get<c::WorldPose>(src).value;
    const Pose3d X_WM = pose ? *pose : X_WM_old;
    const Pose3d X_new_old = X_WM * X_WM_old.Inverse();
    for (const auto& [from, to] : map) {
      if (auto* wp = reg.try_get<c::WorldPose>(to)) wp->value = X_new_old * wp->value;
    }
    reg.set<c::Pose>(e, c::Pose{X_WM});
    return e;
  }

  static ecs::Entity copy_tree(ecs::Registry& reg, ecs::Entity src, ecs::Entity parent,
                               std::map<ecs::Entity, ecs::Entity>& map) {
    const ecs::Entity e = reg.create(parent);
    reg.copy_components(src, e);
    map[src] = e;
    const auto kids = reg.children(src);
    const std::vector<ecs::Entity> children(kids.begin(), kids.end());
    for (ecs::Entity k : children) copy_tree(reg, k, e, map);
    return e;
  }

  // ---- remove, set_pose
  // ---------------------------------------------------------------------------

  ecs::Entity find_model(const ecs::Registry& reg, std::uint64_t id, const std::string& name,
                         const char* what) {
    ecs::Entity e = ecs::kNullEntity;
    if (id != 0) {
      e = reg.alive(id) ? id : ecs::kNullEntity;
    } else if (!name.empty()) {
      e = reg.child_by_name(world_, name);
      if (e == ecs::kNullEntity) {
        e = reg.find_scoped(reg.get<c::Name>(world_).value + "::" + name);
      }
    } else {
      throw Rejected{fmt::format("{}: the request names no entity (set name or id)", what)};
    }
    if (e == ecs::kNullEntity || reg.removal_pending(e)) {
      throw Rejected{
          fmt::format("{}: no entity {}", what,
                      id != 0 ? "with id " + std::to_string(id) : "named '" + name + "'")};
    }
    return e;
  }

  void remove(const msgs::Entity& q, sim::Runner& run) {
    auto& reg = run.registry();
    const ecs::Entity e = find_model(reg, q.id(), q.name(), "remove");
    const bool is_model = reg.has<c::Model>(e), is_light = reg.has<c::Light>(e);
    const auto t = q.type();
    if ((t == msgs::Entity::MODEL && !is_model) || (t == msgs::Entity::LIGHT && !is_light) ||
        (t != msgs::Entity::MODEL && t != msgs::Entity::LIGHT && t != msgs::Entity::NONE)) {
      throw Rejected{
          fmt::format("remove: {} is not of type {}", reg.describe(e), msgs::Entity::Type_Name(t))};
    }
    if (!is_model && !is_light) {
      throw Rejected{"remove: " + reg.describe(e) + " is not a model or a light"};
    }
    // Its systems go now, before they could run on an entity being removed, and so do the
    // commands they left for Physics (which no longer simulates the model from this step on).
    run.remove_systems_of(e);
    drop_commands(reg, e);
    for (ecs::Entity d : reg.descendants(e)) drop_commands(reg, d);
    reg.request_remove(e, true);
  }

  static void drop_commands(ecs::Registry& reg, ecs::Entity e) {
    drop<c::ExternalWorldWrenchCmd, c::JointForceCmd, c::JointVelocityCmd, c::JointPositionReset,
         c::JointVelocityReset, c::WorldPoseCmd, c::LinearVelocityCmd, c::AngularVelocityCmd>(reg,
                                                                                              e);
  }
  template <class... Cs>
  static void drop(ecs::Registry& reg, ecs::Entity e) {
    (..., (void)reg.remove<Cs>(e));
  }

  void set_poses(const std::vector<const msgs::Pose*>& poses, sim::Runner& run) {
    auto& reg = run.registry();
    std::vector<std::pair<ecs::Entity, Pose3d>> todo;
    for (const auto* p : poses) {
      const ecs::Entity e = find_model(reg, p->id(), p->name(), "set_pose");
      if (!reg.has<c::Model>(e) || reg.parent(e) != world_) {
        throw Rejected{"set_pose: " + reg.describe(e) + " is not a model of the world"};
      }
      const Pose3d X = detail::from_msg(*p);
      if (auto problem = pose_problem(X); !problem.empty()) {
        throw Rejected{"set_pose: " + reg.describe(e) + ": " + problem};
      }
      todo.emplace_back(e, X);
    }
    for (const auto& [e, X] : todo) {
      reg.set<c::WorldPoseCmd>(e, c::WorldPoseCmd{X});
      reg.set<c::Pose>(e, c::Pose{X});
      reg.set<c::WorldPose>(e, c::WorldPose{X});
    }
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::chrono::milliseconds file_timeout_;
  sdf::ModelCache cache_;
  // Shared with the helper threads that write it (a thread stuck on a file system keeps it).
  std::shared_ptr<sdf::TextSpool> spool_ = std::make_shared<sdf::TextSpool>("kestrel-spawn");
};

class UserCommands final : public System, public ISystemConfigurePriority, public ISystemConfigure {
 public:
  int priority() const override { return priority::kUserCommands; }

  ~UserCommands() override {
    node_.reset();  // no callback after this point
  }

  void configure_priority(ecs::Entity, const Element&, ecs::Registry&,
                          sim::EventBus& events) override {
    ready_sub_ = events.subscribe<detail::TransportReady>(
        [this](const detail::TransportReady& r) { start(r); });
  }

  void configure(ecs::Entity entity, const Element&, ecs::Registry&, sim::EventBus&) override {
    world_ = entity;
  }

 private:
  void start(const detail::TransportReady& r) {
    ctx_ = r;
    handlers_ = detail::make_user_command_handlers(world_, r.request_timeout);
    node_ = std::make_unique<ignition::transport::Node>();
    auto* h = handlers_.get();
    for (const char* suffix : {"", "/blocking"}) {
      const std::string s = suffix;
      serve<msgs::EntityFactory>("/create" + s,
                                 [h](const msgs::EntityFactory& q) { return h->create(q); });
      serve<msgs::EntityFactory_V>("/create_multiple" + s, [h](const msgs::EntityFactory_V& q) {
        return h->create_multiple(q);
      });
      serve<msgs::Entity>("/remove" + s, [h](const msgs::Entity& q) { return h->remove(q); });
      serve<msgs::Pose>("/set_pose" + s, [h](const msgs::Pose& q) { return h->set_pose(q); });
      serve<msgs::Pose_V>("/set_pose_vector" + s,
                          [h](const msgs::Pose_V& q) { return h->set_pose_vector(q); });
    }
  }

  // Advertises prefix+name. `plan` runs on the transport thread (it may read files, with a time
  // limit, and throws Rejected to refuse); the work it returns runs on the step thread at the
  // next boundary and throws Rejected to refuse. Whatever is thrown, by either, the answer is
  // false with the reason: nothing escapes into ignition-transport or the step loop.
  template <class Req>
  void serve(const std::string& name, std::function<StepWork(const Req&)> plan) {
    const std::string service = ctx_.prefix + name;
    std::function<bool(const Req&, msgs::Boolean&)> cb = [this, service, plan](const Req& req,
                                                                               msgs::Boolean& rep) {
      std::string why;
      try {
        StepWork work = plan(req);
        auto result = detail::on_step_thread<std::string>(
            *ctx_.runner,
            [work](sim::Runner& run) -> std::string {
              try {
                work(run);
                return {};
              } catch (const Rejected& r) {
                return r.why;
              } catch (const std::exception& e) {
                return e.what();
              } catch (...) {
                return "unexpected error (not an exception type Kestrel knows)";
              }
            },
            ctx_.request_timeout);
        why = result ? *result
                     : fmt::format("no answer from the world within {} ms (is it running?)",
                                   ctx_.request_timeout.count());
      } catch (const Rejected& r) {
        why = r.why;
      } catch (const std::exception& e) {
        why = e.what();
      } catch (...) {
        why = "unexpected error (not an exception type Kestrel knows)";
      }
      rep.set_data(why.empty());
      if (!why.empty()) {
        ++ctx_.counters->rejected_requests;
        detail::log_line(service + ": refused: " + why);
      }
      return why.empty();
    };
    if (!node_->Advertise(service, cb)) throw Error("transport: cannot advertise " + service);
  }

  ecs::Entity world_ = ecs::kNullEntity;
  detail::TransportReady ctx_;
  sim::EventBus::Subscription ready_sub_;
  std::unique_ptr<detail::UserCommandHandlers> handlers_;
  // Declared last, destroyed first: no service callback runs after the handlers are gone.
  std::unique_ptr<ignition::transport::Node> node_;
};

}  // namespace

namespace detail {
std::unique_ptr<UserCommandHandlers> make_user_command_handlers(
    ecs::Entity world, std::chrono::milliseconds file_timeout) {
  return std::make_unique<Handlers>(world, file_timeout);
}
}  // namespace detail

std::unique_ptr<System> make_user_commands_system() { return std::make_unique<UserCommands>(); }

}  // namespace kestrel::transport
