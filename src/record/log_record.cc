// Gazebo's LogRecord plugin onto the recorder (include/kestrel/record/log_record.h).
#include "kestrel/record/log_record.h"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "kestrel/core/error.h"
#include "kestrel/ecs/registry.h"
#include "systems/common/plugin_params.h"

namespace kestrel::record {
namespace {

namespace fs = std::filesystem;

// Gazebo's default log folder: ~/.gz/sim/log/<time>, the time the run starts (UTC here).
std::string default_folder(const Element& plugin) {
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    throw Error(plugin.where(), "LogRecord without <path>: Gazebo's default folder is "
                                "~/.gz/sim/log/<time>, and HOME is not set: give <path>");
  }
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%S", &utc);
  return (fs::path(home) / ".gz" / "sim" / "log" / stamp).string();
}

class LogRecordSystem final : public System, public ISystemConfigure {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& registry,
                 sim::EventBus&) override {
    log_record_options(config);
    if (!registry.has<LogRecordTaken>(entity)) {
      throw Error(config.where(),
                  "LogRecord: this program does not record the world (`kestrel run` records it "
                  "into <path>/state.mcap); remove the plugin or record otherwise");
    }
  }
};

}  // namespace

LogRecordOptions log_record_options(const Element& plugin) {
  if (plugin.get_or<bool>("record_resources", false)) {
    throw Error(plugin.child("record_resources")->where(),
                "LogRecord <record_resources>true: Kestrel does not copy the world's meshes and "
                "textures into the log folder (its recording holds poses and sensor data; "
                "`kestrel replay` loads the world file's own resources): remove it or set false");
  }
  if (plugin.get_or<bool>("compress", false)) {
    throw Error(plugin.child("compress")->where(),
                "LogRecord <compress>true: Kestrel does not zip the log folder (its MCAP chunks "
                "are zstd-compressed already): remove it or set false");
  }
  if (const Element* c = plugin.child("compress_path")) {
    throw Error(c->where(), "LogRecord <compress_path>: only read with <compress>true, which "
                            "Kestrel does not do");
  }
  LogRecordOptions o;
  if (const Element* p = plugin.child("path")) {
    if (p->text().empty()) throw Error(p->where(), "LogRecord <path>: expected a folder, found ''");
    o.folder = fs::absolute(p->text()).lexically_normal().string();
  } else {
    o.folder = default_folder(plugin);
  }
  std::error_code ec;
  if (fs::exists(o.folder, ec) && !fs::is_directory(o.folder, ec)) {
    throw Error(plugin.child("path") ? plugin.child("path")->where() : plugin.where(),
                fmt::format("LogRecord <path>: {} is not a folder", o.folder));
  }
  systems::reject_unknown_parameters(plugin, "LogRecord",
                                     "path, record_resources, compress, compress_path");
  o.file = (fs::path(o.folder) / "state.mcap").string();
  return o;
}

std::unique_ptr<System> make_log_record_system() { return std::make_unique<LogRecordSystem>(); }

}  // namespace kestrel::record
