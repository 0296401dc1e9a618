// The `kestrel` command: one binary, subcommands registered here in one list.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "kestrel/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Kestrel: a fast, deterministic, headless robotics and multirotor simulator.\n"
               "Loads Gazebo SDF worlds. Exit codes: 0 success, 1 the run failed or check found "
               "errors, 2 unusable input or usage."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kestrel 0.1.0");

  std::function<int()> selected;
  kestrel::cli::add_run_command(app, selected);
  kestrel::cli::add_module_commands(app, selected);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kestrel: %s (see kestrel --help)\n", e.what());
    return 2;
  }
  try {
    return selected();
  } catch (const kestrel::cli::UsageError& e) {
    std::fprintf(stderr, "kestrel: %s\n", e.what());
    return 2;
  } catch (const kestrel::Error& e) {
    std::fprintf(stderr, "kestrel: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kestrel: internal error: %s\n", e.what());
    return 1;
  }
}
