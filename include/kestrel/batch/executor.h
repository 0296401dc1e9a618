#pragma once
/// @file Running a batch's runs, each in its own child process (fork), at most `jobs` at a
/// time: a child that dies without a result is `crashed`, one past the wall-clock limit is
/// killed and `timed_out`. Sharding: which runs a process takes (--shard, OpenMPI, Slurm).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/batch/plan.h"
#include "kestrel/batch/results.h"

namespace kestrel::batch {

/// This process's share of the runs: those with run_id mod count == index.
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  std::string source;  ///< "--shard", "OpenMPI", "Slurm" (empty: not sharded)
};

/// "I/N" with 0 <= I < N. @throws Error naming what was found.
Shard parse_shard(const std::string& text);
/// OpenMPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE, else Slurm's SLURM_ARRAY_TASK_ID /
/// SLURM_ARRAY_TASK_COUNT (relative to SLURM_ARRAY_TASK_MIN), else nothing.
/// @throws Error for a variable that is set but malformed or out of range.
std::optional<Shard> shard_from_environment();

struct ExecuteOptions {
  unsigned jobs = 1;              ///< child processes at a time
  double timeout_s = 600;         ///< wall-clock limit of a run [s]
  std::filesystem::path log_dir;  ///< run-K.log: each child's stdout and stderr (empty: ours)
  bool progress = false;          ///< a status line with ETA (on a terminal)
};

/// Runs in the child process: loads and runs one world, returns its row (a thrown Error is
/// recorded as `failed` with its message).
using RunOne = std::function<RunResult(const RunSpec&)>;
/// Runs in this process for every run, in order of completion.
using OnResult = std::function<void(const RunResult&)>;

/// Runs every spec. SIGINT/SIGTERM kill the children and throw Interrupted (the runs done so far
/// have been passed to on_result).
void execute(const std::vector<RunSpec>& runs, const ExecuteOptions& options, const RunOne& run_one,
             const OnResult& on_result);

}  // namespace kestrel::batch
