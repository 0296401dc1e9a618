#pragma once
/// @file Findings: what the world loader and `kestrel check` report about a world file.

#include <string>
#include <vector>

namespace kestrel::sdf {

enum class Severity { kWarning, kError };

/// One problem found in a world, located in the user's files.
struct Finding {
  Severity severity = Severity::kError;
  std::string file;    ///< path of the file the problem is in ("<string>" for in-memory SDF)
  int line = 0;        ///< 1-based line in `file`; 0 when unknown
  std::string entity;  ///< scoped name of the entity concerned ("world::model::link"), or empty
  std::string message;
};

/// "error: FILE:LINE: message" / "warning: FILE:LINE: message" (":LINE" omitted when unknown).
std::string format_finding(const Finding& f);
const char* severity_name(Severity s);

/// Findings collected while loading.
class Findings {
 public:
  void error(std::string file, int line, std::string entity, std::string message);
  void warning(std::string file, int line, std::string entity, std::string message);
  void add(Finding f) { items_.push_back(std::move(f)); }
  const std::vector<Finding>& items() const { return items_; }
  std::vector<Finding>& items() { return items_; }
  std::size_t count(Severity s) const;
  bool has_errors() const { return count(Severity::kError) > 0; }
  /// Every warning becomes an error (`--strict`): reported as what it now is.
  void promote_warnings() {
    for (auto& f : items_) f.severity = Severity::kError;
  }

 private:
  std::vector<Finding> items_;
};

}  // namespace kestrel::sdf
