#include "resource.h"

#include <tinyxml2.h>

#include <cctype>
#include <cstdlib>
#include <system_error>

#include "kestrel/core/paths.h"
#include "kestrel/core/text.h"
#include "kestrel/fuel/fuel.h"
#include "kestrel/sdf/world_loader.h"

namespace kestrel::sdf {

namespace fs = std::filesystem;

std::vector<fs::path> resource_search_path(const LoadOptions& options, const fs::path& world_dir) {
  std::vector<fs::path> out = options.resource_paths;
  for (auto& p : paths_from_environment({"KESTREL_RESOURCE_PATH", "GZ_SIM_RESOURCE_PATH",
                                         "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH"})) {
    out.push_back(std::move(p));
  }
  if (!world_dir.empty()) out.push_back(world_dir);
  return out;
}

namespace detail {

fs::path directory_of(const fs::path& file) {
  fs::path dir = file.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

fs::path model_dir_sdf(const fs::path& dir) {
  std::error_code ec;
  const fs::path config = dir / "model.config";
  if (fs::is_regular_file(config, ec)) {
    tinyxml2::XMLDocument doc;
    if (doc.LoadFile(config.c_str()) == tinyxml2::XML_SUCCESS && doc.RootElement()) {
      // Several <sdf version=...> entries: take the highest version that exists.
      fs::path best;
      double best_version = -1;
      for (auto* e = doc.RootElement()->FirstChildElement("sdf"); e;
           e = e->NextSiblingElement("sdf")) {
        if (!e->GetText()) continue;
        const double v = e->DoubleAttribute("version", 0);
        const fs::path candidate = dir / e->GetText();
        if (v > best_version && fs::is_regular_file(candidate, ec)) {
          best = candidate;
          best_version = v;
        }
      }
      if (!best.empty()) return best;
    }
  }
  if (fs::is_regular_file(dir / "model.sdf", ec)) return dir / "model.sdf";
  return {};
}

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A candidate path: a file is taken as is, a directory through its model.config.
fs::path accept(const fs::path& p, bool files_only) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec);
  if (!files_only && fs::is_directory(p, ec)) {
    auto f = model_dir_sdf(p);
    if (!f.empty()) return fs::weakly_canonical(f, ec);
  }
  return {};
}
}  // namespace

Resolved resolve_uri(const std::string& written, const fs::path& base_dir,
                     const std::vector<fs::path>& search, bool files_only) {
  // As sdformat trims <uri> text (its whitespace test: a <uri> on lines of its own).
  const std::string uri(trim(written));
  Resolved r;
  auto try_path = [&](const fs::path& p) {
    r.searched.push_back(p);
    r.file = accept(p, files_only);
    return !r.file.empty();
  };
  constexpr std::string_view kModel = "model://";
  constexpr std::string_view kFile = "file://";
  if (fuel::is_web_uri(uri)) {
    r.web = true;
    r.searched = fuel::cache_paths();
    if (const fs::path p = fuel::cached(uri, r.searched); !p.empty())
      r.file = accept(p, files_only);
    return r;
  }
  if (uri.starts_with(kModel)) {
    const std::string rest = uri.substr(kModel.size());
    for (const auto& dir : search) {
      if (try_path(dir / rest)) return r;
    }
    // A Fuel model: model://NAME in a file of the cached model NAME is that model (Fuel models
    // refer to their own meshes so), else the one cached model of that name.
    const std::size_t slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    const fs::path sub = slash == std::string::npos ? fs::path() : fs::path(rest.substr(slash + 1));
    std::error_code ec;
    for (fs::path p = base_dir.empty() ? fs::path() : fs::absolute(base_dir, ec);
         !p.empty() && p != p.parent_path(); p = p.parent_path()) {
      if (p.parent_path().parent_path().filename() == "models" &&
          lower(p.parent_path().filename().string()) == lower(name)) {
        if (try_path(p / sub)) return r;
        break;
      }
    }
    if (const fs::path dir = fuel::cached_by_name(name, fuel::cache_paths()); !dir.empty()) {
      try_path(dir / sub);
    }
    return r;
  }
  std::string path = uri.starts_with(kFile) ? uri.substr(kFile.size()) : uri;
  if (path.empty()) return r;
  if (fs::path(path).is_absolute()) {
    try_path(path);
    return r;
  }
  if (!base_dir.empty() && try_path(base_dir / path)) return r;
  for (const auto& dir : search) {
    if (try_path(dir / path)) return r;
  }
  return r;
}

}  // namespace detail
}  // namespace kestrel::sdf
