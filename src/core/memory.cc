#include "kestrel/core/memory.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "kestrel/core/error.h"

namespace kestrel {
namespace {

// A "Key:   123 kB" line of /proc/meminfo or /proc/self/status, in bytes (0 if absent).
std::uint64_t proc_kb(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream s(line.substr(key.size() + 1));
    std::uint64_t kb = 0;
    s >> kb;
    return kb * 1024;
  }
  return 0;
}

std::uint64_t read_number(const std::string& file, bool& ok) {
  std::ifstream in(file);
  std::string v;
  ok = static_cast<bool>(in >> v) && !v.empty() && std::isdigit(static_cast<unsigned char>(v[0]));
  return ok ? std::strtoull(v.c_str(), nullptr, 10) : 0;
}

// The cgroup v2 folder of this process ("0::/path" in /proc/self/cgroup).
std::string cgroup_dir() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return {};
}

std::uint64_t parse_size(const char* text) {
  const std::string s = text;
  std::size_t end = 0;
  double v = 0;
  try {
    v = std::stod(s, &end);
  } catch (...) {
    end = 0;
  }
  std::string unit = s.substr(end);
  while (!unit.empty() && unit.back() == 'B') unit.pop_back();  // "2GB", "2GiB" → "2G"
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  const std::string units = "KMGT";
  double scale = 1;
  if (unit.size() == 1 && units.find(std::toupper(unit[0])) != std::string::npos) {
    scale = std::pow(1024.0, 1 + units.find(std::toupper(unit[0])));
    unit.clear();
  }
  if (end == 0 || !unit.empty() || !(v > 0) || !std::isfinite(v * scale)) {
    throw Error(
        fmt::format("KESTREL_MEMORY_LIMIT must be a size such as 4G, 512M or 1000000 "
                    "(bytes), found '{}'",
                    s));
  }
  return static_cast<std::uint64_t>(v * scale);
}

}  // namespace

MemoryBudget memory_budget() {
  MemoryBudget b{std::numeric_limits<std::uint64_t>::max(), "no known limit"};
  auto consider = [&](std::uint64_t bytes, std::string source) {
    if (bytes < b.bytes) b = {bytes, std::move(source)};
  };
  const std::uint64_t used = proc_kb("/proc/self/status", "VmRSS");
  if (const char* limit = std::getenv("KESTREL_MEMORY_LIMIT"); limit && *limit) {
    const std::uint64_t l = parse_size(limit);
    consider(l > used ? l - used : 0,
             fmt::format("KESTREL_MEMORY_LIMIT={} less the {} in use", limit, format_bytes(used)));
  }
  if (const std::uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable"); avail > 0) {
    consider(avail, "MemAvailable in /proc/meminfo");
  }
  if (const std::string dir = cgroup_dir(); !dir.empty()) {
    bool ok_max = false, ok_cur = false;
    const std::uint64_t max = read_number(dir + "/memory.max", ok_max);
    const std::uint64_t cur = read_number(dir + "/memory.current", ok_cur);
    if (ok_max && ok_cur) {
      consider(max > cur ? max - cur : 0, "the cgroup's memory.max (" + format_bytes(max) + ")");
    }
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t vm = proc_kb("/proc/self/status", "VmSize");
    consider(rl.rlim_cur > vm ? rl.rlim_cur - vm : 0,
             "the address-space limit (ulimit -v, " + format_bytes(rl.rlim_cur) + ")");
  }
  return b;
}

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[u]);
}

}  // namespace kestrel
