// `kestrel batch PLAN --out DIR`: the plan's runs, each a full world (transport off) in its own
// child process, into DIR/results.sqlite; `kestrel batch merge`, `kestrel batch report`.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <thread>

#include "cli/batch_report.h"
#include "cli/commands.h"
#include "cli/world.h"
#include "kestrel/batch/apply.h"
#include "kestrel/batch/executor.h"
#include "kestrel/batch/plan.h"
#include "kestrel/batch/results.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/core/files.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/log.h"
#include "kestrel/core/text.h"
#include "kestrel/core/time.h"
#include "kestrel/sim/events.h"
#include "kestrel/sim/server.h"
#include "kestrel/systems/mission_monitor.h"

namespace kestrel::cli {
namespace {

namespace c = kestrel::components;
namespace fs = std::filesystem;

struct BatchArgs {
  std::string plan;
  std::string out;
  unsigned jobs = 0;
  std::string shard;
  bool quiet = false;
};

// DIR/runs/run-K.EXT: a run's truth CSV or recording (docs/batch.md).
fs::path run_output(const fs::path& dir, std::uint64_t run_id, const char* ext) {
  return dir / "runs" / fmt::format("run-{}.{}", run_id, ext);
}

// In the child process: one run of the plan, as `kestrel run --no-transport` would run it, its
// truth CSV and recording (as the plan asks) under `dir`.
batch::RunResult run_world(const batch::Plan& plan, const batch::RunSpec& spec,
                           const fs::path& dir) {
  WorldSettings ws;
  ws.path = plan.world;
  ws.seed = spec.seed;
  ws.transport = false;
  ws.rtf = 0;
  ws.render_threads = 1;
  if (plan.truth_csv) ws.truth_csv = run_output(dir, spec.run_id, "csv").string();
  if (plan.record) ws.record = run_output(dir, spec.run_id, "mcap").string();
  ws.log_record = WorldSettings::LogRecordUse::kRefuse;  // a world's LogRecord: `record: true`
  ws.before_configure = [&spec](sim::Runner& r) {
    batch::apply_values(spec.values, r);
  };
  batch::RunResult res;
  const auto t_load = std::chrono::steady_clock::now();
  // Declared first, destroyed last: the monitor and subscriptions below refer to its runner.
  sim::Server server;
  auto loaded = load_world(ws);
  sim::Runner& r = *loaded.runner;
  const auto missions = systems::MissionMonitor::attach(r);
  // The lowest state of charge of any battery, every step.
  double min_battery = std::numeric_limits<double>::infinity();
  auto battery = [&r, &min_battery] {
    r.registry().each<c::Battery>([&](ecs::Entity, const c::Battery& b) {
      min_battery = std::min(min_battery, b.percentage);
    });
  };
  battery();
  const auto sub = r.events().subscribe<sim::StepDone>([&](const sim::StepDone&) { battery(); });
  server.add(std::move(loaded.runner));
  sim::Server::Limits limits;
  if (plan.duration_s) limits.max_sim_time = checked_seconds(*plan.duration_s, true);
  const auto t0 = std::chrono::steady_clock::now();
  server.run(limits);
  const double stepping =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double sim = to_seconds(r.info().sim_time);
  res.sim_time_s = sim;
  res.rtf = stepping > 0 ? sim / stepping : 0.0;
  res.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count();
  if (std::isfinite(min_battery)) res.min_battery = min_battery;
  res.outcome = "completed";
  if (missions) {
    const auto vehicles = missions->vehicles();
    res.mission_completed = missions->exit_code() == 0 ? 1 : 0;
    double err = 0, energy = 0;
    bool any_energy = false;
    std::string why;
    for (const auto& v : vehicles) {
      err = std::max(err, v.max_tracking_error);
      if (v.energy_used >= 0) {
        energy += v.energy_used;
        any_energy = true;
      }
      if (v.phase != "completed") {
        why += fmt::format("{}{}: {}{}", why.empty() ? "" : "; ", v.name, v.phase,
                           v.reason.empty() ? "" : " (" + v.reason + ")");
      }
    }
    res.max_tracking_error_m = err;
    if (any_energy) res.energy_J = energy;
    res.faults_applied = static_cast<std::int64_t>(missions->faults());
    if (!vehicles.empty()) {
      const ecs::Entity e = r.registry().find_scoped(vehicles.front().name);
      if (const auto* wp = r.registry().try_get<c::WorldPose>(e)) {
        res.final_x_m = wp->value.Pos().X();
        res.final_y_m = wp->value.Pos().Y();
        res.final_z_m = wp->value.Pos().Z();
      }
    }
    if (*res.mission_completed == 0) {
      res.outcome = "failed";
      res.message = fmt::format("mission not completed at sim time {:.3f} s: {}", sim, why);
    }
  }
  return res;
}

// "DIR/results.sqlite" with DIR created.
fs::path database_in(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw UsageError(
        fmt::format("--out {}: cannot create the folder: {}", dir.string(), ec.message()));
  return dir / "results.sqlite";
}

int run_batch(const BatchArgs& a) {
  if (a.plan.empty())
    throw UsageError("batch: a PLAN file is needed (kestrel batch PLAN --out DIR)");
  if (a.out.empty())
    throw UsageError("batch: --out DIR is needed (where results.sqlite is written)");
  batch::Plan plan;
  try {
    plan = batch::load_plan(a.plan);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  std::optional<batch::Shard> shard;
  try {
    shard = a.shard.empty() ? batch::shard_from_environment() : batch::parse_shard(a.shard);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  // The world loads with the plan's values (run 0's) before anything runs or is written: a
  // parameter naming a link the world lacks is an error naming the plan's line. In a child
  // process like every run, so that this process never holds a world.
  {
    batch::ExecuteOptions check;
    check.timeout_s = std::max(plan.timeout_s, 600.0);  // loading only
    std::optional<batch::RunResult> checked;
    batch::execute(
        {batch::draw(plan, 0)}, check,
        [&plan](const batch::RunSpec& s) {
          WorldSettings ws;
          ws.path = plan.world;
          ws.seed = s.seed;
          ws.transport = false;
          ws.quiet = true;
          ws.log_record = plan.record ? WorldSettings::LogRecordUse::kAccept
                                      : WorldSettings::LogRecordUse::kRefuse;
          ws.before_configure = [&s](sim::Runner& r) {
            batch::apply_values(s.values, r);
          };
          const auto loaded = load_world(ws);  // configured: the world can run
          batch::RunResult r;
          r.outcome = "completed";
          return r;
        },
        [&](const batch::RunResult& r) { checked = r; });
    if (checked->outcome != "completed") {
      throw UsageError(
          fmt::format("{} cannot be run: {}: {}", a.plan, checked->outcome, checked->message));
    }
  }
  // A shard from MPI or Slurm writes its own database under DIR (merged by `batch merge DIR`).
  fs::path dir = a.out;
  if (shard && shard->source != "--shard") {
    dir /= fmt::format("shard-{}-of-{}", shard->index, shard->count);
  }
  std::optional<batch::Database> opened;
  try {
    opened.emplace(database_in(dir), a.plan, plan.text);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  batch::Database& db = *opened;
  // The world file as these runs loaded it: a resume with the file changed would mix results of
  // two worlds under one plan.
  const std::string world_text = read_regular_file(plan.world, std::uint64_t{1} << 30);
  if (const std::string before = db.meta("world"); !db.done().empty() && before != world_text) {
    throw UsageError(
        before.empty()
            ? fmt::format("{}: {} holds {} but not the text of the world file they ran (written "
                          "by a Kestrel that did not keep it): a resume cannot tell whether {} "
                          "changed since (give another --out)",
                          a.plan, db.file().string(), counted(db.done().size(), "run"),
                          plan.world.string())
            : fmt::format("{}: the world file {} changed since the runs already in {} were run: "
                          "resuming would mix two worlds' results (restore the file, or give "
                          "another --out)",
                          a.plan, plan.world.string(), db.file().string()));
  }
  db.set_meta("world", world_text);
  db.set_meta("runs", std::to_string(plan.runs));  // what merge and report count missing runs by
  // What replays a run (the report prints it with the run's --seed and --set values).
  db.set_meta("replay",
              fmt::format("kestrel run {} --no-transport --rtf 0{}", plan.world.string(),
                          plan.duration_s ? fmt::format(" --duration {}", *plan.duration_s)
                                          : std::string()));
  const auto done = db.done();
  std::vector<batch::RunSpec> todo;
  std::size_t mine = 0;
  for (std::uint64_t k = 0; k < plan.runs; ++k) {
    if (shard && k % shard->count != shard->index) continue;
    ++mine;
    if (!done.count(k)) todo.push_back(batch::draw(plan, k));
  }
  batch::ExecuteOptions o;
  o.jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  o.timeout_s = plan.timeout_s;
  o.log_dir = dir / "logs";
  o.progress = !a.quiet && isatty(STDERR_FILENO);
  std::error_code ec;
  fs::create_directories(o.log_dir, ec);
  if (ec) throw UsageError(fmt::format("cannot create {}: {}", o.log_dir.string(), ec.message()));
  if (plan.truth_csv || plan.record) {
    fs::create_directories(dir / "runs", ec);
    if (ec) {
      throw UsageError(
          fmt::format("cannot create {}: {}", (dir / "runs").string(), ec.message()));
    }
  }
  if (!a.quiet) {
    const std::string from =
        shard ? fmt::format(" (shard {}/{} from {})", shard->index, shard->count, shard->source)
              : "";
    std::printf("kestrel batch: %s of %s%s, %zu already in %s, %zu to run, %u at a time\n",
                counted(mine, "run").c_str(), a.plan.c_str(), from.c_str(), mine - todo.size(),
                db.file().c_str(), todo.size(), o.jobs);
    std::fflush(stdout);
  }
  std::map<std::string, std::size_t> outcomes;
  try {
    batch::execute(
        todo, o, [&plan, &dir](const batch::RunSpec& s) { return run_world(plan, s, dir); },
        [&](const batch::RunResult& r) {
          // Each run loads the world file anew: one edited while the batch ran is found here,
          // before a result of the other world is recorded.
          if (read_regular_file(plan.world, std::uint64_t{1} << 30) != world_text) {
            throw UsageError(fmt::format(
                "{}: the world file {} changed while the batch ran: run {} and those running "
                "beside it are not recorded (they may have loaded either text); restore the "
                "file and the same command resumes",
                a.plan, plan.world.string(), r.run_id));
          }
          db.insert(r);
          ++outcomes[r.outcome];
          if (r.outcome != "completed") {
            spdlog::warn("run {}: {}: {}", r.run_id, r.outcome, r.message);
          }
        });
  } catch (const Interrupted& e) {
    spdlog::error(
        "the batch was stopped by signal {}: the runs finished before it are in {}; "
        "the same command resumes",
        e.signal(), db.file().string());
    return 128 + e.signal();
  }
  const auto rows = db.rows();
  std::map<std::string, std::size_t> totals;
  for (const auto& r : rows) ++totals[r.outcome];
  if (!a.quiet) {
    std::string line;
    for (const char* name : batch::kOutcomes) {
      line += fmt::format("{}{} {}", line.empty() ? "" : ", ", totals[name], name);
    }
    std::printf("kestrel batch: %s in %s: %s\n", counted(rows.size(), "run").c_str(),
                db.file().c_str(), line.c_str());
  }
  // 0 only if every run of this share completed.
  std::size_t completed = 0;
  for (const auto& r : rows) completed += r.outcome == "completed";
  return completed == rows.size() ? 0 : 1;
}

struct MergeArgs {
  std::string out;
  std::vector<std::string> from;
};

int run_merge(const MergeArgs& a) {
  std::vector<fs::path> sources;
  if (a.from.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(a.out, ec)) {
      if (e.is_directory() && e.path().filename().string().starts_with("shard-")) {
        sources.push_back(e.path());
      }
    }
    if (ec) throw UsageError(fmt::format("batch merge: cannot list {}: {}", a.out, ec.message()));
    std::sort(sources.begin(), sources.end());
    if (sources.empty()) {
      throw UsageError(
          fmt::format("batch merge: no shard-* folders in {} and no FROM folders "
                      "given",
                      a.out));
    }
  } else {
    sources.assign(a.from.begin(), a.from.end());
  }
  batch::Database out(database_in(a.out), std::nullopt, std::nullopt);
  std::size_t added = 0, present = 0;
  for (const auto& s : sources) {
    const fs::path file = s / "results.sqlite";
    if (!fs::is_regular_file(file)) throw UsageError("batch merge: no " + file.string());
    batch::Database in(file, std::nullopt, std::nullopt);
    if (in.plan_text().empty())
      throw UsageError("batch merge: " + file.string() + " holds no plan");
    const std::string w = in.meta("world"), world = out.meta("world");
    if (w.empty() && !in.done().empty()) {
      throw UsageError(fmt::format("batch merge: {} holds runs but not the text of the world "
                                   "file they ran (written by a Kestrel that did not keep it): "
                                   "the merge cannot tell whether the shards ran the same world",
                                   file.string()));
    }
    if (world.empty() && !out.done().empty()) {
      throw UsageError(fmt::format("batch merge: {} holds runs but not the text of the world "
                                   "file they ran: the merge cannot tell whether {} ran the same "
                                   "world",
                                   out.file().string(), file.string()));
    }
    if (!world.empty() && w != world) {
      throw UsageError(fmt::format("batch merge: {} was run with another world file than the "
                                   "runs already in {} (the plan's world changed between them)",
                                   file.string(), out.file().string()));
    }
    out.set_plan(in.plan_file(), in.plan_text());
    out.set_meta("world", w);
    out.set_meta("replay", in.meta("replay"));
    out.set_meta("runs", in.meta("runs"));
    std::map<std::uint64_t, batch::RunResult> have;
    for (auto& r : out.rows()) have.emplace(r.run_id, std::move(r));
    for (const auto& r : in.rows()) {
      const auto it = have.find(r.run_id);
      if (it == have.end()) {
        out.insert(r);
        ++added;
      } else if (it->second.same_outcome(r)) {
        ++present;
      } else {
        throw Error(fmt::format(
            "batch merge: run {} in {} differs from the one already in {} "
            "(outcome {} vs {}): not the same binary or world?",
            r.run_id, file.string(), out.file().string(), r.outcome, it->second.outcome));
      }
    }
  }
  std::printf("kestrel batch merge: %s from %s into %s (%s already there)\n",
              counted(added, "run").c_str(), counted(sources.size(), "database").c_str(),
              out.file().c_str(), counted(present, "run").c_str());
  if (const auto missing = out.missing(); missing && !missing->empty()) {
    std::printf("kestrel batch merge: %s of the plan's %s still missing: %s\n",
                counted(missing->size(), "run").c_str(), out.meta("runs").c_str(),
                batch::id_list(*missing).c_str());
  }
  return 0;
}

}  // namespace

void add_batch_command(CLI::App& app, std::function<int()>& selected) {
  auto args = std::make_shared<BatchArgs>();
  auto* cmd = app.add_subcommand(
      "batch",
      "Run a plan's runs (docs/batch.md), each a full world without transport in its own "
      "process, into DIR/results.sqlite; merge shards; report.");
  cmd->add_option("plan", args->plan, "The plan (YAML): world, runs, seed, what to vary");
  cmd->add_option("--out", args->out,
                  "Folder of results.sqlite and the runs' logs (logs/run-K.log)");
  cmd->add_option("-j,--jobs", args->jobs, "Runs at a time (default: one per core)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--shard", args->shard,
                  "Run only the runs k with k mod N == I (default: from OpenMPI's or a Slurm "
                  "array's environment, into DIR/shard-I-of-N)")
      ->type_name("I/N");
  cmd->add_flag("--quiet", args->quiet, "No progress line and no summary");
  auto merge = std::make_shared<MergeArgs>();
  auto* m = cmd->add_subcommand("merge", "Join shard databases into DIR/results.sqlite");
  m->add_option("dir", merge->out, "Folder of the merged results.sqlite")->required();
  m->add_option("from", merge->from, "Folders holding a results.sqlite (default: DIR/shard-*)");
  m->callback([&selected, merge] { selected = [merge] { return run_merge(*merge); }; });
  add_batch_report_command(*cmd, selected);
  cmd->callback([&selected, args, cmd] {
    if (!cmd->get_subcommands().empty()) return;
    selected = [args] { return run_batch(*args); };
  });
}

}  // namespace kestrel::cli
