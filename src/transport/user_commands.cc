// Gazebo's UserCommands: create (SDF string, SDF file, clone), create_multiple, remove,
// set_pose, set_pose_vector, each also under .../blocking. Every request is carried out on the
// step thread at the next step boundary (Runner::post), atomically: a request that fails
// changes nothing, answers false and logs one line naming the problem.
//
// Both variants reply after the request was applied (at most one step while running, about a
// millisecond while paused), so that a bad request answers false instead of a silent "true";
// the /blocking names exist for Gazebo's tools.
#include <fmt/format.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>
#include <ignition/msgs/entity_factory_v.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <tinyxml2.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"

namespace kestrel::transport {
namespace {

namespace c = kestrel::components;
namespace fs = std::filesystem;
namespace msgs = ignition::msgs;
using ignition::math::Pose3d;

/// A request that cannot be carried out; its message is the one log line.
struct Rejected {
  std::string why;
};

// ---- SDF helpers -------------------------------------------------------------------------------

/// The <pose> of the first <model> in an SDF document (identity if it has none). Spawns use it
/// when the request carries no pose, as Gazebo does.
Pose3d sdf_model_pose(const fs::path& file) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(file.c_str()) != tinyxml2::XML_SUCCESS) return {};
  const auto* sdf = doc.FirstChildElement("sdf");
  const auto* model = sdf ? sdf->FirstChildElement("model") : nullptr;
  const auto* pose = model ? model->FirstChildElement("pose") : nullptr;
  if (!pose || !pose->GetText()) return {};
  double v[6] = {0, 0, 0, 0, 0, 0};
  std::istringstream in(pose->GetText());
  for (double& x : v) in >> x;
  const char* deg = pose->Attribute("degrees");
  if (deg && std::string(deg) == "true") {
    for (int i = 3; i < 6; ++i) v[i] *= M_PI / 180.0;
  }
  return Pose3d(v[0], v[1], v[2], v[3], v[4], v[5]);
}

/// Resolves an EntityFactory sdf_filename: a path, a model directory, or model://NAME on the
/// resource search path.
fs::path resolve_model_file(const std::string& uri) {
  constexpr std::string_view kScheme = "model://";
  if (uri.rfind(kScheme, 0) != 0) {
    if (!fs::exists(uri)) throw Rejected{"sdf_filename '" + uri + "' does not exist"};
    return uri;
  }
  const std::string rest = uri.substr(kScheme.size());
  std::string searched;
  for (const auto& dir : sdf::resource_search_path({}, fs::current_path())) {
    const fs::path p = dir / rest;
    if (fs::exists(p)) return p;
    searched += " " + dir.string();
  }
  throw Rejected{"sdf_filename '" + uri + "' not found on the resource path:" + searched};
}

class UserCommands final : public System, public ISystemConfigurePriority, public ISystemConfigure {
 public:
  int priority() const override { return priority::kUserCommands; }

  ~UserCommands() override {
    node_.reset();  // no callback after this point
    std::error_code ec;
    if (!spool_.empty()) fs::remove_all(spool_, ec);
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
    node_ = std::make_unique<ignition::transport::Node>();
    for (const char* suffix : {"", "/blocking"}) {
      const std::string s = suffix;
      serve<msgs::EntityFactory>("/create" + s, [this](const msgs::EntityFactory& q,
                                                       sim::Runner& run) { create(q, run); });
      serve<msgs::EntityFactory_V>("/create_multiple" + s,
                                   [this](const msgs::EntityFactory_V& q, sim::Runner& run) {
                                     std::vector<ecs::Entity> made;
                                     try {
                                       for (const auto& f : q.data())
                                         made.push_back(create(f, run));
                                     } catch (...) {
                                       for (auto e : made) {
                                         run.remove_systems_of(e);
                                         run.registry().remove_now(e);
                                       }
                                       throw;
                                     }
                                   });
      serve<msgs::Entity>("/remove" + s,
                          [this](const msgs::Entity& q, sim::Runner& run) { remove(q, run); });
      serve<msgs::Pose>("/set_pose" + s,
                        [this](const msgs::Pose& q, sim::Runner& run) { set_poses({&q}, run); });
      serve<msgs::Pose_V>("/set_pose_vector" + s, [this](const msgs::Pose_V& q, sim::Runner& run) {
        std::vector<const msgs::Pose*> v;
        for (const auto& p : q.pose()) v.push_back(&p);
        set_poses(v, run);
      });
    }
  }

  // Advertises prefix+name; the handler runs on the step thread and throws Rejected to refuse.
  template <class Req>
  void serve(const std::string& name, std::function<void(const Req&, sim::Runner&)> handler) {
    const std::string service = ctx_.prefix + name;
    std::function<bool(const Req&, msgs::Boolean&)> cb = [this, service, handler](
                                                             const Req& req, msgs::Boolean& rep) {
      auto result = detail::on_step_thread<std::string>(
          *ctx_.runner,
          [&handler, req](sim::Runner& run) -> std::string {
            try {
              handler(req, run);
              return {};
            } catch (const Rejected& r) {
              return r.why;
            } catch (const Error& e) {
              return e.what();
            }
          },
          ctx_.request_timeout);
      std::string why;
      if (!result) {
        why = fmt::format("no answer from the world within {} ms (is it running?)",
                          ctx_.request_timeout.count());
      } else {
        why = *result;
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

  // ---- create ----------------------------------------------------------------------------------

  ecs::Entity create(const msgs::EntityFactory& q, sim::Runner& run) {
    if (!q.relative_to().empty() && q.relative_to() != "world") {
      throw Rejected{"relative_to '" + q.relative_to() + "' is not supported (only the world)"};
    }
    if (q.has_spherical_coordinates()) throw Rejected{"spherical_coordinates is not supported"};
    std::optional<Pose3d> pose;
    if (q.has_pose()) pose = detail::from_msg(q.pose());
    if (pose && !pose->Pos().IsFinite()) throw Rejected{"pose is not finite"};
    switch (q.from_case()) {
      case msgs::EntityFactory::kSdf:
        return spawn_file(spool(q.sdf()), q.name(), q.allow_renaming(), pose, run);
      case msgs::EntityFactory::kSdfFilename:
        return spawn_file(resolve_model_file(q.sdf_filename()), q.name(), q.allow_renaming(), pose,
                          run);
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

  // Writes an SDF string to a file named by its hash, so that ModelCache parses each distinct
  // string once.
  fs::path spool(const std::string& text) {
    if (text.find("<model") == std::string::npos) {
      throw Rejected{text.find("<light") != std::string::npos ? "spawning lights is not supported"
                                                              : "the sdf string holds no <model>"};
    }
    if (spool_.empty()) {
      spool_ = fs::temp_directory_path() /
               fmt::format("kestrel-spawn-{}-{}", getpid(), reinterpret_cast<std::uintptr_t>(this));
      fs::create_directories(spool_);
    }
    const fs::path file = spool_ / fmt::format("{:016x}.sdf", std::hash<std::string>{}(text));
    if (!fs::exists(file)) {
      std::ofstream f(file, std::ios::binary);
      if (!(f << text) || !f.flush()) throw Rejected{"cannot write " + file.string()};
    }
    return file;
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

  ecs::Entity spawn_file(const fs::path& file, const std::string& name, bool allow_renaming,
                         std::optional<Pose3d> pose, sim::Runner& run) {
    auto& reg = run.registry();
    // The model's own name comes from the file; ModelCache tells on a clash, so find it first.
    std::string base = name;
    if (base.empty()) base = model_name_in(file);
    const std::string n = unique_name(reg, base, allow_renaming);
    sdf::Findings findings;
    std::vector<PluginDecl> plugins;
    const ecs::Entity e = cache_.spawn(file, reg, world_, n, pose ? *pose : sdf_model_pose(file),
                                       &findings, &plugins);
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

  static std::string model_name_in(const fs::path& file_or_dir) {
    fs::path file = file_or_dir;
    if (fs::is_directory(file)) {
      for (const char* n : {"model.sdf"}) {
        if (fs::exists(file / n)) file = file / n;
      }
    }
    tinyxml2::XMLDocument doc;
    if (fs::is_regular_file(file) && doc.LoadFile(file.c_str()) == tinyxml2::XML_SUCCESS) {
      const auto* sdf = doc.FirstChildElement("sdf");
      const auto* model = sdf ? sdf->FirstChildElement("model") : nullptr;
      if (model && model->Attribute("name")) return model->Attribute("name");
    }
    if (fs::is_regular_file(file)) {
      throw Rejected{"'" + file_or_dir.string() + "' is not an SDF file with a named <model>" +
                     (doc.Error() ? std::string(": ") + doc.ErrorStr() : std::string())};
    }
    return file_or_dir.filename().string();  // model directory with model.config
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
      if (!X.Pos().IsFinite() || !X.Rot().IsFinite()) throw Rejected{"set_pose: pose not finite"};
      todo.emplace_back(e, X);
    }
    for (const auto& [e, X] : todo) {
      reg.set<c::WorldPoseCmd>(e, c::WorldPoseCmd{X});
      reg.set<c::Pose>(e, c::Pose{X});
      reg.set<c::WorldPose>(e, c::WorldPose{X});
    }
  }

  ecs::Entity world_ = ecs::kNullEntity;
  detail::TransportReady ctx_;
  sim::EventBus::Subscription ready_sub_;
  sdf::ModelCache cache_;
  fs::path spool_;
  std::unique_ptr<ignition::transport::Node> node_;
};

}  // namespace

std::unique_ptr<System> make_user_commands_system() { return std::make_unique<UserCommands>(); }

}  // namespace kestrel::transport
