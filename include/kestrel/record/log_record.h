#pragma once
/// @file Gazebo's LogRecord plugin (gz-sim-log-system) mapped onto the recorder
/// (src/record/README.md, "LogRecord"): `kestrel run` records a world that declares it into
/// `<path>/state.mcap` as `--record` would.

#include <memory>
#include <string>

#include "kestrel/core/element.h"
#include "kestrel/system.h"

namespace kestrel::record {

/// What a LogRecord `<plugin>` element asks for.
struct LogRecordOptions {
  std::string folder;  ///< `<path>`, or Gazebo's default ~/.gz/sim/log/<UTC time> when absent
  std::string file;    ///< folder/state.mcap: what Kestrel writes where Gazebo writes state.tlog
};

/// Reads `<path>` (a folder; relative to the working directory), `<record_resources>` and
/// `<compress>` (booleans, false; true is refused: Kestrel neither copies meshes into the log
/// folder nor zips it) and `<compress_path>` (refused without `<compress>`).
/// @throws Error at the element's file:line for anything else or a path that is not a folder.
LogRecordOptions log_record_options(const Element& plugin);

/// Set on the world entity by the program that records for the LogRecord plugin (`kestrel run`
/// adds the recorder itself); the system refuses to configure without it.
struct LogRecordTaken {
  std::string file;  ///< the recording
};

/// The built-in LogRecord system: at configure it checks its element and that the program took
/// the recording over (LogRecordTaken); a program that does not record (the Python module, say)
/// gets an Error naming the plugin's line rather than a world that silently records nothing.
std::unique_ptr<System> make_log_record_system();

}  // namespace kestrel::record
