// `kestrel log info FILE.mcap`: what a recording holds, from its own summary section
// (src/record/README.md).
#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "kestrel/core/text.h"
#include "kestrel/record/mcap.h"

namespace kestrel::cli {
namespace {

int log_info(const std::string& path) {
  record::McapSummary s;
  try {
    s = record::read_summary(path);
  } catch (const Error& e) {
    throw UsageError(e.what());  // unreadable input: exit 2
  }
  std::map<std::uint16_t, const record::McapSummary::Schema*> schemas;
  for (const auto& sc : s.schemas) schemas[sc.id] = &sc;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> compression;  // name: sizes
  for (const auto& c : s.chunks) {
    auto& [packed, unpacked] = compression[c.compression.empty() ? "none" : c.compression];
    packed += c.compressed;
    unpacked += c.uncompressed;
  }
  std::printf("file:        %s\n", path.c_str());
  std::printf("size:        %llu bytes\n", static_cast<unsigned long long>(s.file_bytes));
  std::printf("library:     %s%s\n", s.library.c_str(),
              s.profile.empty() ? "" : fmt::format(" (profile {})", s.profile).c_str());
  const auto t = [](std::uint64_t ns) {
    return exact_seconds(Duration(static_cast<std::int64_t>(ns)));
  };
  std::printf("duration:    %s s (log time %s s to %s s)\n", t(s.end - s.start).c_str(),
              t(s.start).c_str(), t(s.end).c_str());
  std::printf("messages:    %llu\n", static_cast<unsigned long long>(s.messages));
  std::printf("chunks:      %zu\n", s.chunks.size());
  for (const auto& [name, sizes] : compression) {
    std::printf("compression: %s: %llu bytes from %llu (%.1f %%)\n", name.c_str(),
                static_cast<unsigned long long>(sizes.first),
                static_cast<unsigned long long>(sizes.second),
                sizes.second ? 100.0 * sizes.first / sizes.second : 0.0);
  }
  std::printf("channels:    %zu\n", s.channels.size());
  for (const auto& c : s.channels) {
    const auto it = schemas.find(c.schema);
    std::printf("  %3u  %-40s %10llu  %s (%s)\n", c.id, c.topic.c_str(),
                static_cast<unsigned long long>(c.messages),
                it == schemas.end() ? "no schema" : it->second->name.c_str(), c.encoding.c_str());
  }
  return 0;
}

}  // namespace

void add_log_command(CLI::App& app, std::function<int()>& selected) {
  auto* log = app.add_subcommand("log", "Read recordings (MCAP files written by run --record).");
  log->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto* info = log->add_subcommand(
      "info",
      "Channels, message counts, duration, size and compression of a recording, from its "
      "summary; a truncated or corrupt file is an error naming the byte offset (exit 2)");
  info->add_option("file", *path, "MCAP file")->required()->check(CLI::ExistingFile);
  info->callback([&selected, path] { selected = [path] { return log_info(*path); }; });
}

}  // namespace kestrel::cli
