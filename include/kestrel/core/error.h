#pragma once
/// @file Kestrel's error type and the two kinds of checks (see docs/architecture.md).
///
/// User errors (bad world file, bad plugin parameter, bad CLI flag, bad network message) throw
/// kestrel::Error whose message says where, what was expected and what was found. Programmer
/// errors (broken invariants) use KESTREL_DEMAND, which aborts in every build type.

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kestrel {

/// A user-facing error. `what()` is the complete one-line message; `where()` is the location
/// part alone ("world.sdf:12" or a scoped entity name), empty when unknown.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  Error(std::string where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message),
        where_(std::move(where)) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

namespace detail {
[[noreturn]] inline void demand_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "kestrel: internal invariant failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}
}  // namespace detail

}  // namespace kestrel

/// Always-on check for programmer errors (never for user input: throw kestrel::Error instead).
#define KESTREL_DEMAND(cond) \
  ((cond) ? static_cast<void>(0) : ::kestrel::detail::demand_failed(#cond, __FILE__, __LINE__))
