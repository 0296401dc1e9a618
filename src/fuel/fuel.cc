// The only code that includes ignition-fuel-tools: Fuel URLs looked up in the local caches and
// `kestrel fetch` downloads.
#include "kestrel/fuel/fuel.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ignition/common/Console.hh>
#include <ignition/common/URI.hh>
#include <ignition/fuel_tools/ClientConfig.hh>
#include <ignition/fuel_tools/FuelClient.hh>
#include <ignition/fuel_tools/ModelIdentifier.hh>
#include <ignition/fuel_tools/Result.hh>
#include <mutex>
#include <regex>
#include <system_error>

#include "kestrel/core/error.h"
#include "kestrel/core/text.h"

namespace kestrel::fuel {

namespace fs = std::filesystem;
namespace ft = ignition::fuel_tools;

namespace {

// fuel-tools reports through ign-common's console (stdout/stderr, its own prefixes); Kestrel
// reports every failure itself, so that console stays silent.
void quiet() {
  static std::once_flag once;
  std::call_once(once, [] { ignition::common::Console::SetVerbosity(0); });
}

// SERVER of a web URI: scheme://host[:port].
std::string server_of(const std::string& uri) {
  static const std::regex kServer(R"(^([A-Za-z][A-Za-z0-9+.-]*://[^/\s]+))");
  std::smatch m;
  return std::regex_search(uri, m, kServer) ? m[1].str() : std::string();
}

// A client for one cache that knows the URI's server with Fuel's API version 1.0 (what
// Gazebo's config.yaml says of fuel.gazebosim.org), so a URL without "/1.0/" parses too.
ft::FuelClient client_for(const std::string& uri, const fs::path& cache) {
  quiet();
  ft::ClientConfig config;
  config.SetCacheLocation(cache.string());
  ft::ServerConfig server;
  server.SetUrl(ignition::common::URI(server_of(uri)));
  server.SetVersion("1.0");
  config.AddServer(server);
  return ft::FuelClient(config);
}

bool is_model_file_url(const std::string& uri) {
  return uri.find("/models/") != std::string::npos && uri.find("/files/") != std::string::npos;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string home() {
  const char* h = std::getenv("HOME");
  return h ? h : "";
}

}  // namespace

bool is_web_uri(std::string_view uri) {
  uri = trim(uri);
  return uri.starts_with("http://") || uri.starts_with("https://");
}

std::vector<fs::path> cache_paths() {
  std::vector<fs::path> out;
  auto add = [&](const fs::path& p) {
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const char* var : {"GZ_FUEL_CACHE_PATH", "IGN_FUEL_CACHE_PATH"}) {
    if (const char* v = std::getenv(var); v && *v) add(v);
  }
  if (const std::string h = home(); !h.empty()) {
    add(fs::path(h) / ".gz" / "fuel");
    add(fs::path(h) / ".ignition" / "fuel");
  }
  return out;
}

fs::path download_cache() {
  for (const char* var : {"GZ_FUEL_CACHE_PATH", "IGN_FUEL_CACHE_PATH"}) {
    if (const char* v = std::getenv(var); v && *v) return v;
  }
  const std::string h = home();
  if (h.empty()) {
    throw Error("no Fuel cache to download into: HOME is not set; set IGN_FUEL_CACHE_PATH");
  }
  return fs::path(h) / ".ignition" / "fuel";
}

fs::path cached(const std::string& written, const std::vector<fs::path>& caches) {
  const std::string uri(trim(written));
  if (!is_web_uri(uri)) return {};
  const ignition::common::URI url(uri);
  for (const auto& cache : caches) {
    std::error_code ec;
    // An absent cache is skipped: fuel-tools would create it, and a run writes nothing there.
    if (!fs::is_directory(cache, ec)) continue;
    auto client = client_for(uri, cache);
    std::string path;
    const ft::Result r =
        is_model_file_url(uri) ? client.CachedModelFile(url, path) : client.CachedModel(url, path);
    if (r.Type() == ft::ResultType::FETCH_ALREADY_EXISTS && !path.empty()) return path;
  }
  return {};
}

fs::path cached_by_name(const std::string& name, const std::vector<fs::path>& caches,
                        std::vector<fs::path>* ambiguous) {
  // CACHE/SERVER/OWNER/models/NAME/VERSION: the highest numbered version of each NAME found.
  const std::string want = lower(name);
  std::vector<fs::path> found;
  for (const auto& cache : caches) {
    std::error_code ec;
    if (!fs::is_directory(cache, ec)) continue;
    for (const auto& server : fs::directory_iterator(cache, ec)) {
      if (!server.is_directory(ec)) continue;
      for (const auto& owner : fs::directory_iterator(server.path(), ec)) {
        const fs::path models = owner.path() / "models";
        if (!fs::is_directory(models, ec)) continue;
        for (const auto& model : fs::directory_iterator(models, ec)) {
          if (lower(model.path().filename().string()) != want) continue;
          fs::path best;
          long best_version = -1;
          for (const auto& version : fs::directory_iterator(model.path(), ec)) {
            const std::string v = version.path().filename().string();
            const bool number =
                !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](char c) {
                  return std::isdigit(static_cast<unsigned char>(c)) != 0;
                });
            if (number && std::stol(v) > best_version) {
              best_version = std::stol(v);
              best = version.path();
            }
          }
          if (!best.empty()) found.push_back(best);
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return found.front();
  if (ambiguous) *ambiguous = found.size() > 1 ? found : std::vector<fs::path>{};
  return {};
}

std::string missing_advice(const std::string& uri, const std::vector<fs::path>& caches) {
  std::string searched;
  for (const auto& c : caches) searched += (searched.empty() ? "" : ", ") + c.string();
  return "it is not in the local Fuel cache (searched " +
         (searched.empty() ? std::string("no cache: HOME is not set") : searched) +
         "); Kestrel never downloads during a run: download it with `kestrel fetch '" +
         std::string(trim(uri)) + "'`";
}

fs::path fetch(const std::string& written, const fs::path& cache) {
  const std::string uri(trim(written));
  if (!is_web_uri(uri) || is_model_file_url(uri)) {
    throw Error("'" + uri +
                "' is not a Fuel model URL (expected "
                "https://SERVER/1.0/OWNER/models/NAME, optionally followed by /VERSION)");
  }
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (!fs::is_directory(cache, ec)) {
    throw Error(cache.string(), "cannot create the Fuel cache folder: " + ec.message());
  }
  auto client = client_for(uri, cache);
  const ignition::common::URI url(uri);
  ft::ModelIdentifier id;
  if (!client.ParseModelUrl(url, id) || id.Owner().empty() || id.Name().empty()) {
    throw Error("'" + uri +
                "' is not a Fuel model URL (expected https://SERVER/1.0/OWNER/models/NAME, "
                "optionally followed by /VERSION)");
  }
  std::string path;
  const ft::Result r = client.DownloadModel(url, path);
  if (r.Type() != ft::ResultType::FETCH && r.Type() != ft::ResultType::FETCH_ALREADY_EXISTS) {
    throw Error("downloading '" + uri + "' failed (" + r.ReadableResult() + "): GET " +
                server_of(uri) + "/1.0/" + id.Owner() + "/models/" + id.Name() + "/" +
                id.VersionStr() + "/" + id.Name() +
                ".zip did not give a model zip (is the server reachable and does it have the "
                "model?)");
  }
  // fuel-tools 7 puts the model under the server's host; ask the cache where it is.
  const fs::path dir = cached(uri, {cache});
  if (dir.empty()) {
    throw Error("'" + uri + "' was downloaded but is not found in " + cache.string() +
                " afterwards (the zip held no model?)");
  }
  return dir;
}

}  // namespace kestrel::fuel
