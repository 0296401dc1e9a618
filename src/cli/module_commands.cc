// Subcommands contributed by modules, registered in one explicit list.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sdf/check.h"
#include "kestrel/sdf/world_setup.h"
#include "kestrel/systems/swarm.h"

namespace kestrel::cli {
namespace {

void add_check(CLI::App& app, std::function<int()>& selected) {
  auto o = std::make_shared<sdf::CheckOptions>();
  auto* cmd = app.add_subcommand(
      "check", "Load a world without running it and report every problem found (exit 0: no "
               "errors, 1: errors, 2: the file cannot be read or parsed).");
  cmd->add_option("world", o->world, "SDF world file")->required();
  cmd->add_flag("--strict", o->strict, "Warnings count as errors");
  cmd->add_flag("--json", o->json, "Findings as one JSON array on stdout");
  cmd->callback([&selected, o] {
    selected = [o] {
      o->resolve.strict = o->strict;
      return sdf::run_check_command(*o, std::cout, std::cerr);
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
  cmd->add_option("-o,--output", a->output, "Output file (default: stdout)");
  cmd->callback([&selected, a] {
    selected = [a] {
      sim::Runner runner(sim::Runner::Options{});
      try {
        sdf::load_world_into_runner(a->world, runner);
      } catch (const sdf::UnreadableWorld& e) {
        throw UsageError(e.what());
      }
      const std::string xml = physics::export_mjcf(runner.registry(), runner.world());
      if (a->output.empty()) {
        std::cout << xml;
        return 0;
      }
      std::ofstream f(a->output, std::ios::binary | std::ios::trunc);
      if (!(f << xml) || !f.flush()) throw UsageError("cannot write " + a->output);
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
  cmd->add_option("-o,--output", *out, "Output world file (default: stdout)");
  cmd->add_option("--spacing", o->spacing, "Take-off grid spacing / 3 [m] (default 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--sensors", o->sensors, "Give every vehicle IMU, magnetometer, barometer, GNSS");
  cmd->add_option("--wind", o->wind, "Wind from the west [m/s] (default 0)");
  cmd->callback([&selected, o, out] {
    selected = [o, out] { return systems::run_make_swarm_command(*o, *out); };
  });
}

}  // namespace

void add_module_commands(CLI::App& app, std::function<int()>& selected) {
  add_check(app, selected);
  add_export_mjcf(app, selected);
  add_make_swarm(app, selected);
}

}  // namespace kestrel::cli
