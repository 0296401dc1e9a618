// `kestrel batch report DIR [-o FILE]`: success rate, per-metric percentiles and histograms
// (inline SVG), the worst runs with their parameters and the command replaying each. No script,
// no external resource: the file opens offline.
#include "cli/batch_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "kestrel/batch/results.h"
#include "kestrel/core/text.h"

namespace kestrel::cli {
namespace {

namespace fs = std::filesystem;
using batch::RunResult;

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += ch;
    }
  }
  return o;
}

// A shell word: as is when it is plain, else in single quotes.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:+,@") == std::string::npos) {
    return s;
  }
  std::string o = "'";
  for (char ch : s) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return o + "'";
}

struct Metric {
  const char* column;
  const char* label;
  std::optional<double> RunResult::*field;
};
const Metric kMetrics[] = {
    {"max_tracking_error_m", "max tracking error [m]", &RunResult::max_tracking_error_m},
    {"energy_J", "energy used [J]", &RunResult::energy_J},
    {"min_battery", "lowest battery state of charge", &RunResult::min_battery},
    {"final_x_m", "final x [m]", &RunResult::final_x_m},
    {"final_y_m", "final y [m]", &RunResult::final_y_m},
    {"final_z_m", "final z [m]", &RunResult::final_z_m},
    {"sim_time_s", "sim time [s]", &RunResult::sim_time_s},
    {"rtf", "real-time factor", &RunResult::rtf},
};

// Percentile p (0..100) of sorted values, linear between closest ranks.
double percentile(const std::vector<double>& v, double p) {
  const double pos = p / 100 * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

std::string histogram(const std::vector<double>& v) {
  constexpr int kBins = 20, kW = 400, kH = 100;
  const double lo = v.front(), hi = v.back();
  std::vector<int> bins(kBins, 0);
  for (double x : v) {
    int b = hi > lo ? static_cast<int>((x - lo) / (hi - lo) * kBins) : 0;
    ++bins[std::clamp(b, 0, kBins - 1)];
  }
  const int top = *std::max_element(bins.begin(), bins.end());
  std::string s = fmt::format("<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
                              kW, kH + 16, kW, kH + 16);
  for (int i = 0; i < kBins; ++i) {
    const double h = top ? static_cast<double>(bins[i]) / top * kH : 0;
    s += fmt::format(
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" class=\"bar\"><title>{}</title>"
        "</rect>",
        i * kW / kBins + 1, kH - h, kW / kBins - 2, h, bins[i]);
  }
  s += fmt::format(
      "<text x=\"0\" y=\"{}\">{:.4g}</text><text x=\"{}\" y=\"{}\" "
      "text-anchor=\"end\">{:.4g}</text></svg>",
      kH + 14, lo, kW, kH + 14, hi);
  return s;
}

std::string replay_command(const std::string& prefix, const RunResult& r) {
  std::string cmd = prefix + fmt::format(" --seed {}", r.seed);
  const auto params = nlohmann::ordered_json::parse(r.params);
  for (const auto& [k, v] : params.items()) cmd += " --set " + shell_word(k + "=" + v.dump());
  return cmd;
}

// The run's recording (a plan with `record: true`): DIR/runs/run-K.mcap, or a shard's
// DIR/shard-I-of-N/runs/run-K.mcap (the first shard folder by name that has one, whatever the
// order the file system lists them in); empty if there is none.
std::string recording_of(const fs::path& dir, std::uint64_t run_id) {
  const std::string name = fmt::format("run-{}.mcap", run_id);
  std::error_code ec;
  if (fs::is_regular_file(dir / "runs" / name, ec)) return (dir / "runs" / name).string();
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().starts_with("shard-")) shards.push_back(e.path());
  }
  std::sort(shards.begin(), shards.end());
  for (const auto& s : shards) {
    if (fs::is_regular_file(s / "runs" / name, ec)) return (s / "runs" / name).string();
  }
  return {};
}

struct ReportArgs {
  std::string dir;
  std::string out;
  std::size_t worst = 10;
};

int run_report(const ReportArgs& a) {
  const fs::path file = fs::path(a.dir) / "results.sqlite";
  if (!fs::is_regular_file(file)) throw UsageError("batch report: no " + file.string());
  batch::Database db(file, std::nullopt, std::nullopt);
  const auto rows = db.rows();
  if (rows.empty()) throw UsageError("batch report: " + file.string() + " holds no runs");
  const std::string out = a.out.empty() ? (fs::path(a.dir) / "report.html").string() : a.out;
  std::map<std::string, std::size_t> outcomes;
  for (const auto& r : rows) ++outcomes[r.outcome];
  const double rate = static_cast<double>(outcomes["completed"]) / static_cast<double>(rows.size());

  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kestrel batch "
       "report</title><style>body{font:14px sans-serif;margin:2em;max-width:70em}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
       "text-align:right}td.l,th.l{text-align:left}code{font-size:12px}.bar{fill:#4a7ab0}"
       "svg text{font-size:11px}.bad{color:#b00}</style></head><body>\n";
  h += fmt::format("<h1>kestrel batch report</h1><p>{} ({}): {} runs</p>\n", esc(db.plan_file()),
                   esc(file.string()), rows.size());
  // The rates and percentiles below are over the rows present: say so when the plan has more.
  if (const auto missing = db.missing(); missing && !missing->empty()) {
    h += fmt::format(
        "<p class=\"bad\">{} of the plan's {} runs are missing (not run yet, or a shard not "
        "merged): {}. Every figure below is over the {} present.</p>\n",
        missing->size(), esc(db.meta("runs")), esc(batch::id_list(*missing)), rows.size());
  }
  h += fmt::format("<h2>Success rate: {:.1f} %</h2><table><tr>", 100 * rate);
  for (const char* o : batch::kOutcomes) h += fmt::format("<th>{}</th>", o);
  h += "</tr><tr>";
  for (const char* o : batch::kOutcomes) h += fmt::format("<td>{}</td>", outcomes[o]);
  h += "</tr></table>\n<h2>Metrics</h2><table><tr><th class=\"l\">metric</th><th>runs</th>"
       "<th>min</th><th>p5</th><th>p50</th><th>p95</th><th>max</th><th>mean</th>"
       "<th class=\"l\">histogram</th></tr>\n";
  for (const Metric& m : kMetrics) {
    std::vector<double> v;
    for (const auto& r : rows) {
      if (r.*m.field) v.push_back(*(r.*m.field));
    }
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    double mean = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    h += fmt::format("<tr><td class=\"l\">{} <code>{}</code></td><td>{}</td>", m.label, m.column,
                     v.size());
    for (double p : {0.0, 5.0, 50.0, 95.0, 100.0})
      h += fmt::format("<td>{:.4g}</td>", percentile(v, p));
    h += fmt::format("<td>{:.4g}</td><td class=\"l\">{}</td></tr>\n", mean, histogram(v));
  }
  h += "</table>\n";
  // Worst first: not completed, then the largest tracking error.
  std::vector<const RunResult*> order;
  for (const auto& r : rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const RunResult* x, const RunResult* y) {
    const bool bx = x->outcome != "completed", by = y->outcome != "completed";
    if (bx != by) return bx;
    return x->max_tracking_error_m.value_or(INFINITY) > y->max_tracking_error_m.value_or(INFINITY);
  });
  order.resize(std::min(order.size(), a.worst));
  const std::string prefix = db.meta("replay");
  h += fmt::format(
      "<h2>The {} worst runs</h2><p>Not completed first, then by maximum tracking "
      "error. Each command replays its run.</p><table><tr><th>run</th>"
      "<th class=\"l\">outcome</th><th class=\"l\">parameters</th>"
      "<th>max tracking error [m]</th><th class=\"l\">why / replay</th></tr>\n",
      order.size());
  for (const RunResult* r : order) {
    h += fmt::format(
        "<tr><td>{}</td><td class=\"l{}\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td>"
        "<td class=\"l\">{}{}<code>{}</code>{}</td></tr>\n",
        r->run_id, r->outcome == "completed" ? "" : " bad", esc(r->outcome), esc(r->params),
        r->max_tracking_error_m ? fmt::format("{:.4g}", *r->max_tracking_error_m) : "",
        esc(r->message), r->message.empty() ? "" : "<br>",
        esc(prefix.empty() ? "(no replay command recorded)" : replay_command(prefix, *r)),
        [&] {
          const std::string rec = recording_of(a.dir, r->run_id);
          return rec.empty() ? std::string()
                             : "<br><code>kestrel replay " + esc(shell_word(rec)) + "</code>";
        }());
  }
  h += "</table></body></html>\n";
  std::ofstream f(out, std::ios::binary);
  f << h;
  f.close();
  if (!f) throw Error(out + ": cannot write the report");
  std::printf("kestrel batch report: %s runs, %.1f %% completed: %s\n",
              std::to_string(rows.size()).c_str(), 100 * rate, out.c_str());
  return 0;
}

}  // namespace

void add_batch_report_command(CLI::App& batch, std::function<int()>& selected) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = batch.add_subcommand("report", "Write an HTML report of DIR/results.sqlite");
  cmd->add_option("dir", args->dir, "The batch's --out folder")->required();
  cmd->add_option("-o,--output", args->out, "The HTML file (default DIR/report.html)")
      ->check(output_file());
  cmd->add_option("--worst", args->worst, "How many of the worst runs to list (default 10)")
      ->check(CLI::Range(1, 100000));
  cmd->callback([&selected, args] { selected = [args] { return run_report(*args); }; });
}

}  // namespace kestrel::cli
