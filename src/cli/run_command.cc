// `kestrel run WORLD.sdf`: load a world and run it headless.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/world.h"
#include "kestrel/batch/apply.h"
#include "kestrel/components/model.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/log.h"
#include "kestrel/core/text.h"
#include "kestrel/sim/server.h"
#include "kestrel/systems/mission_monitor.h"

namespace kestrel::cli {
namespace {

struct RunArgs {
  std::string world;
  std::optional<std::uint64_t> iterations;
  std::optional<double> duration;
  std::optional<double> rtf;
  SharedRunOptions shared;
  std::uint64_t seed = 0;
  bool quiet = false;
  bool strict = false;
  bool allow_missing_systems = false;
  std::vector<std::string> px4, ardupilot, rflysim;
  std::optional<double> sitl_connect_timeout, sitl_answer_timeout;
  bool no_render = false;
  unsigned render_threads = 0;
  std::string record;
  std::vector<std::string> record_topics;
  std::string record_compression = "zstd";
  std::optional<double> record_rate;
  std::vector<std::string> set;
};

// A one-line live status on a terminal, refreshed a few times a second from its own thread.
class StatusLine {
 public:
  StatusLine(const sim::Runner& runner, bool enabled,
             const systems::MissionMonitor* missions = nullptr)
      : runner_(runner), missions_(missions) {
    if (!enabled) return;
    thread_ = std::thread([this] {
      std::unique_lock lock(m_);
      while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [&] { return done_; })) print();
    });
  }
  ~StatusLine() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
    log::status("");
  }

 private:
  // Through the log sink, which draws it again below every log line (never glued to one).
  void print() {
    const auto s = runner_.stats();
    log::status(fmt::format("sim {:10.3f} s  RTF {:7.2f}  {:9.0f} it/s  {}{}",
                            to_seconds(s.sim_time), s.rtf, s.iterations_per_s,
                            s.paused ? "[paused]" : "",
                            missions_ ? "  " + missions_->status() : ""));
  }
  const sim::Runner& runner_;
  const systems::MissionMonitor* missions_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
};

int run(const RunArgs& a) {
  a.shared.check(a.world);
  refuse_overwriting(a.world, a.record, "--record");
  if (!a.record.empty() && !a.shared.truth_csv.empty() &&
      std::filesystem::weakly_canonical(a.record) ==
          std::filesystem::weakly_canonical(a.shared.truth_csv)) {
    throw UsageError("--record and --truth-csv name the same file '" + a.record + "'");
  }
  std::optional<Duration> max_sim_time;
  if (a.duration) {
    max_sim_time = checked_seconds(*a.duration, /*positive=*/false);
    if (!max_sim_time) {
      throw UsageError(fmt::format("--duration must be a time {}, found {} s", seconds_range(false),
                                   *a.duration));
    }
  }
  WorldSettings ws;
  ws.path = a.world;
  ws.seed = a.seed;
  ws.rtf = a.rtf;
  ws.strict = a.strict;
  ws.allow_missing_systems = a.allow_missing_systems;
  ws.quiet = a.quiet;
  ws.px4 = a.px4;
  ws.ardupilot = a.ardupilot;
  ws.rflysim = a.rflysim;
  ws.sitl_connect_timeout = a.sitl_connect_timeout;
  ws.sitl_answer_timeout = a.sitl_answer_timeout;
  ws.render = !a.no_render;
  ws.render_threads = a.render_threads;
  std::vector<batch::Value> values;
  for (const std::string& text : a.set) {
    try {
      values.push_back(batch::parse_set(text));
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (!values.empty()) {
    ws.before_configure = [values](sim::Runner& r) {
      batch::apply_values(values, r);
    };
  }
  a.shared.apply(ws);
  record::RecordReport recorded;
  ws.record = a.record;
  ws.record_topics = a.record_topics;
  ws.record_compression = a.record_compression;
  ws.record_rate_hz = a.record_rate;
  ws.record_report = &recorded;
  // Signals are blocked before loading: threads started while loading (transport's) inherit the
  // mask, so SIGINT/SIGTERM reach the server's watcher instead of killing the process.
  sim::Server server;
  server.install_signal_stop();
  // A signal while loading stops the load (checked between files, models and systems; a
  // library call that cannot be interrupted is given 2 s) and nothing runs: exit 128 + signal.
  server.set_loading(true);
  auto loaded = load_world(ws);
  throw_if_interrupted("loading " + a.world);
  server.set_loading(false);
  auto runner = std::move(loaded.runner);
  sim::Runner& r = *runner;
  // Multicopter missions (src/systems/multicopter_control): live status, the run ends when every
  // mission is over, a summary, and exit code 0 only if every mission completed.
  const auto missions = systems::MissionMonitor::attach(r);

  server.add(std::move(runner));

  sim::Server::Limits limits;
  limits.max_iterations = a.iterations;
  limits.max_sim_time = max_sim_time;

  if (!a.quiet) {
    std::size_t models = 0;
    r.registry().each<components::Model>([&](ecs::Entity, const components::Model&) { ++models; });
    const double rtf = r.options().real_time_factor;
    std::printf("kestrel: world '%s': %s, %s, step %.6g s, RTF %s\n",
                r.options().world_name.c_str(), counted(models, "model").c_str(),
                counted(r.systems().size(), "system").c_str(), to_seconds(r.options().step_size),
                rtf == 0 ? "max" : fmt::format("{:.2f}", rtf).c_str());
    print_missing_systems(loaded.missing, "runs");
    std::fflush(stdout);
  }
  const auto t0 = std::chrono::steady_clock::now();
  {
    StatusLine status(r, !a.quiet && isatty(STDERR_FILENO), missions.get());
    server.run(limits);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto info = r.info();
  const double sim = to_seconds(info.sim_time);
  if (!a.quiet) {
    std::printf(
        "kestrel: %s after %llu iterations: sim time %.3f s, wall time %.3f s, RTF %.2f, "
        "%.0f iterations/s%s\n",
        server.signal_received() ? "stopped by signal" : "finished",
        static_cast<unsigned long long>(info.iterations), sim, wall, wall > 0 ? sim / wall : 0.0,
        wall > 0 ? info.iterations / wall : 0.0,
        r.registry().count<components::Model>() ? "" : " (empty world)");
    print_world_summary(r);
    print_missing_systems(loaded.missing, "ran");
    if (!a.shared.truth_csv.empty()) {
      std::printf("  ground truth written to %s\n", a.shared.truth_csv.c_str());
    }
    if (recorded.closed) {
      std::printf("  recording written to %s: %s, %s, %llu bytes (%s)\n", recorded.path.c_str(),
                  counted(recorded.messages, "message").c_str(),
                  counted(recorded.chunks, "chunk").c_str(),
                  static_cast<unsigned long long>(recorded.bytes), a.record_compression.c_str());
      for (const auto& [topic, n] : recorded.topics) {
        std::printf("    %-40s %llu\n", topic.c_str(), static_cast<unsigned long long>(n));
      }
    }
  }
  if (missions) {
    if (!a.quiet) missions->print_summary(stdout);
    return missions->exit_code();
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, std::function<int()>& selected) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Load an SDF world and run it headless.");
  cmd->add_option("world", args->world, "SDF world file")->required();
  auto* it = cmd->add_option("--iterations", args->iterations, "Stop after N steps")
                 ->check(CLI::PositiveNumber);
  auto* du = cmd->add_option("--duration", args->duration, "Stop after SEC seconds of sim time")
                 ->check(finite_number(0, false));
  it->excludes(du);
  cmd->add_option("--rtf", args->rtf,
                  "Real-time factor (0 = as fast as possible); default: the world's <physics>")
      ->check(finite_number(0, true));
  cmd->add_option("--seed", args->seed, "World seed for every noise stream (default 0)")
      ->check(unsigned_integer());
  cmd->add_flag("--quiet", args->quiet, "No status line and no summary");
  cmd->add_option("--set", args->set,
                  "Change the loaded world before it runs, as a batch run does (docs/batch.md): "
                  "wind_speed=M_S, wind_direction=DEG (from, clockwise from north), "
                  "mass/MODEL/LINK=KG, pose/MODEL/{x,y,z}=M (world ENU), "
                  "pose/MODEL/{roll,pitch,yaw}=DEG, plugin/MODEL/PLUGIN[/N]/PARAM=V (a "
                  "model's <plugin> parameter), fault/N/ATTR=V (the world's fault schedule); "
                  "repeatable")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--strict", args->strict, "Treat warnings (e.g. unsupported elements) as errors");
  cmd->add_flag("--allow-missing-systems", args->allow_missing_systems,
                "Run a world whose plugins cannot all be resolved without them (listed at the "
                "start and the end); default: refuse it, naming each");
  args->shared.add_to(*cmd,
                      "Start paused (resume through world control: transport's or the viewer's)");
  cmd->add_option("--px4", args->px4,
                  "Fly MODEL with PX4 SITL (TCP 127.0.0.1:4560+INSTANCE, lockstep); repeatable")
      ->type_name("MODEL[:INSTANCE]");
  cmd->add_option("--ardupilot", args->ardupilot,
                  "Fly MODEL with ArduPilot SITL JSON (UDP 127.0.0.1:9002+10*INSTANCE); "
                  "repeatable")
      ->type_name("MODEL[:INSTANCE]");
  cmd->add_option("--rflysim", args->rflysim,
                  "Fly and observe MODEL over RflySim's CopterSim UDP structs (listens on "
                  "127.0.0.1:30100+2*(ID-1), sends to 30101+2*(ID-1); ID 1 by default); "
                  "repeatable")
      ->type_name("MODEL[:ID]");
  cmd->add_option("--sitl-connect-timeout", args->sitl_connect_timeout,
                  "Give up (exit 1) when an autopilot has not connected after SEC seconds of "
                  "wall clock; default: wait as long as it takes")
      ->check(finite_number(0, false));
  cmd->add_option("--sitl-answer-timeout", args->sitl_answer_timeout,
                  "Run on without the autopilot (rotors at zero) when an answer takes longer "
                  "than SEC seconds of wall clock; default: lockstep waits as long as it takes")
      ->check(finite_number(0, false));
  cmd->add_flag("--no-render", args->no_render,
                "Skip the rendering sensors (cameras, depth cameras, lidars): they produce no "
                "data; for batch runs that need no pixels");
  cmd->add_option("--render-threads", args->render_threads,
                  "Threads that render, the step thread included (default: one per core)")
      ->check(CLI::Range(1u, 256u));
  auto* record =
      cmd->add_option("--record", args->record,
                      "Record every channel the viewer offers (transforms, scene, cameras, "
                      "stats, clock) into FILE.mcap, log time = sim time; Foxglove and "
                      "Lichtblick open it (src/record/README.md)")
          ->check(output_file());
  cmd->add_option("--record-topics", args->record_topics,
                  "Record only the channels whose topic matches one of these glob patterns "
                  "(e.g. '/tf' '/world/*/clock'); each must match a channel")
      ->type_name("PATTERN ...")
      ->needs(record);
  cmd->add_option("--record-rate", args->record_rate,
                  "At most HZ messages per channel per second of sim time, the state channel's "
                  "samples included (0: every change, e.g. /tf every step of a moving world). "
                  "Default: what the viewer sends — every sensor sample, the world's state at "
                  "60 Hz, stats and clock at 10 Hz — and a state sample every step")
      ->check(finite_number(0, true))
      ->needs(record);
  cmd->add_option("--record-compression", args->record_compression,
                  "Chunk compression: zstd (default), lz4 or none")
      ->check(CLI::IsMember({"zstd", "lz4", "none"}))
      ->needs(record);
  cmd->callback([&selected, args] { selected = [args] { return run(*args); }; });
}

}  // namespace kestrel::cli
