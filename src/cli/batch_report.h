#pragma once
// `kestrel batch report DIR`: one self-contained HTML file from DIR/results.sqlite.

#include <CLI/CLI.hpp>
#include <functional>

namespace kestrel::cli {

/// Adds `report` to the `batch` subcommand.
void add_batch_report_command(CLI::App& batch, std::function<int()>& selected);

}  // namespace kestrel::cli
