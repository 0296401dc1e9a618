// Subcommands contributed by modules, registered in one explicit list.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "kestrel/fuel/fuel.h"
#include "kestrel/physics/physics.h"
#include "kestrel/systems/swarm.h"
#include "kestrel/transport/cli.h"
#include "kestrel/world/check.h"
#include "kestrel/world/setup.h"

namespace kestrel::cli {
namespace {

void add_check(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<world::CheckOptions>();
  auto* cmd = app.add_subcommand(
      "check",
      "Load a world without running it and report every problem found (exit 0: no "
      "errors, 1: errors, 2: the file cannot be read or parsed).");
  cmd->add_option("world", o->world, "SDF world file")->required();
  cmd->add_flag("--strict", o->strict, "Warnings count as errors");
  cmd->add_flag("--json", o->json, "Findings as one JSON array on stdout");
  cmd->add_flag("--allow-missing-systems", o->resolve.allow_missing,
                "Plugins that cannot be resolved are warnings (as `run --allow-missing-systems` "
                "runs without them)");
  cmd->callback([&selected, o] {
    selected = [o] {
      o->resolve.strict = o->strict;
      return world::run_check_command(*o, std::cout, std::cerr);
    };
  });
}

struct ExportArgs {
  std::string world, output;
};

void add_export_mjcf(CLI::App& app, std::function<int()>& selected) {
  auto a = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export-mjcf",
                                 "Write the MuJoCo model (MJCF) Kestrel simulates for a world.");
  cmd->add_option("world", a->world, "SDF world file")->required();
  cmd->add_option("-o,--output", a->output, "Output file (default: stdout)")->check(output_file());
  cmd->callback([&selected, a] {
    selected = [a] {
      sim::Runner runner(sim::Runner::Options{});
      try {
        const auto setup = world::load_world_into_runner(a->world, runner);
        for (const auto& f : setup.findings.items()) {
          std::fprintf(stderr, "%s\n", sdf::format_finding(f).c_str());
        }
      } catch (const sdf::UnreadableWorld& e) {
        throw UsageError(e.what());
      }
      refuse_overwriting(a->world, a->output, "-o");
      const std::string xml = physics::export_mjcf(runner.registry(), runner.world());
      if (a->output.empty()) {
        std::cout << xml;
        return 0;
      }
      std::ofstream f(a->output, std::ios::binary | std::ios::trunc);
      // A failed write is an output error (exit 1) with the system's reason, not a usage one.
      if (!f || !(f << xml) || !f.flush()) {
        throw Error(a->output, std::string("writing the MJCF failed: ") + std::strerror(errno));
      }
      return 0;
    };
  });
}

// kestrel make-swarm N [-o FILE] (src/systems/multicopter_control/swarm.cc).
void add_make_swarm(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<systems::SwarmOptions>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "make-swarm", "Write a world of N X3-class quadcopters, each flying its own pattern.");
  cmd->add_option("N", o->count, "Number of vehicles")->required()->check(CLI::Range(1, 100000));
  cmd->add_option("-o,--output", *out,
                  "Output world file (default: swarm_N.sdf); the vehicle model goes beside it "
                  "as STEM.vehicle.sdf")
      ->check(
          [](const std::string& v) -> std::string {
            return v == "-" ? "the swarm is two files (the world and the vehicle model it "
                              "includes): give a file name, not '-'"
                            : "";
          },
          "FILE")
      ->check(output_file());
  cmd->add_option("--spacing", o->spacing,
                  "A third of the distance between neighbouring take-off points [m] (default 4: "
                  "vehicles take off 12 m apart, each flying within its own cell)")
      ->check(finite_number(0, false));
  cmd->add_flag("--sensors", o->sensors, "Give every vehicle IMU, magnetometer, barometer, GNSS");
  cmd->add_option("--wind", o->wind, "Wind from the west [m/s] (default 0)")
      ->check(finite_number(-std::numeric_limits<double>::infinity(), true));
  auto islands = std::make_shared<bool>(false), no_islands = std::make_shared<bool>(false);
  auto* on = cmd->add_flag("--islands", *islands,
                           "Physics islands: each vehicle in its own physics model until it comes "
                           "near another, which it then shares and collides with (default above "
                           "500 vehicles)");
  cmd->add_flag("--no-islands", *no_islands,
                "One physics model for all vehicles (they can collide; MuJoCo 2.2 holds ~600)")
      ->excludes(on);
  cmd->callback([&selected, o, out, islands, no_islands] {
    if (*islands) o->islands = true;
    if (*no_islands) o->islands = false;
    selected = [o, out] { return systems::run_make_swarm_command(*o, *out); };
  });
}

// kestrel topic / service / model (src/transport): Gazebo's tools against a running world.
void add_topic(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<transport::TopicOptions>();
  auto* cmd = app.add_subcommand("topic", "List, inspect, echo and publish transport topics.");
  auto* l = cmd->add_flag("-l,--list")->description("List topics");
  auto* i = cmd->add_flag("-i,--info")->description("Publishers of a topic (with -t)");
  auto* e = cmd->add_flag("-e,--echo")->description("Print messages of a topic (with -t)");
  auto* p =
      cmd->add_flag("-p,--pub")->description("Publish one message (with -t, -m and the text)");
  cmd->add_option("-t,--topic", o->topic, "Topic name");
  cmd->add_option("-m,--msgtype", o->msgtype, "Message type, e.g. ignition.msgs.StringMsg");
  cmd->add_option("-n,--num", o->count, "Echo: exit after N messages")->check(CLI::PositiveNumber);
  cmd->add_option("-d,--duration", o->duration, "Echo: exit after SEC seconds")
      ->check(finite_number(0, false));
  cmd->add_flag("--json", o->json, "Echo: one JSON object per line");
  cmd->add_option("text", o->payload, "Publish: the message in protobuf text format");
  cmd->callback([&selected, o, l, i, e, p] {
    selected = [o, l, i, e, p] {  // validated when run: usage errors exit 2
      using A = transport::TopicOptions::Action;
      const int n = static_cast<int>(l->count() + i->count() + e->count() + p->count());
      if (n != 1) throw UsageError("topic: give exactly one of -l, -i, -e, -p");
      o->action = l->count()   ? A::kList
                  : i->count() ? A::kInfo
                  : e->count() ? A::kEcho
                               : A::kPublish;
      if (o->action != A::kList && o->topic.empty())
        throw UsageError("topic: -t TOPIC is required");
      if (o->action == A::kPublish && o->msgtype.empty()) {
        throw UsageError("topic -p: -m MSGTYPE is required (e.g. ignition.msgs.StringMsg)");
      }
      return transport::run_topic_command(*o, std::cout, std::cerr);
    };
  });
}

void add_service(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<transport::ServiceOptions>();
  auto timeout_ms = std::make_shared<int>(2000);
  auto* cmd = app.add_subcommand("service", "List, inspect and call transport services.");
  auto* l = cmd->add_flag("-l,--list")->description("List services");
  auto* i = cmd->add_flag("-i,--info")->description("Providers of a service (with -s)");
  cmd->add_option("-s,--service", o->service, "Service name");
  cmd->add_option("--reqtype", o->reqtype, "Request message type");
  cmd->add_option("--reptype", o->reptype, "Reply message type");
  auto* r = cmd->add_option("-r,--req", o->request, "Request in protobuf text format");
  cmd->add_option("--timeout", *timeout_ms, "Timeout [ms] (default 2000)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "Reply as JSON");
  cmd->add_option("--repeat", o->repeat, "Call N times and print round-trip times (benchmark)")
      ->check(CLI::PositiveNumber);
  cmd->callback([&selected, o, l, i, r, timeout_ms] {
    selected = [o, l, i, r, timeout_ms] {
      using A = transport::ServiceOptions::Action;
      o->timeout = std::chrono::milliseconds(*timeout_ms);
      o->action = l->count() ? A::kList : i->count() ? A::kInfo : A::kCall;
      if (o->action != A::kList && o->service.empty()) {
        throw UsageError("service: -s SERVICE is required (or -l)");
      }
      if (o->action == A::kCall && (o->reqtype.empty() || o->reptype.empty() || !r->count())) {
        throw UsageError(
            "service -s: --reqtype, --reptype and --req are required (example: "
            "kestrel service -s /world/W/control --reqtype ignition.msgs.WorldControl "
            "--reptype ignition.msgs.Boolean --req 'pause: true')");
      }
      return transport::run_service_command(*o, std::cout, std::cerr);
    };
  });
}

void add_model(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<transport::ModelOptions>();
  auto* cmd = app.add_subcommand("model", "Models of a running world: list, pose, links, joints.");
  cmd->add_flag("--list", o->list, "List the world's models");
  cmd->add_option("-m,--model", o->model, "Model name");
  cmd->add_option("-w,--world", o->world, "World name (default: the first world found)");
  cmd->add_flag("-p,--pose", o->pose, "The model's pose");
  auto* lk = cmd->add_option("-l,--link", o->link, "Links (all, or the one named)")->expected(0, 1);
  auto* jt =
      cmd->add_option("-j,--joint", o->joint, "Joints (all, or the one named)")->expected(0, 1);
  cmd->callback([&selected, o, lk, jt] {
    selected = [o, lk, jt] {
      o->links = lk->count() > 0;
      o->joints = jt->count() > 0;
      if (!o->list && o->model.empty()) throw UsageError("model: give --list or -m NAME");
      return transport::run_model_command(*o, std::cout, std::cerr);
    };
  });
}

// `kestrel fetch URI...`: the one command that downloads (src/fuel); a run only reads the cache.
void add_fetch(CLI::App& app, std::function<int()>& selected) {
  auto uris = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "fetch",
      "Download Fuel models (https://SERVER/1.0/OWNER/models/NAME[/VERSION]) into the local Fuel "
      "cache ($GZ_FUEL_CACHE_PATH, else $IGN_FUEL_CACHE_PATH, else ~/.ignition/fuel), where "
      "`kestrel run` and `check` find them. Runs never download.");
  cmd->add_option("uri", *uris, "Fuel model URL")->required();
  cmd->callback([&selected, uris] {
    selected = [uris] {
      const auto cache = fuel::download_cache();
      for (const auto& uri : *uris) {
        // A failed download is kestrel::Error (exit 1), naming the URL and the request.
        const auto dir = fuel::fetch(uri, cache);
        std::cout << uri << " -> " << dir.string() << "\n";
      }
      return 0;
    };
  });
}

}  // namespace

void add_module_commands(CLI::App& app, std::function<int()>& selected) {
  add_fetch(app, selected);
  add_check(app, selected);
  add_export_mjcf(app, selected);
  add_make_swarm(app, selected);
  add_topic(app, selected);
  add_service(app, selected);
  add_model(app, selected);
  add_log_command(app, selected);
}

}  // namespace kestrel::cli
