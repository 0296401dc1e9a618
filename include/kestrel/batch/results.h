#pragma once
/// @file The results database of a batch (DIR/results.sqlite): table `runs`, one row per run,
/// and table `batch` with the plan it belongs to. The only door to SQLite.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kestrel/core/error.h"

struct sqlite3;

namespace kestrel::batch {

/// One row of `runs`. Metrics are empty (NULL) when the run did not produce them (crashed,
/// timed out, failed to load; a world without a mission has no mission metrics).
struct RunResult {
  std::uint64_t run_id = 0;
  std::string outcome;  ///< completed, failed, crashed, timed_out
  std::uint64_t seed = 0;
  std::string params;                                     ///< JSON of the drawn values
  std::optional<std::int64_t> mission_completed;          ///< 1 if every mission completed, else 0
  std::optional<double> max_tracking_error_m;             ///< largest over the vehicles [m]
  std::optional<double> energy_J;                         ///< battery energy drawn, summed [J]
  std::optional<double> min_battery;                      ///< lowest state of charge seen, 0..1
  std::optional<double> final_x_m, final_y_m, final_z_m;  ///< the first vehicle's world position
  std::optional<std::int64_t> faults_applied;             ///< faults logged (components::FaultLog)
  std::optional<double> sim_time_s;                       ///< sim time reached [s]
  double wall_time_s = 0;     ///< the run's wall time, load included [s]
  std::optional<double> rtf;  ///< sim time / wall time of the stepping
  std::string message;        ///< why it failed, crashed or timed out

  /// Every column but wall_time_s and rtf (which depend on the machine) are equal.
  bool same_outcome(const RunResult& o) const;
  std::string to_json() const;
  /// @throws Error for a malformed document.
  static RunResult from_json(const std::string& text);
};

/// The outcomes, in the order reports list them.
inline constexpr const char* kOutcomes[] = {"completed", "failed", "crashed", "timed_out"};

/// "0, 3, 7" — at most 20 ids, then "and N more".
std::string id_list(const std::vector<std::uint64_t>& ids);

class Database {
 public:
  /// Opens (creating if needed) `file`. With `plan_text`, a new database records it and an
  /// existing one must hold the same plan (else Error: a different plan's results).
  /// @throws Error naming the file for anything SQLite refuses.
  Database(const std::filesystem::path& file, const std::optional<std::string>& plan_file,
           const std::optional<std::string>& plan_text);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// The plan recorded (empty for a database created without one and never given one).
  std::string plan_text() const;
  std::string plan_file() const;
  /// Records the plan if the database has none yet; else it must be the same (Error).
  void set_plan(const std::string& file, const std::string& text);
  /// A value of table `batch` ("" if absent): plan, plan_file, replay (the `kestrel run` command
  /// a run is replayed with, without its --seed and --set).
  std::string meta(const char* key) const;
  void set_meta(const char* key, const std::string& value);
  /// run_ids present.
  std::set<std::uint64_t> done() const;
  /// The plan's run_ids not present (the plan's run count is the `runs` value of table batch;
  /// nullopt when it was never recorded).
  std::optional<std::vector<std::uint64_t>> missing() const;
  /// Inserts one row (one transaction). @throws Error if run_id is present.
  void insert(const RunResult& r);
  /// Every row by run_id.
  std::vector<RunResult> rows() const;
  const std::filesystem::path& file() const { return file_; }

 private:
  void exec(const char* sql) const;
  [[noreturn]] void fail(const std::string& what) const;
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
};

}  // namespace kestrel::batch
