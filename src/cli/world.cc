#include "cli/world.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <tuple>

#include "cli/commands.h"
#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/sitl.h"
#include "kestrel/core/text.h"
#include "kestrel/physics/truth_csv.h"
#include "kestrel/record/log_record.h"
#include "kestrel/sitl/sitl.h"
#include "kestrel/transport/transport.h"
#include "kestrel/viewer/viewer.h"
#include "kestrel/world/setup.h"

namespace kestrel::cli {

void log_findings(const sdf::Findings& findings) {
  for (const auto& f : findings.items()) {
    // format_finding's "error: " / "warning: " is the sink's label.
    const std::string text = sdf::format_finding(f);
    const std::string rest = text.substr(std::string(sdf::severity_name(f.severity)).size() + 2);
    if (f.severity == sdf::Severity::kError) {
      spdlog::error("{}", rest);
    } else {
      spdlog::warn("{}", rest);
    }
  }
}

void print_missing_systems(const std::vector<world::MissingSystem>& missing, const char* verb) {
  if (missing.empty()) return;
  std::printf("kestrel: %s without %s it declares:\n", verb,
              counted(missing.size(), "system").c_str());
  for (const auto& m : missing) {
    std::printf("  %s on %s (%s)\n", m.name.c_str(),
                m.entity.empty() ? "the world" : m.entity.c_str(), m.origin.c_str());
  }
}

LoadedWorld load_world(const WorldSettings& s) {
  // Before any transport node exists: localhost unless the user chose an address.
  if (s.transport) {
    try {
      transport::configure_network(s.transport_ip);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  sim::Runner::Options opts;
  opts.seed = s.seed;
  opts.paused = s.paused;
  auto runner = std::make_unique<sim::Runner>(opts);
  world::WorldSetupOptions setup;
  setup.add_systems = !s.replay;
  setup.strict = s.strict;
  setup.resolve.strict = s.strict;
  setup.resolve.allow_missing = s.allow_missing_systems;
  world::WorldSetup result;
  try {
    result = world::load_world_into_runner(s.path, *runner, setup);
  } catch (const sdf::UnreadableWorld& e) {
    throw UsageError(e.what());
  }
  if (!s.quiet) log_findings(result.findings);
  if (s.before_configure) s.before_configure(*runner);
  if (s.replay) {
    try {
      record::check_world(*s.replay, runner->registry(), runner->world(),
                          runner->options().step_size);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    runner->add_system(record::make_replay_system(s.replay), runner->world(), nullptr,
                       "kestrel::record::Replay", s.replay->path);
    if (s.transport) {
      runner->add_system(transport::make_scene_broadcaster_system(), runner->world(), nullptr,
                         "kestrel::transport::SceneBroadcaster", "default (--no-transport to omit)");
    }
  }
  if (s.rtf || s.paused) {
    auto o = runner->options();
    if (s.rtf) o.real_time_factor = *s.rtf;
    o.paused = s.paused;
    runner->set_options(o);
  }
  if (!s.truth_csv.empty()) {
    physics::TruthCsvOptions t;
    t.path = s.truth_csv;
    t.rate_hz = s.truth_rate_hz;
    runner->add_system(physics::make_truth_csv_system(t), runner->world(), nullptr,
                       "kestrel::systems::TruthCsv", "--truth-csv");
  }
  if (s.transport) {
    runner->add_system(transport::make_world_transport_system(*runner), runner->world(), nullptr,
                       "kestrel::transport::WorldTransport", "default (--no-transport to omit)");
  }
  if (s.viewer) {
    viewer::Options v;
    v.ip = s.viewer_ip;
    v.port = s.viewer_port;
    runner->add_system(viewer::make_viewer_system(*runner, v), runner->world(), nullptr,
                       "kestrel::viewer::Viewer", "--viewer");
  }
  // Gazebo's LogRecord plugin: the recorder into <path>/state.mcap, unless --record records
  // (one recorder, as in Gazebo, where the first LogRecord started records).
  std::string record_file = s.record;
  const sim::SystemEntry* log_record = nullptr;
  for (const sim::SystemEntry& e : runner->systems()) {
    if (!e.active || e.name != "kestrel::systems::LogRecord") continue;
    if (log_record) {
      if (!s.quiet) {
        spdlog::warn("{}: a second LogRecord plugin: the one at {} records, this one does not",
                     e.origin, log_record->origin);
      }
      continue;
    }
    log_record = &e;
  }
  if (log_record) {
    record::LogRecordOptions lr;
    try {
      lr = record::log_record_options(*log_record->config);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    if (!s.record.empty()) {
      if (!s.quiet) {
        std::printf("kestrel: --record %s records; the LogRecord plugin (%s) does not write %s\n",
                    s.record.c_str(), log_record->origin.c_str(), lr.file.c_str());
      }
    } else if (s.log_record == WorldSettings::LogRecordUse::kRefuse) {
      throw UsageError(fmt::format(
          "{}: the world declares LogRecord: every run of the batch would write {}; record each "
          "run with the plan's `record: true` (DIR/runs/run-K.mcap), or remove the plugin",
          log_record->origin, lr.file));
    } else if (s.log_record == WorldSettings::LogRecordUse::kRecord) {
      std::error_code ec;
      std::filesystem::create_directories(lr.folder, ec);
      if (ec) {
        throw UsageError(fmt::format("{}: LogRecord <path>: cannot create {}: {}",
                                     log_record->origin, lr.folder, ec.message()));
      }
      record_file = lr.file;
      if (!s.quiet) {
        std::printf("kestrel: LogRecord (%s): recording to %s\n", log_record->origin.c_str(),
                    record_file.c_str());
        std::fflush(stdout);
      }
    }
    runner->registry().add<record::LogRecordTaken>(runner->world(),
                                                   record::LogRecordTaken{record_file});
  }
  // After every world system, so that the sensors' topics are set when it builds its channels.
  if (!record_file.empty()) {
    record::RecordOptions o;
    o.path = record_file;
    o.world_file = std::filesystem::absolute(s.path).lexically_normal().string();
    o.topics = s.record_topics;
    o.compression = record::parse_compression(s.record_compression);
    o.report = s.record_report;
    o.rate_hz = s.record_rate_hz;
    runner->add_system(record::make_recorder_system(*runner, std::move(o)), runner->world(),
                       nullptr, "kestrel::record::Recorder",
                       s.record.empty() ? log_record->origin : "--record");
  }
  // SITL bridges attached from the command line (src/sitl).
  for (const auto& [specs, autopilot, flag] :
       {std::tuple{&s.px4, sitl::Autopilot::kPx4, "--px4"},
        std::tuple{&s.ardupilot, sitl::Autopilot::kArduPilot, "--ardupilot"}}) {
    for (const std::string& text : *specs) {
      // A flag the world cannot take (an unknown or static model, twice, a second autopilot)
      // is a usage error.
      try {
        sitl::attach_bridge(*runner, autopilot, sitl::parse_attach_spec(text, flag));
      } catch (const sitl::AttachError& e) {
        throw UsageError(e.what());
      }
    }
  }
  for (const std::string& text : s.rflysim) {
    try {
      sitl::attach_rflysim(*runner, text);
    } catch (const sitl::AttachError& e) {
      throw UsageError(e.what());
    }
  }
  try {
    sitl::check_channel_maps(*runner);
  } catch (const sitl::AttachError& e) {
    throw UsageError(e.what());
  }
  // Wall-clock limits for every bridge, SDF-declared ones included (src/sitl/README.md).
  if (s.sitl_connect_timeout || s.sitl_answer_timeout) {
    runner->registry().add<components::SitlTimeouts>(
        runner->world(), components::SitlTimeouts{s.sitl_connect_timeout, s.sitl_answer_timeout});
  }
  // Read by the rendering sensor systems at configure (components/camera.h).
  runner->registry().set<components::RenderSettings>(runner->world(), {s.render, s.render_threads});
  runner->configure();
  return {std::move(runner), std::move(result.missing)};
}

void SharedRunOptions::add_to(CLI::App& cmd, const char* paused_help) {
  cmd.add_flag("--paused", paused, paused_help);
  auto* csv = cmd.add_option("--truth-csv", truth_csv,
                             "Write ground truth (pose, velocities of every model) to FILE")
                  ->check(output_file());
  cmd.add_option("--truth-rate", truth_rate,
                 "Ground-truth samples per second of sim time (default 100; 0 = every step)")
      ->check(finite_number(0, true))
      ->needs(csv);
  auto* nt = cmd.add_flag("--no-transport", no_transport,
                          "Run without topics and services (no transport node at all)");
  cmd.add_option("--transport-ip", transport_ip,
                 "Address transport binds to and announces (sets IGN_IP); default: IGN_IP if "
                 "set, else 127.0.0.1 so nothing leaves the machine")
      ->excludes(nt);
  auto* v = cmd.add_flag(
      "--viewer", viewer,
      "Serve the world live on one port: the Foxglove WebSocket protocol (Foxglove, Lichtblick) "
      "and the built-in page at http://IP:PORT/ (src/viewer/README.md)");
  cmd.add_option("--viewer-port", viewer_port,
                 "The viewer's TCP port (default 8765; 0: any free port, printed)")
      ->check(CLI::Range(0, 65535))
      ->needs(v);
  cmd.add_option("--viewer-ip", viewer_ip,
                 "Address the viewer binds to (default 127.0.0.1: only this machine can "
                 "connect; another address lets other hosts watch and control the world)")
      ->needs(v);
}

void SharedRunOptions::check(const std::string& input) const {
  // Only world control (a transport or viewer service) can resume a paused world.
  if (paused && no_transport && !viewer) {
    throw UsageError(
        "--paused needs world control to resume: not with --no-transport unless "
        "--viewer serves it");
  }
  refuse_overwriting(input, truth_csv, "--truth-csv");
}

void SharedRunOptions::apply(WorldSettings& ws) const {
  ws.paused = paused;
  ws.truth_csv = truth_csv;
  ws.truth_rate_hz = truth_rate;
  ws.transport = !no_transport;
  ws.transport_ip = transport_ip;
  ws.viewer = viewer;
  ws.viewer_ip = viewer_ip;
  ws.viewer_port = viewer_port;
}

void print_world_summary(const sim::Runner& runner) {
  const auto& reg = runner.registry();
  reg.each<components::Model, components::WorldPose>(
      [&](ecs::Entity e, const components::Model&, const components::WorldPose& wp) {
        if (reg.parent(e) != runner.world()) return;  // top-level models only
        const auto& p = wp.value.Pos();
        std::printf("  %-32s at (%.3f, %.3f, %.3f) m\n", reg.scoped_name(e).c_str(), p.X(), p.Y(),
                    p.Z());
      });
}

}  // namespace kestrel::cli
