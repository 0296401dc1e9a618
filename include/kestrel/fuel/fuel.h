#pragma once
// Gazebo Fuel models in the local Fuel cache (src/fuel: the only door to ignition-fuel-tools).
// A run only reads the cache; `kestrel fetch` is the one place that downloads.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::fuel {

/// True for a web URI (http:// or https://): a Fuel model or model file URL.
bool is_web_uri(std::string_view uri);

/// The Fuel caches searched, in order, those that do not exist included: $GZ_FUEL_CACHE_PATH and
/// $IGN_FUEL_CACHE_PATH (when set), ~/.gz/fuel (Gazebo Garden and later), ~/.ignition/fuel
/// (Gazebo Fortress's fuel-tools 7), without repeats.
std::vector<std::filesystem::path> cache_paths();

/// Where `kestrel fetch` downloads: the first of $GZ_FUEL_CACHE_PATH, $IGN_FUEL_CACHE_PATH that
/// is set, else ~/.ignition/fuel (where Fortress looks).
std::filesystem::path download_cache();

/// The folder of the model a Fuel model URL names (SERVER/1.0/OWNER/models/NAME[/VERSION|tip]),
/// or the file a model file URL names (.../models/NAME/VERSION/files/PATH), from the first cache
/// in `caches` that holds it; empty if none does (or `uri` is not a Fuel URL).
std::filesystem::path cached(const std::string& uri,
                             const std::vector<std::filesystem::path>& caches);

/// The folder of the model NAME in the caches (CACHE/SERVER/OWNER/models/NAME/VERSION, the
/// highest version, names compared without case), for a model://NAME URI: empty if no cache has
/// it, or if more than one server or owner does (then `ambiguous` lists them).
std::filesystem::path cached_by_name(const std::string& name,
                                     const std::vector<std::filesystem::path>& caches,
                                     std::vector<std::filesystem::path>* ambiguous = nullptr);

/// The sentence a missing Fuel model's error ends with: the caches searched and the command
/// that downloads it.
std::string missing_advice(const std::string& uri,
                           const std::vector<std::filesystem::path>& caches);

/// Downloads the model a Fuel model URL names into `cache` (created if missing) through
/// ignition-fuel-tools (GET SERVER/1.0/OWNER/models/NAME/VERSION/NAME.zip, version "tip" unless
/// the URL gives one) and returns its folder.
/// @throws kestrel::Error naming the URL and the request when it is no Fuel model URL or the
///         download fails.
std::filesystem::path fetch(const std::string& uri, const std::filesystem::path& cache);

}  // namespace kestrel::fuel
