// The `kestrel` command: one binary, subcommands registered here in one list.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "kestrel/core/error.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/log.h"
#include "kestrel/core/text.h"

#if defined(__SANITIZE_ADDRESS__)
#define KESTREL_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KESTREL_LSAN 1
#endif
#endif
#ifdef KESTREL_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace {

// What to tell a user whose command line CLI11 refused: for a misspelt option or subcommand the
// closest one, and always where the command's options are listed.
std::string explain(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* sub = nullptr;
  for (int i = 1; i < argc && !sub; ++i) {
    for (const auto* s : app.get_subcommands({})) {
      if (s->get_name() == argv[i]) sub = s;
    }
  }
  const std::string help = sub ? "kestrel " + sub->get_name() + " --help" : "kestrel --help";
  const std::string context = sub ? sub->get_name() + ": " : "";
  if (!sub) {
    std::vector<std::string> names;
    for (const auto* s : app.get_subcommands({})) names.push_back(s->get_name());
    for (int i = 1; i < argc; ++i) {
      if (argv[i][0] == '-') continue;
      const std::string meant = kestrel::closest_match(argv[i], names);
      if (!meant.empty()) {
        return "unknown command '" + std::string(argv[i]) + "': did you mean '" + meant +
               "'? (see " + help + ")";
      }
      break;
    }
    return std::string(e.what()) + " (see " + help + ")";
  }
  // CLI11 reports an unknown option as an argument it did not expect.
  if (!dynamic_cast<const CLI::ExtrasError*>(&e)) return context + e.what() + " (see " + help + ")";
  std::vector<std::string> flags;
  for (const auto* o : sub->get_options()) {
    for (const auto& n : o->get_lnames()) flags.push_back("--" + n);
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(flags.begin(), flags.end(), arg) != flags.end()) continue;
    const std::string meant = kestrel::closest_match(arg, flags);
    return context + "unknown option " + arg +
           (meant.empty() ? "" : ": did you mean " + meant + "?") + " (see " + help + ")";
  }
  return context + e.what() + " (see " + help + ")";
}

// An exception's message as the one sink reports it: "error: MESSAGE", never "error: error:".
std::string bare(std::string message) {
  while (message.starts_with("error: ")) message.erase(0, 7);
  return message;
}

}  // namespace

static int kestrel_main(int argc, char** argv) {
  kestrel::log::init();
  CLI::App app{"Kestrel: a fast, deterministic, headless robotics and multirotor simulator.\n"
               "Loads Gazebo SDF worlds. Exit codes: 0 success, 1 the run failed or check found "
               "errors, 2 unusable input or usage."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kestrel 0.1.0");

  std::function<int()> selected;
  kestrel::cli::add_run_command(app, selected);
  kestrel::cli::add_replay_command(app, selected);
  kestrel::cli::add_batch_command(app, selected);
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
    spdlog::error("{}", explain(app, e, argc, argv));
    return 2;
  }
  // A full file-size limit (ulimit -f) makes writes fail with EFBIG, reported by whoever wrote,
  // instead of killing the process with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    const int code = selected();
    // What went to stdout (check --json, export-mjcf, topic echo) must have reached it: a full
    // disk or a closed pipe is an error, never a silent exit 0.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      const int error = errno;
      spdlog::error("writing to standard output failed: {}", std::strerror(error));
      return 1;
    }
    return code;
  } catch (const kestrel::Interrupted& e) {
    spdlog::error("{}; nothing ran", bare(e.what()));
    return 128 + e.signal();
  } catch (const kestrel::cli::UsageError& e) {
    spdlog::error("{}", bare(e.what()));
    return 2;
  } catch (const kestrel::Error& e) {
    spdlog::error("{}", bare(e.what()));
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 1;
  }
}

int main(int argc, char** argv) {
  const int code = kestrel_main(argc, argv);
  // ignition-transport 11's own threads (discovery, reception) run on while a process's static
  // objects are destroyed after main returns, and one was seen to crash there (rarely: a SEGV in
  // a transport thread after a successful PX4 run under ASan turned exit 0 into 1). Everything
  // Kestrel writes is closed and checked by now: the process ends without static destruction.
  std::fflush(nullptr);
  spdlog::shutdown();
#ifdef KESTREL_LSAN
  __lsan_do_leak_check();  // at_quick_exit does not run LeakSanitizer's atexit check
#endif
  std::quick_exit(code);
}
