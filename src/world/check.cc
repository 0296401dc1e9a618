// `kestrel check`: load and resolve a world without running it, configure its systems as a run
// would, and report every finding.

#include "kestrel/world/check.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>

#include "kestrel/core/log.h"
#include "kestrel/core/text.h"
#include "kestrel/physics/physics.h"
#include "kestrel/record/log_record.h"
#include "kestrel/sim/runner.h"
#include "kestrel/sitl/sitl.h"
#include "kestrel/world/setup.h"

namespace kestrel::world {

using sdf::Severity;

namespace {

// Steps `check` runs on its copy of the world (a few milliseconds of sim time; spinning rotors
// up takes more than one).
constexpr int kCheckSteps = 10;

// An error thrown while configuring, as a finding: "FILE:LINE: message" keeps its location.
void add_error(CheckReport& r, const Error& e) {
  static const std::regex kFileLine(R"(^(.*):(\d+)$)");
  std::string message = e.what();
  const std::string& where = e.where();
  if (!where.empty() && message.starts_with(where + ": ")) message.erase(0, where.size() + 2);
  std::smatch m;
  if (std::regex_match(where, m, kFileLine)) {
    r.findings.error(m[1], std::stoi(m[2]), "", message);
  } else {
    r.findings.error(r.description.file, 0, where, message);
  }
}

// A line a system logged, "FILE:LINE: [entity] message" (or any text), as a finding.
void add_logged(CheckReport& r, bool error, const std::string& line) {
  static const std::regex kLocated(R"(^(.+?):(\d+): (?:\[([^\]]*)\] )?(.*)$)");
  std::smatch m;
  sdf::Finding f{error ? Severity::kError : Severity::kWarning, r.description.file, 0, "", line};
  if (std::regex_match(line, m, kLocated)) {
    f.file = m[1];
    f.line = std::stoi(m[2]);
    f.entity = m[3];
    f.message = m[4];
  }
  r.findings.add(std::move(f));
}

}  // namespace

CheckReport check_world(const CheckOptions& options) {
  CheckReport r;
  ecs::Registry registry;
  const ecs::Entity world = registry.create();
  // A model file is checked in an empty world, as `gz sdf -k` checks it.
  LoadOptions load = options.load;
  load.model_as_world = true;
  r.description = sdf::load_world_file(options.world, registry, world, load);
  r.findings = r.description.findings;
  ResolveOptions ro = options.resolve;
  ro.strict = ro.strict || options.strict;
  const auto planned = plan_systems(r.description, world, registry, ro, r.findings, &r.missing);
  bool physics = false;
  for (const auto& s : planned) {
    r.systems.push_back({s.name, s.source, s.origin});
    physics = physics || s.name == "kestrel::systems::Physics";
  }
  // What the physics engine cannot represent (physics' own check; it does not load MuJoCo).
  if (physics) {
    // An entity the loader already found in error is not reported twice.
    std::set<std::string> in_error;
    for (const auto& f : r.findings.items()) {
      if (f.severity == Severity::kError && !f.entity.empty()) in_error.insert(f.entity);
    }
    for (const auto& i : physics::check_physics(registry, world)) {
      if (i.severity == physics::PhysicsIssue::Severity::kError && in_error.count(i.scoped_name)) {
        continue;
      }
      r.findings.add({i.severity == physics::PhysicsIssue::Severity::kError ? Severity::kError
                                                                            : Severity::kWarning,
                      i.file.empty() ? r.description.file : i.file, i.line, i.scoped_name,
                      i.message});
    }
  }
  // What `kestrel run` would still refuse: the systems configured exactly as a run configures
  // them (plugin parameters, physics build), without transport (`kestrel run --no-transport`).
  // Only when nothing so far is an error: a run stops at those first. A run stops at the first
  // configure error too, so that is the one reported.
  if (!r.findings.has_errors()) {
    sim::Runner::Options o;
    o.real_time_factor = 0;
    o.model_threads = 1;  // what systems log is captured on this thread (log::Capture)
    sim::Runner runner(o);
    WorldSetupOptions ws;
    ws.load = load;
    ws.resolve = ro;
    // What the systems log while configuring (a parameter with no effect) is a finding too.
    log::Capture logged;
    try {
      load_world_into_runner(options.world, runner, ws);
      sitl::check_channel_maps(runner);  // as `kestrel run` refuses it
      // `kestrel run` records for a LogRecord plugin (its parameters are still checked).
      runner.registry().add<record::LogRecordTaken>(runner.world(), record::LogRecordTaken{});
      runner.configure();
      // The first steps, on this copy of the world: what fails when systems first act (a
      // motor constant of 1e10 turning the first rotor commands into forces MuJoCo cannot
      // integrate) fails here, not in the first steps of `kestrel run`.
      for (int i = 0; i < kCheckSteps; ++i) runner.step_once();
    } catch (const Error& e) {
      add_error(r, e);
    }
    for (const auto& l : logged.lines()) add_logged(r, l.error, l.message);
  }
  // --strict: every warning is reported as the error it now is.
  if (ro.strict) r.findings.promote_warnings();
  for (std::string_view gz : {"Physics", "UserCommands", "SceneBroadcaster"}) {
    bool have = false;
    for (const auto& b : ro.builtins) have = have || (b.is_default && b.name == gz);
    if (!have) r.defaults_missing.emplace_back(gz);
  }
  return r;
}

namespace {

void print_summary(const CheckReport& r, std::ostream& os) {
  const auto& c = r.description.counts;
  const auto errors = r.findings.count(Severity::kError);
  const auto warnings = r.findings.count(Severity::kWarning);
  os << "summary: " << r.description.file << ": ";
  if (r.description.model_file_of.empty()) {
    os << "world '" << r.description.name << "'";
  } else {
    os << "model '" << r.description.model_file_of << "' (checked in an empty world)";
  }
  os << ": " << counted(c.models, "model") << ", " << counted(c.links, "link") << ", "
     << counted(c.joints, "joint") << ", " << counted(c.sensors, "sensor") << ", "
     << counted(c.lights, "light") << ", " << counted(c.frames, "frame") << "; "
     << counted(errors, "error") << ", " << counted(warnings, "warning") << "\n";
  os << "systems that will run (" << r.systems.size() << "):\n";
  for (const auto& s : r.systems) {
    os << "  " << s.name << " (" << source_name(s.source) << ", from " << s.origin << ")\n";
  }
  if (!r.missing.empty()) {
    os << "declared systems that will not run (" << r.missing.size() << "):\n";
    for (const auto& m : r.missing) {
      os << "  " << m.name << " on " << m.entity << " (" << m.origin << ")\n";
    }
  }
  if (!r.description.default_systems) {
    os << "default systems: disabled by <kestrel:no_default_systems/>\n";
  } else if (!r.defaults_missing.empty()) {
    os << "Gazebo default systems Kestrel does not provide yet:";
    for (const auto& m : r.defaults_missing) os << " " << m;
    os << "\n";
  }
  os << "unsupported (ignored): " << r.description.unsupported.size() << "\n";
  for (const auto& u : r.description.unsupported) os << "  " << u << "\n";
}

// A world that could not be read (exit 2): its one error, also as JSON for --json readers.
int unreadable(const CheckOptions& options, const std::string& where, std::string message,
               std::ostream& out, std::ostream& err) {
  std::string file = where.empty() ? options.world.string() : where;
  int line = 0;
  if (message.starts_with(where + ": ")) message = message.substr(where.size() + 2);
  if (const auto colon = file.rfind(':');
      colon != std::string::npos && colon + 1 < file.size() &&
      file.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    line = std::stoi(file.substr(colon + 1));
    file.resize(colon);
  }
  err << "error: " << file << (line ? ":" + std::to_string(line) : "") << ": " << message << "\n";
  if (options.json) {
    auto arr = nlohmann::json::array();
    arr.push_back({{"severity", "error"},
                   {"file", file},
                   {"line", line},
                   {"entity", ""},
                   {"message", message}});
    out << arr.dump(2) << "\n";
  }
  return 2;
}

}  // namespace

int run_check_command(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  CheckReport r;
  try {
    r = check_world(options);
  } catch (const sdf::UnreadableWorld& e) {
    return unreadable(options, e.where(), e.what(), out, err);
  } catch (const std::exception& e) {
    // Anything else escaping the loader is still a world we could not read: never crash.
    return unreadable(options, options.world.string(), std::string("cannot load: ") + e.what(), out,
                      err);
  }
  if (options.json) {
    auto arr = nlohmann::json::array();
    for (const auto& f : r.findings.items()) {
      arr.push_back({{"severity", severity_name(f.severity)},
                     {"file", f.file},
                     {"line", f.line},
                     {"entity", f.entity},
                     {"message", f.message}});
    }
    out << arr.dump(2) << "\n";
    print_summary(r, err);
  } else {
    for (const auto& f : r.findings.items()) out << format_finding(f) << "\n";
    print_summary(r, out);
  }
  return r.findings.has_errors() ? 1 : 0;
}

}  // namespace kestrel::world
