#pragma once
/// @file The recorder (src/record/README.md): `kestrel run --record FILE.mcap` writes the export
/// model's channels (kestrel/export/export.h) — the same topics, schemas and encodings the viewer
/// offers — into an MCAP file, log time = publish time = the sim time of each message [ns].

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/record/mcap.h"
#include "kestrel/sim/runner.h"
#include "kestrel/system.h"

namespace kestrel::record {

/// What the recorder wrote, filled when it closes the file (for the run's summary).
struct RecordReport {
  bool closed = false;
  std::string path;
  std::uint64_t messages = 0, chunks = 0, bytes = 0;
  std::vector<std::pair<std::string, std::uint64_t>> topics;  ///< messages per recorded topic
};

struct RecordOptions {
  std::string path;                 ///< the MCAP file (created or truncated)
  std::vector<std::string> topics;  ///< glob patterns (fnmatch) on topics; empty: every channel
  Compression compression = Compression::kZstd;
  RecordReport* report = nullptr;  ///< filled at each close if set; must outlive the system
  /// At most this many messages per channel per second of sim time, the state channel's samples
  /// included (0: every change, and a state sample every step); the latched scene is always
  /// recorded when it changes. A change skipped is recorded when the channel is next due (the
  /// export model keeps it pending). Unset: what a person watching needs, as the viewer sends
  /// it — every sample of a sensor, the world's state at exports::kDisplayRateHz and its status
  /// (stats, clock) at exports::kStatusRateHz of sim time — and a state sample every step.
  std::optional<double> rate_hz = std::nullopt;
  std::string world_file = {};  ///< the world file run (the state channel's metadata names it)
};

/// The recorder system (attached to the world). The file is created and its header written when
/// the system is made, and its schemas and channels at configure — before the world runs — so
/// an unwritable path or a full disk is an Error then. Each unpaused step's messages go into
/// chunks of under 0.25 s of sim time (a kill loses under 1 s); the file is closed (summary
/// written) when the run ends (sim::RunEnded: a limit, SIGINT, SIGTERM) and when the system is
/// destroyed.
/// @throws Error when the file cannot be created or written; at configure when a pattern
/// matches no channel (the message lists the channels).
/// @pre `runner` outlives the system (the Runner owns it).
std::unique_ptr<System> make_recorder_system(sim::Runner& runner, RecordOptions options);

}  // namespace kestrel::record
