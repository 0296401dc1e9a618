#pragma once
/// @file `kestrel check WORLD.sdf [--strict] [--json]`: load without running, report findings.
///
/// Text output: one finding per line, `error: FILE:LINE: [entity] message` or `warning: ...`,
/// then a summary (entity counts, the systems that will run and where each came from, the
/// unsupported elements). With --json, stdout is exactly one JSON array of findings
/// ({"severity","file","line","entity","message"}) and the summary goes to stderr as text.
/// Exit codes: 0 no errors, 1 errors found (with --strict, warnings count as errors), 2 the file
/// cannot be read or parsed at all (a one-line reason on stderr).

#include <filesystem>
#include <iosfwd>

#include "kestrel/world/setup.h"

namespace kestrel::world {

struct CheckOptions {
  std::filesystem::path world;
  bool strict = false;  ///< every warning counts as an error
  bool json = false;
  LoadOptions load;
  ResolveOptions resolve;
};

/// The result of checking a world, for tests and tools.
struct CheckReport {
  WorldDescription description;
  std::vector<WorldSetup::SystemInfo> systems;
  std::vector<MissingSystem> missing;         ///< declared plugins a run goes without
  Findings findings;                          ///< loader findings then resolution findings
  std::vector<std::string> defaults_missing;  ///< Gazebo defaults Kestrel does not provide yet
};

/// Loads and resolves without running, then adds physics::check_physics findings (what the
/// engine cannot represent) when Physics will run. @throws sdf::UnreadableWorld (exit 2).
CheckReport check_world(const CheckOptions& options);

/// The whole command: prints to `out`/`err`, returns the exit code (0, 1 or 2). Never throws.
int run_check_command(const CheckOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kestrel::world
