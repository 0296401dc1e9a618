#pragma once
// Resolution of <include> URIs and model directories (internal to src/sdf).

#include <filesystem>
#include <string>
#include <vector>

namespace kestrel::sdf::detail {

struct Resolved {
  std::filesystem::path file;                   ///< the .sdf file; empty if not found
  std::vector<std::filesystem::path> searched;  ///< every candidate tried, in order
  bool web = false;  ///< a Fuel URL: `searched` are the Fuel caches (fuel::missing_advice)
};

/// Resolves `uri` (surrounding whitespace ignored; model://NAME[/sub], file://ABS, an absolute path
/// or a path relative to `base_dir`, then to each entry of `search`) to an SDF file. A Fuel URL
/// (http[s]://) resolves from the local Fuel caches only; a model://NAME that no `search` entry
/// holds resolves to the cached Fuel model NAME (the one `base_dir` lies in first). A directory
/// resolves through its model.config (<sdf> with the highest version) or model.sdf, unless
/// `files_only` (meshes, heightmaps: only a regular file is accepted).
Resolved resolve_uri(const std::string& uri, const std::filesystem::path& base_dir,
                     const std::vector<std::filesystem::path>& search, bool files_only = false);

/// The directory that holds `file`, for resolving paths relative to it: "." for a bare file
/// name given relative to the working directory (whose parent_path() is empty).
std::filesystem::path directory_of(const std::filesystem::path& file);

/// The SDF file of a model directory, or empty.
std::filesystem::path model_dir_sdf(const std::filesystem::path& dir);

}  // namespace kestrel::sdf::detail
