#pragma once
// Loading a world file into a configured Runner, shared by the CLI commands.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/physics/truth_csv.h"
#include "kestrel/record/recorder.h"
#include "kestrel/record/replay.h"
#include "kestrel/sim/runner.h"
#include "kestrel/world/setup.h"

namespace kestrel::cli {

struct WorldSettings {
  std::filesystem::path path;
  std::uint64_t seed = 0;
  bool paused = false;
  std::optional<double> rtf;           ///< overrides the world's <physics><real_time_factor>
  bool strict = false;                 ///< warnings are errors
  bool allow_missing_systems = false;  ///< run without plugins that cannot be resolved
  bool quiet = false;                  ///< do not print warnings
  std::string truth_csv;               ///< ground-truth CSV path (empty: none)
  double truth_rate_hz = 100;          ///< CSV samples per second of sim time (0: every step)
  std::vector<std::string> px4;        ///< --px4 MODEL[:INSTANCE] (SITL bridges)
  std::vector<std::string> ardupilot;  ///< --ardupilot MODEL[:INSTANCE]
  std::vector<std::string> rflysim;    ///< --rflysim MODEL[:ID] (src/sitl/rflysim)
  std::optional<double> sitl_connect_timeout;     ///< --sitl-connect-timeout [s] (every bridge)
  std::optional<double> sitl_answer_timeout;      ///< --sitl-answer-timeout [s] (every bridge)
  bool transport = true;                          ///< topics and services (false: --no-transport)
  std::optional<std::string> transport_ip;        ///< --transport-ip (default: IGN_IP or 127.0.0.1)
  bool render = true;                             ///< rendering sensors render (false: --no-render)
  unsigned render_threads = 0;                    ///< --render-threads (0: one per core)
  bool viewer = false;                            ///< --viewer: the Foxglove WebSocket server
  std::string viewer_ip = "127.0.0.1";            ///< --viewer-ip
  std::uint16_t viewer_port = 8765;               ///< --viewer-port (0: any free port)
  std::string record;                             ///< --record FILE.mcap (empty: none)
  std::vector<std::string> record_topics;         ///< --record-topics (empty: every channel)
  std::string record_compression = "zstd";        ///< --record-compression
  std::optional<double> record_rate_hz;  ///< --record-rate (0: every change; unset: see recorder.h)
  record::RecordReport* record_report = nullptr;  ///< filled when the recording closes
  /// A world's LogRecord plugin (src/record/README.md, "LogRecord"): kRecord records into its
  /// `<path>`/state.mcap unless `record` is set (then `record` records, as one recorder runs in
  /// Gazebo); kRefuse, for a batch's runs without `record: true` (each would write the same
  /// file), is a UsageError; kAccept takes it over without recording (a batch's plan check).
  enum class LogRecordUse { kRecord, kRefuse, kAccept };
  LogRecordUse log_record = LogRecordUse::kRecord;
  /// `kestrel replay`: the world's entities without its systems, driven by this recording
  /// (checked against the world: a mismatch is a UsageError); scene broadcaster with transport.
  std::shared_ptr<const record::Recording> replay;
  /// Called once the world's entities and systems are in the runner, before its systems are
  /// configured: `kestrel run --set` and `kestrel batch` apply drawn values here (src/batch).
  std::function<void(sim::Runner&)> before_configure;
};

struct LoadedWorld {
  std::unique_ptr<sim::Runner> runner;
  /// Declared plugins the world runs without (--allow-missing-systems, render-only systems).
  std::vector<world::MissingSystem> missing;
};

/// The options `kestrel run` and `kestrel replay` share: --paused, the truth CSV, transport and
/// the viewer.
struct SharedRunOptions {
  bool paused = false;
  std::string truth_csv;
  double truth_rate = physics::kDefaultTruthRateHz;
  bool no_transport = false;
  std::optional<std::string> transport_ip;
  bool viewer = false;
  std::string viewer_ip = "127.0.0.1";
  std::uint16_t viewer_port = 8765;

  /// Adds --paused (with `paused_help`), --truth-csv, --truth-rate, --no-transport,
  /// --transport-ip, --viewer, --viewer-port and --viewer-ip to `cmd`.
  void add_to(CLI::App& cmd, const char* paused_help);
  /// @throws UsageError for --paused without world control (no transport and no viewer), or an
  /// output that would overwrite `input`.
  void check(const std::string& input) const;
  /// Sets the matching fields of `ws`.
  void apply(WorldSettings& ws) const;
};

/// Loads the world, adds its systems and configures the runner. Logs warnings.
/// @throws UsageError if the file cannot be read or parsed; Error if the world has errors.
LoadedWorld load_world(const WorldSettings& settings);

/// Logs findings through the one log sink (kestrel/core/log.h): "warning: FILE:LINE: ...".
void log_findings(const sdf::Findings& findings);

/// "ran without N declared systems:" and one line per system (nothing if none).
void print_missing_systems(const std::vector<world::MissingSystem>& missing, const char* verb);

/// Prints what the world holds at the end of a run (models and their world poses).
void print_world_summary(const sim::Runner& runner);

}  // namespace kestrel::cli
