// `kestrel log info FILE.mcap`: what a recording holds, from its own summary section;
// `kestrel log to-csv FILE.mcap`: its channels as CSV files (src/record/README.md).
#include <fmt/format.h>
#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "kestrel/core/output.h"
#include "kestrel/core/text.h"
#include "kestrel/export/table.h"
#include "kestrel/physics/truth_csv.h"
#include "kestrel/record/mcap.h"
#include "kestrel/record/replay.h"

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

struct ToCsvArgs {
  std::string file;
  std::vector<std::string> topics;  // glob patterns; empty: every channel
  std::string out;
};

// "/world/x3/stats" -> "world_x3_stats.csv"
std::string csv_name(const std::string& topic) {
  std::string n;
  for (char ch : topic) {
    if (ch == '/') {
      if (!n.empty() && n.back() != '_') n += '_';
    } else {
      n += ch;
    }
  }
  while (!n.empty() && n.back() == '_') n.pop_back();
  return (n.empty() ? "channel" : n) + ".csv";
}

// One channel being written: its decoder, its columns, its file.
struct Table {
  std::string topic;
  std::unique_ptr<exports::MessageTable> messages;
  std::unique_ptr<record::StateTable> state;
  std::vector<std::string> columns;
  std::map<std::string, std::size_t> index;  // column -> position
  std::unique_ptr<OutputFile> file;
  std::uint64_t rows = 0;

  std::vector<exports::Cells> rows_of(const record::McapMessage& m) const {
    if (state) return state->rows(Duration(static_cast<std::int64_t>(m.log_time)), m.data);
    return messages->rows(m.data);
  }
};

int log_to_csv(const ToCsvArgs& a) {
  std::map<std::uint16_t, record::McapSummary::Schema> schemas;
  std::map<std::uint16_t, Table> tables;
  std::vector<bool> matched(a.topics.size(), false);
  std::vector<std::string> all_topics;
  auto on_channel = [&](const record::McapSummary::Channel& ch) {
    if (tables.count(ch.id)) return;
    all_topics.push_back(ch.topic);
    bool take = a.topics.empty();
    for (std::size_t i = 0; i < a.topics.size(); ++i) {
      if (::fnmatch(a.topics[i].c_str(), ch.topic.c_str(), 0) == 0) take = matched[i] = true;
    }
    if (!take) return;
    Table t;
    t.topic = ch.topic;
    if (ch.topic == record::kStateTopic) {
      t.state = std::make_unique<record::StateTable>(ch, a.file);
    } else {
      const auto it = schemas.find(ch.schema);
      const record::McapSummary::Schema none;
      const auto& sc = it == schemas.end() ? none : it->second;
      t.messages = std::make_unique<exports::MessageTable>(ch.topic, sc.name, sc.encoding, sc.data,
                                                           ch.encoding);
    }
    tables.emplace(ch.id, std::move(t));
  };
  auto on_schema = [&](const record::McapSummary::Schema& s) { schemas[s.id] = s; };
  // Two passes: the columns of every message first (a CSV's header comes before its rows), then
  // the rows.
  bool complete = true;
  try {
    complete = record::read_messages(
        a.file, on_channel,
        [&](const record::McapMessage& m) {
          auto it = tables.find(m.channel);
          if (it == tables.end()) return;
          Table& t = it->second;
          for (const auto& row : t.rows_of(m)) {
            for (const auto& [column, value] : row) {
              if (t.index.emplace(column, t.columns.size()).second) t.columns.push_back(column);
            }
          }
        },
        /*allow_truncated=*/true, on_schema);
  } catch (const Error& e) {
    throw UsageError(e.what());  // unreadable input: exit 2
  }
  for (std::size_t i = 0; i < a.topics.size(); ++i) {
    if (matched[i]) continue;
    std::string list;
    for (const auto& t : all_topics) list += (list.empty() ? "" : ", ") + t;
    throw UsageError("--topic", fmt::format("'{}' matches no channel of {}; its channels are: {}",
                                            a.topics[i], a.file, list));
  }
  if (!complete) {
    spdlog::warn("{}: the file ends before its Data End (a run that was killed?): its complete "
                 "chunks are written",
                 a.file);
  }
  // Where: OUT.csv for one channel, else a folder (default: the recording's name without .mcap).
  namespace fs = std::filesystem;
  fs::path out = a.out;
  if (out.empty()) out = fs::path(a.file).replace_extension("");
  const bool one_file = out.extension() == ".csv";
  if (one_file && tables.size() != 1) {
    throw UsageError("-o", fmt::format("{} is one CSV file, and {} are chosen (--topic picks one)",
                                       out.string(), counted(tables.size(), "channel")));
  }
  if (!one_file) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec || !fs::is_directory(out)) {
      throw UsageError("-o", fmt::format("cannot make the folder {}: {}", out.string(),
                                         ec ? ec.message() : "a file of that name exists"));
    }
  }
  for (auto& [id, t] : tables) {
    const fs::path path = one_file ? out : out / csv_name(t.topic);
    t.file = std::make_unique<OutputFile>(path, "the CSV of " + t.topic);
    std::string header = "log_time";
    for (const auto& c : t.columns) header += "," + physics::csv_field(c);
    header += '\n';
    t.file->write(header);
    t.file->end_record(/*row=*/false);
  }
  std::vector<std::string> cells;
  record::read_messages(
      a.file, [](const record::McapSummary::Channel&) {},
      [&](const record::McapMessage& m) {
        auto it = tables.find(m.channel);
        if (it == tables.end()) return;
        Table& t = it->second;
        const std::string time = exact_seconds(Duration(static_cast<std::int64_t>(m.log_time)));
        for (const auto& row : t.rows_of(m)) {
          cells.assign(t.columns.size(), "");
          for (auto& [column, value] : row) cells[t.index.at(column)] = physics::csv_field(value);
          std::string line = time;
          for (const auto& c : cells) (line += ',') += c;
          line += '\n';
          t.file->write(line);
          t.file->end_record();
          ++t.rows;
        }
      },
      /*allow_truncated=*/true);
  for (auto& [id, t] : tables) {
    t.file->flush();
    std::printf("%-40s %10llu rows  %s\n", t.topic.c_str(),
                static_cast<unsigned long long>(t.rows), t.file->path().c_str());
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

  auto args = std::make_shared<ToCsvArgs>();
  auto* csv = log->add_subcommand(
      "to-csv",
      "One CSV file per channel of a recording (or the channels --topic picks): sim time first, "
      "then the message's fields flattened (src/record/README.md)");
  csv->add_option("file", args->file, "MCAP file")->required()->check(CLI::ExistingFile);
  csv->add_option("--topic", args->topics,
                  "Only the channels whose topic matches one of these glob patterns; each must "
                  "match a channel")
      ->type_name("GLOB ...");
  csv->add_option("-o,--output", args->out,
                  "The folder for the CSV files (created; default: FILE without .mcap), or a "
                  "FILE.csv when one channel is chosen");
  csv->callback([&selected, args] { selected = [args] { return log_to_csv(*args); }; });
}

}  // namespace kestrel::cli
