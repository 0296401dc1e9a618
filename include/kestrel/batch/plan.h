#pragma once
/// @file Batch plans (docs/batch.md): a YAML file naming a world, a number of runs, a base seed
/// and what to vary per run. Run k's seed and values depend only on (plan, k): lists and ranges
/// are indexed by k, distributions are drawn from a stream seeded by (base seed, k, key) with the
/// one RNG scheme (sensors::Rng). The only door to yaml-cpp.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/error.h"

namespace kestrel::batch {

/// How one parameter's value is chosen for run k.
struct Distribution {
  enum class Kind { kList, kUniform, kNormal };
  Kind kind = Kind::kList;
  std::vector<double> values;  ///< kList: run k takes values[k mod size] (a range is expanded)
  double a = 0, b = 0;         ///< kUniform: [a, b); kNormal: mean a, standard deviation b
};

/// One `grid:` or `vary:` entry.
struct Parameter {
  std::string key;  ///< "wind_speed", "wind_direction", "mass/MODEL/LINK", "pose/MODEL/x", ...
  Distribution dist;
  std::string where;  ///< "plan.yaml:5" of the key
};

struct Plan {
  std::string file;             ///< the plan file as named
  std::string text;             ///< its contents (the database keeps it: resume and merge compare)
  std::filesystem::path world;  ///< relative to the working directory
  std::uint64_t runs = 0;       ///< run ids 0 .. runs-1 (a multiple of `combinations`)
  std::uint64_t seed = 0;       ///< base seed
  std::optional<double> duration_s;  ///< sim-time limit of each run [s] (none: the world's end)
  double timeout_s = 600;            ///< wall-clock limit of each run [s]: beyond it, `timed_out`
  bool truth_csv = false;  ///< each run writes runs/run-K.csv as `kestrel run --truth-csv` does
  bool record = false;     ///< each run records runs/run-K.mcap as `kestrel run --record` does
  /// Lists and ranges whose cartesian product defines the runs: run k takes combination
  /// k mod `combinations`, the last parameter varying fastest (plan order).
  std::vector<Parameter> grid;
  std::uint64_t combinations = 1;  ///< product of the grid's list sizes (1: no grid)
  std::vector<Parameter> vary;     ///< in plan order; none of them in the grid
};

/// The most combinations a grid may have.
inline constexpr std::uint64_t kMaxCombinations = 1'000'000'000;

/// A drawn value, ready to be applied to a world (batch/apply.h).
struct Value {
  std::string key;
  double value = 0;
  std::string where;  ///< the plan's key ("plan.yaml:5") or "--set"
};

/// Run k of a plan: its id, world seed and values (the grid's, then vary's, each in plan order).
struct RunSpec {
  std::uint64_t run_id = 0;
  std::uint64_t seed = 0;  ///< below 2^63 (an SQLite INTEGER)
  std::vector<Value> values;
};

/// Parses plan text; `file` names it in errors ("file:line:column: ...").
/// @throws Error for anything wrong: YAML syntax, unknown or missing keys, bad numbers, an
///         unknown parameter, a world file that does not exist, a distribution in the grid, a
///         parameter in both grid and vary, runs not a multiple of the grid's combinations.
Plan parse_plan(const std::string& text, const std::string& file);
/// @throws Error if the file cannot be read, or as parse_plan.
Plan load_plan(const std::string& file);

/// Run k's seed and values: grid combination k mod G (index i_j of parameter j, with sizes n_j:
/// k mod G = ((i_0 n_1 + i_1) n_2 + i_2) ...), then vary's values. @pre k < plan.runs
RunSpec draw(const Plan& plan, std::uint64_t k);

/// {"wind_speed": 1.5, ...} in plan order, numbers exactly as drawn (round-trip).
std::string params_json(const RunSpec& run);

/// The last name of a pose/MODEL/C key: x, y, z [m, world ENU], roll, pitch, yaw [deg].
std::span<const std::string_view> pose_components();

/// A plugin/MODEL[/NESTED...]/PLUGIN[/N]/PARAM key in its parts.
struct PluginKey {
  std::vector<std::string> model;  ///< the model's path: {"x3"}, nested {"a", "b"}
  std::string plugin;              ///< built-in short name or the <plugin name> as written
  std::string index;               ///< "" (the model's only such plugin), "0", "1", ... or "*"
  std::string param;               ///< the <plugin>'s child element
};
/// The parts of a plugin/... key, or nothing if it is not of that form (the name before PARAM
/// is N when it is digits or '*').
std::optional<PluginKey> parse_plugin_key(std::string_view key);

/// The keys a plan may vary (also `kestrel run --set`): checks the form of `key`.
/// @throws Error(where, ...) naming the accepted forms.
void check_key(const std::string& key, const std::string& where);

/// "KEY=VALUE" of `kestrel run --set`. @throws Error naming what is wrong.
Value parse_set(const std::string& text);

}  // namespace kestrel::batch
