// The results database (SQLite C API) and the JSON a run's child process sends its row in.
#include "kestrel/batch/results.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <charconv>
#include <nlohmann/json.hpp>

namespace kestrel::batch {
namespace {

// The columns of `runs` after run_id, outcome, seed, params; in table order. A column's field
// is reached through a member pointer of one of two types.
struct IntColumn {
  const char* name;
  std::optional<std::int64_t> RunResult::*field;
};
struct RealColumn {
  const char* name;
  std::optional<double> RunResult::*field;
};
constexpr IntColumn kMissionCompleted{"mission_completed", &RunResult::mission_completed};
constexpr RealColumn kReals[] = {
    {"max_tracking_error_m", &RunResult::max_tracking_error_m},
    {"energy_J", &RunResult::energy_J},
    {"min_battery", &RunResult::min_battery},
    {"final_x_m", &RunResult::final_x_m},
    {"final_y_m", &RunResult::final_y_m},
    {"final_z_m", &RunResult::final_z_m},
};
constexpr IntColumn kFaults{"faults_applied", &RunResult::faults_applied};
constexpr RealColumn kSimTime{"sim_time_s", &RunResult::sim_time_s};

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS batch (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY,
  outcome TEXT NOT NULL CHECK (outcome IN ('completed', 'failed', 'crashed', 'timed_out')),
  seed INTEGER NOT NULL,
  params TEXT NOT NULL,
  mission_completed INTEGER,
  max_tracking_error_m REAL,
  energy_J REAL,
  min_battery REAL,
  final_x_m REAL,
  final_y_m REAL,
  final_z_m REAL,
  faults_applied INTEGER,
  sim_time_s REAL,
  wall_time_s REAL NOT NULL,
  rtf REAL,
  message TEXT NOT NULL
);)";

constexpr const char* kColumns =
    "run_id, outcome, seed, params, mission_completed, max_tracking_error_m, energy_J, "
    "min_battery, final_x_m, final_y_m, final_z_m, faults_applied, sim_time_s, wall_time_s, rtf, "
    "message";

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(s_); }
  explicit operator bool() const { return s_ != nullptr; }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

void bind(sqlite3_stmt* s, int i, const std::optional<double>& v) {
  v ? sqlite3_bind_double(s, i, *v) : sqlite3_bind_null(s, i);
}
void bind(sqlite3_stmt* s, int i, const std::optional<std::int64_t>& v) {
  v ? sqlite3_bind_int64(s, i, *v) : sqlite3_bind_null(s, i);
}
void bind(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
std::optional<double> real(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, i);
}
std::optional<std::int64_t> integer(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, i);
}
std::string text(sqlite3_stmt* s, int i) {
  const auto* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

template <class T>
void put(nlohmann::json& j, const char* name, const std::optional<T>& v) {
  j[name] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <class T>
void take(const nlohmann::json& j, const char* name, std::optional<T>& v) {
  const auto& x = j.at(name);
  v = x.is_null() ? std::nullopt : std::optional<T>(x.get<T>());
}

}  // namespace

bool RunResult::same_outcome(const RunResult& o) const {
  bool same = run_id == o.run_id && outcome == o.outcome && seed == o.seed && params == o.params &&
              message == o.message && mission_completed == o.mission_completed &&
              faults_applied == o.faults_applied && sim_time_s == o.sim_time_s;
  for (const auto& c : kReals) same = same && this->*c.field == o.*c.field;
  return same;
}

std::string RunResult::to_json() const {
  nlohmann::json j;
  j["run_id"] = run_id;
  j["outcome"] = outcome;
  j["seed"] = seed;
  j["params"] = params;
  put(j, kMissionCompleted.name, mission_completed);
  for (const auto& c : kReals) put(j, c.name, this->*c.field);
  put(j, kFaults.name, faults_applied);
  put(j, kSimTime.name, sim_time_s);
  j["wall_time_s"] = wall_time_s;
  put(j, "rtf", rtf);
  j["message"] = message;
  return j.dump();
}

RunResult RunResult::from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    RunResult r;
    r.run_id = j.at("run_id").get<std::uint64_t>();
    r.outcome = j.at("outcome").get<std::string>();
    r.seed = j.at("seed").get<std::uint64_t>();
    r.params = j.at("params").get<std::string>();
    take(j, kMissionCompleted.name, r.mission_completed);
    for (const auto& c : kReals) take(j, c.name, r.*c.field);
    take(j, kFaults.name, r.faults_applied);
    take(j, kSimTime.name, r.sim_time_s);
    r.wall_time_s = j.at("wall_time_s").get<double>();
    take(j, "rtf", r.rtf);
    r.message = j.at("message").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("a run's result is malformed: ") + e.what());
  }
}

Database::Database(const std::filesystem::path& file, const std::optional<std::string>& plan_file,
                   const std::optional<std::string>& plan_text)
    : file_(file) {
  // A constructor that throws runs no destructor: the connection is closed here then (SQLite
  // allocates it even when the open fails).
  try {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      fail("cannot open");
    }
    sqlite3_busy_timeout(db_, 30000);
    exec(kSchema);
    if (plan_text) set_plan(plan_file.value_or(""), *plan_text);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() { sqlite3_close(db_); }

void Database::fail(const std::string& what) const {
  throw Error(file_.string(),
              fmt::format("{}: {}", what, db_ ? sqlite3_errmsg(db_) : "out of memory"));
}

void Database::exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string m = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error(file_.string(), m);
  }
}

std::string Database::meta(const char* key) const {
  Statement s(db_, "SELECT value FROM batch WHERE key = ?");
  if (!s) fail("reading the plan");
  sqlite3_bind_text(s.get(), 1, key, -1, SQLITE_STATIC);
  const int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW) return text(s.get(), 0);
  if (rc != SQLITE_DONE) fail("reading table batch");  // busy, corrupt: never "no plan"
  return "";
}

std::string Database::plan_text() const { return meta("plan"); }
std::string Database::plan_file() const { return meta("plan_file"); }

void Database::set_plan(const std::string& file, const std::string& plan) {
  const std::string have = plan_text();
  if (!have.empty()) {
    if (have != plan) {
      throw Error(file_.string(), "holds the results of another plan (" + plan_file() +
                                      ", not the text of " + file +
                                      "): choose another --out, or delete it to start again");
    }
    return;
  }
  set_meta("plan", plan);
  set_meta("plan_file", file);
}

void Database::set_meta(const char* key, const std::string& value) {
  Statement s(db_, "INSERT OR REPLACE INTO batch (key, value) VALUES (?, ?)");
  if (!s) fail("writing table batch");
  sqlite3_bind_text(s.get(), 1, key, -1, SQLITE_STATIC);
  bind(s.get(), 2, value);
  if (sqlite3_step(s.get()) != SQLITE_DONE) fail("writing table batch");
}

std::set<std::uint64_t> Database::done() const {
  std::set<std::uint64_t> ids;
  Statement s(db_, "SELECT run_id FROM runs");
  if (!s) fail("reading runs");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    ids.insert(static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0)));
  }
  if (rc != SQLITE_DONE) fail("reading runs");
  return ids;
}

std::string id_list(const std::vector<std::uint64_t>& ids) {
  constexpr std::size_t kShown = 20;
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < kShown; ++i) {
    s += (i ? ", " : "") + std::to_string(ids[i]);
  }
  if (ids.size() > kShown) s += fmt::format(" and {} more", ids.size() - kShown);
  return s;
}

std::optional<std::vector<std::uint64_t>> Database::missing() const {
  const std::string runs = meta("runs");
  if (runs.empty()) return std::nullopt;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(runs.data(), runs.data() + runs.size(), n);
  if (ec != std::errc() || end != runs.data() + runs.size()) {
    fail("table batch: runs is '" + runs + "', not a count");
  }
  const auto have = done();
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = 0; k < n; ++k) {
    if (!have.count(k)) out.push_back(k);
  }
  return out;
}

void Database::insert(const RunResult& r) {
  const std::string sql = fmt::format("INSERT INTO runs ({}) VALUES ({})", kColumns,
                                      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?");
  Statement s(db_, sql.c_str());
  if (!s) fail("preparing an insert");
  sqlite3_stmt* st = s.get();
  int i = 1;
  sqlite3_bind_int64(st, i++, static_cast<std::int64_t>(r.run_id));
  bind(st, i++, r.outcome);
  sqlite3_bind_int64(st, i++, static_cast<std::int64_t>(r.seed));
  bind(st, i++, r.params);
  bind(st, i++, r.*kMissionCompleted.field);
  for (const auto& c : kReals) bind(st, i++, r.*c.field);
  bind(st, i++, r.*kFaults.field);
  bind(st, i++, r.*kSimTime.field);
  sqlite3_bind_double(st, i++, r.wall_time_s);
  bind(st, i++, r.rtf);
  bind(st, i++, r.message);
  if (sqlite3_step(st) != SQLITE_DONE) fail(fmt::format("writing run {}", r.run_id));
}

std::vector<RunResult> Database::rows() const {
  const std::string sql = fmt::format("SELECT {} FROM runs ORDER BY run_id", kColumns);
  Statement s(db_, sql.c_str());
  if (!s) fail("reading runs");
  std::vector<RunResult> out;
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    sqlite3_stmt* st = s.get();
    RunResult r;
    int i = 0;
    r.run_id = static_cast<std::uint64_t>(sqlite3_column_int64(st, i++));
    r.outcome = text(st, i++);
    r.seed = static_cast<std::uint64_t>(sqlite3_column_int64(st, i++));
    r.params = text(st, i++);
    r.*kMissionCompleted.field = integer(st, i++);
    for (const auto& c : kReals) r.*c.field = real(st, i++);
    r.*kFaults.field = integer(st, i++);
    r.*kSimTime.field = real(st, i++);
    r.wall_time_s = sqlite3_column_double(st, i++);
    r.rtf = real(st, i++);
    r.message = text(st, i++);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) fail("reading runs");
  return out;
}

}  // namespace kestrel::batch
