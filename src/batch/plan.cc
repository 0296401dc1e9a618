// Batch plans: YAML (yaml-cpp) into a Plan, every error with file:line:column; run k's values.
#include "kestrel/batch/plan.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <tuple>

#include "kestrel/core/text.h"
#include "kestrel/core/time.h"
#include "sensors/noise/noise.h"

namespace kestrel::batch {
namespace {

std::string at(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return file;
  return fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}

std::string describe(const YAML::Node& n) {
  if (!n || n.IsNull()) return "nothing";
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return fmt::format("a list of {}", n.size());
  return "a mapping";
}

struct Reader {
  std::string file;

  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const {
    throw Error(at(file, n.Mark()), message);
  }

  double number(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{}: expected a number, found {}", what, describe(n)));
    const std::string& s = n.Scalar();
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
      fail(n, fmt::format("{}: expected a finite number, found '{}'", what, s));
    }
    return v;
  }

  std::uint64_t count(const YAML::Node& n, const std::string& what, std::uint64_t min) const {
    if (!n.IsScalar()) fail(n, fmt::format("{}: expected an integer, found {}", what, describe(n)));
    const std::string& s = n.Scalar();
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < min) {
      fail(n, fmt::format("{}: expected an integer >= {}, found '{}'", what, min, s));
    }
    return v;
  }

  // true or false, written so (not YAML 1.1's yes/on/1).
  bool flag(const YAML::Node& n, const std::string& what) const {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) return n.Scalar() == "true";
    fail(n, fmt::format("{}: expected true or false, found {}", what, describe(n)));
  }

  // [a, b]: exactly two numbers.
  std::pair<double, double> pair(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence() || n.size() != 2) {
      fail(n, fmt::format("{}: expected [a, b], found {}", what, describe(n)));
    }
    return {number(n[0], what), number(n[1], what)};
  }

  Distribution distribution(const YAML::Node& n, const std::string& key) const {
    static const char* kForms =
        "a list [v0, v1, ...], {range: [first, last, step]}, {uniform: [a, b]} or "
        "{normal: [mean, stddev]}";
    Distribution d;
    if (n.IsSequence()) {
      if (n.size() == 0) fail(n, key + ": the list is empty");
      for (const auto& v : n) d.values.push_back(number(v, key));
      return d;
    }
    if (!n.IsMap() || n.size() != 1) {
      fail(n, fmt::format("{}: expected {}, found {}", key, kForms, describe(n)));
    }
    const auto it = n.begin();
    const std::string form = it->first.Scalar();
    const YAML::Node arg = it->second;  // a copy: the iterator's value is a temporary
    if (form == "uniform") {
      d.kind = Distribution::Kind::kUniform;
      std::tie(d.a, d.b) = pair(arg, key + ".uniform");
      if (!(d.a <= d.b))
        fail(arg, fmt::format("{}.uniform: a <= b needed, found [{}, {}]", key, d.a, d.b));
    } else if (form == "normal") {
      d.kind = Distribution::Kind::kNormal;
      std::tie(d.a, d.b) = pair(arg, key + ".normal");
      if (!(d.b >= 0)) fail(arg, fmt::format("{}.normal: stddev >= 0 needed, found {}", key, d.b));
    } else if (form == "range") {
      if (!arg.IsSequence() || arg.size() != 3) {
        fail(arg,
             fmt::format("{}.range: expected [first, last, step], found {}", key, describe(arg)));
      }
      const double first = number(arg[0], key), last = number(arg[1], key),
                   step = number(arg[2], key);
      if (!(step > 0) || last < first) {
        fail(arg, fmt::format("{}.range: first <= last and step > 0 needed, found [{}, {}, {}]",
                              key, first, last, step));
      }
      const double n_steps = std::floor((last - first) / step * (1 + 1e-12));
      if (n_steps > 1e6) fail(arg, fmt::format("{}.range: {} values, at most 1e6", key, n_steps));
      for (std::uint64_t i = 0; i <= static_cast<std::uint64_t>(n_steps); ++i) {
        d.values.push_back(first + step * static_cast<double>(i));
      }
    } else {
      const std::vector<std::string> forms{"uniform", "normal", "range"};
      const std::string meant = closest_match(form, forms);
      fail(it->first, fmt::format("{}: unknown form '{}'{}; expected {}", key, form,
                                  meant.empty() ? "" : " (did you mean '" + meant + "'?)", kForms));
    }
    return d;
  }
};

}  // namespace

namespace {

// "A/B/C" split at '/', or nothing if a name is empty.
std::optional<std::vector<std::string>> names_of(std::string_view path) {
  std::vector<std::string> names;
  for (std::size_t start = 0;;) {
    const auto slash = path.find('/', start);
    const auto name =
        path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (name.empty()) return std::nullopt;
    names.emplace_back(name);
    if (slash == std::string_view::npos) return names;
    start = slash + 1;
  }
}

}  // namespace

std::span<const std::string_view> pose_components() {
  static constexpr std::string_view kComponents[] = {"x", "y", "z", "roll", "pitch", "yaw"};
  return kComponents;
}

std::optional<PluginKey> parse_plugin_key(std::string_view key) {
  if (!key.starts_with("plugin/")) return std::nullopt;
  auto names = names_of(key.substr(7));
  if (!names || names->size() < 3) return std::nullopt;
  PluginKey k;
  k.param = names->back();
  names->pop_back();
  const std::string& n = names->back();
  if (n == "*" || std::all_of(n.begin(), n.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    k.index = n;
    names->pop_back();
    if (names->size() < 2) return std::nullopt;
  }
  k.plugin = names->back();
  names->pop_back();
  k.model = std::move(*names);
  return k;
}

void check_key(const std::string& key, const std::string& where) {
  if (key == "wind_speed" || key == "wind_direction") return;
  if (key.starts_with("plugin/")) {
    if (parse_plugin_key(key)) return;
    throw Error(where, "'" + key +
                           "': expected plugin/MODEL/PLUGIN/PARAM or plugin/MODEL/PLUGIN/N/PARAM "
                           "(N: which of the model's PLUGIN plugins, from 0, or * for all; "
                           "nested models: plugin/A/B/PLUGIN/PARAM)");
  }
  if (key.starts_with("fault/")) {
    // N/ATTR: the N-th <fault> of the world's FaultInjection plugin, one of its attributes.
    const auto names = names_of(std::string_view(key).substr(6));
    if (names && names->size() == 2 &&
        std::all_of(names->front().begin(), names->front().end(),
                    [](char ch) { return ch >= '0' && ch <= '9'; })) {
      return;
    }
    throw Error(where, "'" + key +
                           "': expected fault/N/ATTR (N: the world's FaultInjection <fault> from "
                           "0, ATTR: one of its attributes, e.g. fault/0/time)");
  }
  if (key.starts_with("sensor/")) {
    // MODEL[/NESTED...]/LINK/SENSOR/BLOCK/.../ELEMENT: the sensor is found in the world (apply),
    // the rest is an element path of at least two names below <sensor>.
    const auto names = names_of(std::string_view(key).substr(7));
    if (names && names->size() >= 5) return;
    throw Error(where, "'" + key +
                           "': expected sensor/MODEL/LINK/SENSOR/PATH, PATH the elements from "
                           "the sensor's type block to the number (e.g. "
                           "sensor/x500/base_link/imu_sensor/imu/angular_velocity/*/noise/stddev;"
                           " * for every child)");
  }
  if (key.starts_with("mass/")) {
    // MODEL[/NESTED...]/LINK: at least two non-empty names.
    const auto names = names_of(std::string_view(key).substr(5));
    if (names && names->size() >= 2) return;
    throw Error(where, "'" + key + "': expected mass/MODEL/LINK (nested models: mass/A/B/LINK)");
  }
  if (key.starts_with("pose/")) {
    // MODEL[/NESTED...]/COMPONENT.
    const auto names = names_of(std::string_view(key).substr(5));
    if (names && names->size() >= 2) {
      const auto c = pose_components();
      if (std::find(c.begin(), c.end(), names->back()) != c.end()) return;
    }
    throw Error(where, "'" + key +
                           "': expected pose/MODEL/C with C one of x, y, z [m], roll, pitch, yaw "
                           "[deg] (nested models: pose/A/B/C)");
  }
  const std::vector<std::string> keys{"wind_speed",
                                      "wind_direction",
                                      "mass/MODEL/LINK",
                                      "pose/MODEL/x",
                                      "plugin/MODEL/PLUGIN/PARAM",
                                      "fault/N/ATTR",
                                      "sensor/MODEL/LINK/SENSOR/PATH"};
  const std::string meant = closest_match(key, keys);
  throw Error(where, fmt::format("unknown parameter '{}'{}; expected wind_speed [m/s], "
                                 "wind_direction [deg], mass/MODEL/LINK [kg], "
                                 "pose/MODEL/{{x,y,z,roll,pitch,yaw}} [m, deg], "
                                 "plugin/MODEL/PLUGIN[/N]/PARAM, fault/N/ATTR or "
                                 "sensor/MODEL/LINK/SENSOR/PATH",
                                 key, meant.empty() ? "" : " (did you mean '" + meant + "'?)"));
}

Plan parse_plan(const std::string& text, const std::string& file) {
  Reader rd{file};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(at(file, e.mark), "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    throw Error(at(file, root.Mark()),
                "expected a mapping with world, runs, seed and vary, found " + describe(root));
  }
  Plan p;
  p.file = file;
  p.text = text;
  static const std::vector<std::string> kKeys{"world",   "runs",      "seed",   "duration",
                                              "timeout", "truth_csv", "record", "grid",
                                              "vary"};
  std::set<std::string> seen;
  YAML::Node runs_node;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      const std::string meant = closest_match(key, kKeys);
      rd.fail(kv.first, fmt::format("unknown key '{}'{}; expected one of world, runs, seed, "
                                    "duration, timeout, truth_csv, record, grid, vary",
                                    key, meant.empty() ? "" : " (did you mean '" + meant + "'?)"));
    }
    if (!seen.insert(key).second) rd.fail(kv.first, "'" + key + "' given twice");
    const YAML::Node v = kv.second;
    if (key == "world") {
      if (!v.IsScalar() || v.Scalar().empty())
        rd.fail(v, "world: expected a file, found " + describe(v));
      p.world = v.Scalar();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p.world, ec)) {
        rd.fail(v, "world: no file '" + p.world.string() + "' (relative to the working directory " +
                       std::filesystem::current_path().string() + ")");
      }
    } else if (key == "runs") {
      p.runs = rd.count(v, "runs", 1);
      runs_node = v;
    } else if (key == "seed") {
      p.seed = rd.count(v, "seed", 0);
    } else if (key == "duration") {
      // As `kestrel run --duration` (the replay command) takes it: a time the clock can hold.
      p.duration_s = rd.number(v, "duration");
      if (!checked_seconds(*p.duration_s, true)) {
        rd.fail(v, fmt::format("duration: expected a time {}, found {} s", seconds_range(true),
                               *p.duration_s));
      }
    } else if (key == "timeout") {
      // A wall-clock limit on steady_clock's integer nanoseconds: it must not overflow them.
      p.timeout_s = rd.number(v, "timeout");
      if (!checked_seconds(p.timeout_s, true)) {
        rd.fail(v, fmt::format("timeout: expected a time {}, found {} s", seconds_range(true),
                               p.timeout_s));
      }
    } else if (key == "truth_csv" || key == "record") {
      (key == "record" ? p.record : p.truth_csv) = rd.flag(v, key);
    } else {  // grid or vary
      if (v.IsNull()) continue;
      if (!v.IsMap()) {
        rd.fail(v, key + ": expected a mapping of parameters, found " + describe(v));
      }
      std::set<std::string> keys;
      for (const auto& pv : v) {
        Parameter par;
        par.key = pv.first.Scalar();
        par.where = at(file, pv.first.Mark());
        check_key(par.key, par.where);
        if (!keys.insert(par.key).second) rd.fail(pv.first, "'" + par.key + "' given twice");
        par.dist = rd.distribution(pv.second, par.key);
        if (key == "grid" && par.dist.kind != Distribution::Kind::kList) {
          rd.fail(pv.second, fmt::format("grid: {}: a grid takes a list [v0, v1, ...] or "
                                         "{{range: [first, last, step]}}, found a {} distribution "
                                         "(draw it under vary)",
                                         par.key,
                                         par.dist.kind == Distribution::Kind::kUniform ? "uniform"
                                                                                       : "normal"));
        }
        (key == "grid" ? p.grid : p.vary).push_back(std::move(par));
      }
    }
  }
  if (!seen.count("world")) throw Error(at(file, root.Mark()), "missing 'world'");
  // A parameter is in the grid or varied, not both.
  for (const Parameter& g : p.grid) {
    for (const Parameter& v : p.vary) {
      if (g.key == v.key) {
        throw Error(v.where, fmt::format("'{}' is both in vary and in grid (at {}): give it in "
                                         "one of them",
                                         v.key, g.where));
      }
    }
  }
  // The grid's combinations: the product of its lists' sizes.
  std::string sizes;
  for (const Parameter& g : p.grid) {
    const std::uint64_t n = g.dist.values.size();
    if (p.combinations > kMaxCombinations / n) {
      throw Error(g.where, fmt::format("grid: more than {} combinations", kMaxCombinations));
    }
    p.combinations *= n;
    sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " x ", g.key, n);
  }
  if (!seen.count("runs")) {
    if (p.grid.empty()) {
      throw Error(at(file, root.Mark()),
                  "missing 'runs' (it may be left out only with a grid: one run per combination)");
    }
    p.runs = p.combinations;
  } else if (p.runs % p.combinations != 0) {
    rd.fail(runs_node, fmt::format("runs: {} is not a multiple of the grid's {} combinations "
                                   "({}): each combination must run equally often",
                                   p.runs, p.combinations, sizes));
  }
  return p;
}

Plan load_plan(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file + ": cannot read the plan file");
  std::ostringstream s;
  s << in.rdbuf();
  return parse_plan(s.str(), file);
}

RunSpec draw(const Plan& plan, std::uint64_t k) {
  KESTREL_DEMAND(k < plan.runs);
  RunSpec run;
  run.run_id = k;
  const std::string scope = fmt::format("run/{}", k);
  run.seed = sensors::derive_seed(plan.seed, scope, "seed") >> 1;
  // Combination k mod G of the grid, the last parameter varying fastest.
  std::uint64_t c = k % plan.combinations;
  std::vector<double> grid(plan.grid.size());
  for (std::size_t i = plan.grid.size(); i-- > 0;) {
    const auto& values = plan.grid[i].dist.values;
    grid[i] = values[c % values.size()];
    c /= values.size();
  }
  for (std::size_t i = 0; i < plan.grid.size(); ++i) {
    run.values.push_back({plan.grid[i].key, grid[i], plan.grid[i].where});
  }
  for (const Parameter& par : plan.vary) {
    const Distribution& d = par.dist;
    double v = 0;
    if (d.kind == Distribution::Kind::kList) {
      v = d.values[k % d.values.size()];
    } else {
      sensors::Rng rng(sensors::derive_seed(plan.seed, scope, par.key));
      v = d.kind == Distribution::Kind::kUniform ? d.a + (d.b - d.a) * rng.uniform()
                                                 : d.a + d.b * rng.normal();
    }
    run.values.push_back({par.key, v, par.where});
  }
  return run;
}

std::string params_json(const RunSpec& run) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Value& v : run.values) j[v.key] = v.value;
  return j.dump();
}

Value parse_set(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw Error("--set", "expected KEY=VALUE (e.g. wind_speed=2.5), found '" + text + "'");
  }
  Value v;
  v.key = text.substr(0, eq);
  v.where = "--set " + v.key;
  check_key(v.key, "--set");
  const std::string num = text.substr(eq + 1);
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v.value);
  if (num.empty() || ec != std::errc() || end != num.data() + num.size() ||
      !std::isfinite(v.value)) {
    throw Error("--set", "'" + v.key + "': expected a finite number, found '" + num + "'");
  }
  return v;
}

}  // namespace kestrel::batch
