#pragma once
/// @file The live viewer (src/viewer/README.md): one HTTP port that speaks the Foxglove WebSocket
/// protocol (subprotocol foxglove.websocket.v1) for Foxglove and Lichtblick and serves the
/// built-in page at `/`. It reads the export model (kestrel/export/export.h) after PostUpdate and
/// never slows the world: every client has a bounded queue, newest message wins per channel.

#include <cstdint>
#include <memory>
#include <string>

#include "kestrel/export/export.h"
#include "kestrel/sim/runner.h"
#include "kestrel/system.h"

namespace kestrel::viewer {

struct Options {
  std::string ip = "127.0.0.1";  ///< address bound (--viewer-ip); loopback unless chosen
  std::uint16_t port = 8765;     ///< TCP port (--viewer-port; 0: any free port, printed)
  std::size_t max_clients = 16;  ///< WebSocket clients at once; more are refused with a status
  std::size_t max_message_bytes = 1 << 20;  ///< larger client messages are refused [bytes]
  /// At most this many messages per second of wall time per channel (stats and clock:
  /// exports::kStatusRateHz).
  double max_rate_hz = exports::kDisplayRateHz;
};

/// The viewer system (attached to the world). It binds at configure (an address in use or not
/// allowed is an Error then) and prints the page's URL on stdout ("kestrel: viewer at URL").
/// @pre `runner` outlives the system (the Runner owns it).
std::unique_ptr<System> make_viewer_system(sim::Runner& runner, Options options = {});

}  // namespace kestrel::viewer
