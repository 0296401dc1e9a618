#pragma once
// Subcommands of the `kestrel` executable. Each add_* registers its subcommand on `app` and, when
// it is the one selected, sets `selected` to a function returning the exit code.

#include <CLI/CLI.hpp>

#include <functional>

#include "kestrel/core/error.h"

namespace kestrel::cli {

/// Unusable input or usage (exit code 2): unreadable world file, conflicting flags.
class UsageError : public Error {
 public:
  using Error::Error;
};

void add_run_command(CLI::App& app, std::function<int()>& selected);
/// Commands contributed by modules (check, export-mjcf, ...).
void add_module_commands(CLI::App& app, std::function<int()>& selected);

}  // namespace kestrel::cli
