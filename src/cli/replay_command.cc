// `kestrel replay FILE.mcap`: a recording's world, driven by its recorded state instead of
// simulated (src/record/README.md, "Replay").
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "cli/world.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/text.h"
#include "kestrel/record/replay.h"
#include "kestrel/sim/server.h"

namespace kestrel::cli {
namespace {

struct ReplayArgs {
  std::string file;
  std::string world;
  std::optional<double> rtf;
  bool quiet = false;
  SharedRunOptions shared;
};

int replay(const ReplayArgs& a) {
  a.shared.check(a.file);
  std::shared_ptr<record::Recording> rec;
  try {
    rec = std::make_shared<record::Recording>(record::read_recording(a.file));
  } catch (const Error& e) {
    throw UsageError(e.what());  // unreadable input: exit 2
  }
  if (rec->samples.empty()) {
    throw UsageError(a.file, fmt::format("holds no {} sample to replay", record::kStateTopic));
  }
  const Duration end = rec->samples.back().time;
  if (!rec->complete) {
    spdlog::warn(
        "{}: the file ends before its Data End (a run that was killed?): replaying its complete "
        "chunks, up to sim time {} s",
        a.file, exact_seconds(end));
  }
  if (!rec->ends_early.empty()) {
    spdlog::warn("{}: {}: the replay ends there", a.file, rec->ends_early);
  }
  if (rec->kestrel_version != record::build_version()) {
    spdlog::warn("{}: recorded by kestrel {}, replayed by kestrel {}", a.file,
                 rec->kestrel_version, record::build_version());
  }
  const std::filesystem::path world = a.world.empty() ? rec->world : std::filesystem::path(a.world);
  if (!std::filesystem::is_regular_file(world)) {
    throw UsageError(a.file, fmt::format("was recorded from the world {}, which is not a file "
                                         "now (--world names the world to replay it in)",
                                         world.string()));
  }
  refuse_overwriting(world.string(), a.shared.truth_csv, "--truth-csv");

  WorldSettings ws;
  ws.path = world;
  ws.seed = rec->seed;
  ws.rtf = a.rtf;
  ws.quiet = a.quiet;
  a.shared.apply(ws);
  ws.render = false;  // no sensor system runs in a replay
  ws.replay = rec;
  sim::Server server;
  server.install_signal_stop();
  server.set_loading(true);
  auto loaded = load_world(ws);
  throw_if_interrupted("loading " + world.string());
  server.set_loading(false);
  auto runner = std::move(loaded.runner);
  sim::Runner& r = *runner;
  server.add(std::move(runner));
  sim::Server::Limits limits;
  limits.max_sim_time = end;
  if (!a.quiet) {
    std::printf("kestrel: replaying %s: world '%s' (%s), %s to sim time %s s, seed %llu\n",
                a.file.c_str(), r.options().world_name.c_str(), world.c_str(),
                counted(rec->samples.size(), "state sample").c_str(), exact_seconds(end).c_str(),
                static_cast<unsigned long long>(rec->seed));
    std::fflush(stdout);
  }
  const auto t0 = std::chrono::steady_clock::now();
  server.run(limits);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto info = r.info();
  if (!a.quiet) {
    const double sim = to_seconds(info.sim_time);
    std::printf("kestrel: %s after %llu iterations: sim time %.3f s, wall time %.3f s, RTF %.2f\n",
                server.signal_received() ? "stopped by signal" : "replayed",
                static_cast<unsigned long long>(info.iterations), sim, wall,
                wall > 0 ? sim / wall : 0.0);
    print_world_summary(r);
    if (!a.shared.truth_csv.empty()) {
      std::printf("  ground truth written to %s\n", a.shared.truth_csv.c_str());
    }
  }
  return 0;
}

}  // namespace

void add_replay_command(CLI::App& app, std::function<int()>& selected) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "replay",
      "Replay a recording (run --record): its world driven by the recorded state, republished "
      "on transport and the viewer (src/record/README.md)");
  cmd->add_option("file", args->file, "MCAP file written by kestrel run --record")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--world", args->world,
                  "The world file to replay in (default: the one the recording names); its "
                  "models and links must be those recorded")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rtf", args->rtf,
                  "Real-time factor (0 = as fast as possible); default: the world's <physics>")
      ->check(finite_number(0, true));
  args->shared.add_to(*cmd,
                      "Start paused (play, step and seek through world control: transport's or "
                      "the viewer's)");
  cmd->add_flag("--quiet", args->quiet, "No summary");
  cmd->callback([&selected, args] { selected = [args] { return replay(*args); }; });
}

}  // namespace kestrel::cli
