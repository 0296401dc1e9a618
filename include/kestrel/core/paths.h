#pragma once
/// @file Search paths from the environment (GZ_SIM_RESOURCE_PATH-style ':'-separated lists).

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace kestrel {

/// The entries of each environment variable in `vars`, in order ("a:b" → a, b; empty entries
/// and unset variables contribute nothing).
inline std::vector<std::filesystem::path> paths_from_environment(
    std::initializer_list<const char*> vars) {
  std::vector<std::filesystem::path> out;
  for (const char* var : vars) {
    const char* value = std::getenv(var);
    std::string_view rest = value ? value : "";
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto part = rest.substr(0, colon);
      if (!part.empty()) out.emplace_back(part);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  return out;
}

}  // namespace kestrel
