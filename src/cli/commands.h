#pragma once
// Subcommands of the `kestrel` executable. Each add_* registers its subcommand on `app` and, when
// it is the one selected, sets `selected` to a function returning the exit code.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "kestrel/core/error.h"

namespace kestrel::cli {

/// Unusable input or usage (exit code 2): unreadable world file, conflicting flags.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A number option's check: finite (CLI11's PositiveNumber lets "nan" through) and above `min`
/// (or at least `min` with `inclusive`; -infinity: any finite number). Its message names the
/// value found.
CLI::Validator finite_number(double min, bool inclusive);

/// A 64-bit unsigned integer option's check (CLI11 wraps "-1" and saturates overflow).
CLI::Validator unsigned_integer();

/// An output file option's check: not a directory, in an existing folder, writable.
CLI::Validator output_file();

/// @throws UsageError if writing `output` would overwrite `input` (the world being read).
void refuse_overwriting(const std::string& input, const std::string& output, const char* option);

void add_run_command(CLI::App& app, std::function<int()>& selected);
/// `kestrel log info` (src/record).
void add_log_command(CLI::App& app, std::function<int()>& selected);
/// `kestrel replay` (src/record).
void add_replay_command(CLI::App& app, std::function<int()>& selected);
/// `kestrel batch`, `batch merge`, `batch report` (src/batch, docs/batch.md).
void add_batch_command(CLI::App& app, std::function<int()>& selected);
/// Commands contributed by modules (check, export-mjcf, ...).
void add_module_commands(CLI::App& app, std::function<int()>& selected);

}  // namespace kestrel::cli
