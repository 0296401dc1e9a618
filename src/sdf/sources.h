#pragma once
// The raw XML of every file a world reads, parsed with tinyxml2 before libsdformat sees it:
// size and syntax checks, the include graph (recursion, unresolved URIs with the paths
// searched), placeholders and duplicate sibling names, and kestrel::Element trees looked up by
// file:line so plugins and sensors get their original XML with correct locations.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/core/element.h"
#include "kestrel/sdf/finding.h"
#include "urdf.h"

namespace kestrel::sdf::detail {

/// Bytes libsdformat 12 keeps for one element with this tag (with its usual children; 0 for
/// elements counted in their parent's figure).
double dom_weight(std::string_view tag);

/// The file name libsdformat gives elements it read from a string (sdf::kSdfStringSource).
inline constexpr const char* kStringSource = "<data-string>";
/// The file name libsdformat 12 gives the elements of a document it converted from URDF.
inline constexpr const char* kUrdfSource = "urdf file";

class Sources {
 public:
  Sources(std::vector<std::filesystem::path> search, std::size_t max_file_bytes)
      : search_(std::move(search)), max_bytes_(max_file_bytes) {}

  /// Reads, checks and pre-scans a world file and, recursively, the files it includes.
  /// @throws UnreadableWorld on missing/empty/huge files, malformed XML or recursive includes.
  void add_world_file(const std::filesystem::path& path, Findings& findings);
  /// As add_world_file for in-memory text (includes resolve against the search path only).
  void add_world_string(std::string text, const std::string& name, Findings& findings);
  /// A model file checked as a world: an empty world named "empty" that includes it, shown in
  /// findings as the model file (whose own findings keep its lines). The world's text includes
  /// the model by its absolute path. @throws UnreadableWorld as add_world_file.
  void add_model_as_world(const std::filesystem::path& model_file, Findings& findings);

  /// The kestrel::Element at `file`:`line` named `name`, or nullptr. `file` as libsdformat
  /// reports it (any spelling of the path).
  /// `name_attr`, if not empty, picks among elements on the same line by their name attribute;
  /// when several still match (two `<plugin name="x">` on one line), `xml` (if given) is asked
  /// for the element's text as libsdformat holds it, and the one whose content (attributes,
  /// children, text) equals it is taken.
  std::shared_ptr<const Element> find(const std::string& file, int line, const std::string& name,
                                      const std::string& name_attr = {},
                                      const std::function<std::string()>& xml = {}) const;
  /// The name to show for a file in findings (the world path as the user gave it, or the
  /// canonical path of an included file).
  std::string display(const std::string& file) const;
  /// Text of the world (as read).
  const std::string& world_text() const { return world_text_; }
  /// The Element tree (the `<sdf>` root) of a scanned file, or nullptr; `file` as in find().
  /// The world itself is `order_.front()`: root(files().front()).
  std::shared_ptr<const Element> root(const std::string& file) const;
  const std::vector<std::string>& files() const { return order_; }
  /// URIs of <include>s that could not be resolved (libsdformat's errors about them are dropped).
  const std::set<std::string>& unresolved_uris() const { return unresolved_; }
  const std::vector<std::filesystem::path>& search() const { return search_; }
  /// A URDF file <include>d (or checked or run as a model), with the <name> its <include>
  /// gives (empty: the robot's name), and what the conversion drops that Kestrel restores.
  struct UrdfInclude {
    std::string file, name;
    UrdfRobot robot;
  };
  const std::vector<UrdfInclude>& urdf_includes() const { return urdf_includes_; }
  /// True if duplicate sibling names were reported (libsdformat's own reports are dropped).
  bool duplicates_found() const { return duplicates_found_; }
  /// What libsdformat 12's document of a scanned file will take in memory [bytes], its
  /// includes counted once per <include> (see dom_weight in sources.cc); 0 if not scanned.
  double dom_bytes(const std::string& file) const;

 private:
  struct File {
    std::string display;
    std::shared_ptr<const Element> root;
    std::multimap<std::pair<int, std::string>, std::shared_ptr<const Element>> by_line;
    double own_dom_bytes = 0;           // this file's elements in libsdformat's document
    std::vector<std::string> includes;  // keys of the files it includes, once per <include>
  };
  // Registers a scanned file: its Element tree, indexed by line. @throws UnreadableWorld.
  File& add_file(const std::string& key, const std::string& display, const std::string& text);
  void scan(const std::string& key, const std::string& display, const std::string& text,
            const std::filesystem::path& base_dir, Findings& findings,
            std::vector<std::string>& stack, const std::string& include_name = {});
  std::string key_of(const std::string& file) const;

  std::vector<std::filesystem::path> search_;
  std::size_t max_bytes_;
  std::map<std::string, File> files_;                 // by canonical path (or the string name)
  std::map<std::string, std::string> display_names_;  // canonical path -> name shown
  std::vector<std::string> order_;
  std::string world_text_;
  std::set<std::string> unresolved_;
  std::vector<UrdfInclude> urdf_includes_;
  bool duplicates_found_ = false;
  mutable std::map<std::string, double> dom_bytes_memo_;
};

/// Reads a file with the size limits. @throws UnreadableWorld.
std::string read_file_checked(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace kestrel::sdf::detail
