#pragma once
/// @file The one export model (src/export/README.md): what leaves the simulation — for the
/// viewer (src/viewer) today, the recorder and Python later — as channels (topic, schema,
/// encoding) and, each step, the messages of the channels whose data changed, stamped with sim
/// time. Read-only on the registry; called on the step thread after PostUpdate's readings are
/// complete.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/runner.h"

namespace kestrel::exports {

/// One stream of messages of one schema.
struct Channel {
  std::uint32_t id = 0;         ///< 1, 2, ... in the order of channels()
  std::string topic;            ///< e.g. "/tf", "/scene", "/world/W/stats"
  std::string encoding;         ///< "protobuf" or "json"
  std::string schema_name;      ///< e.g. "foxglove.FrameTransforms", "kestrel.Stats"
  std::string schema_encoding;  ///< "protobuf" (schema: FileDescriptorSet bytes) or "jsonschema"
  std::string schema;           ///< the schema's bytes (binary for protobuf)
  /// State that a new reader needs at once (the scene): the last message is kept and handed to
  /// every reader that starts reading the channel (ExportModel::last; the viewer forces it).
  bool latched = false;
  /// A sensor's samples (or the fault log's events): a message per reading, at the sensor's own
  /// rate, each of which counts; the other channels show the world's state as it changes.
  bool samples = false;
  /// The world's status (stats, clock): a status line and a plot (kStatusRateHz).
  bool status = false;
  /// Of an ExportModel made with `raw_numbers`: its messages are JSON text whose numbers are
  /// still doubles, which finish_json makes the channel's JSON.
  bool raw_numbers = false;
};

/// The JSON text of a message of a channel marked `raw_numbers`, into `out` (appended): each
/// raw number written as the shortest text that reads back the same double (null when not
/// finite), as the channel's numbers are written without `raw_numbers`. Reads nothing else:
/// any thread may call it.
void finish_json(std::string_view raw, std::string& out);

/// How often a person watching a channel of the world's state needs it [Hz]: the viewer's
/// default rate, and the recording's of sim time (src/record/README.md).
inline constexpr double kDisplayRateHz = 60;
/// The same for the status channels (stats, clock).
inline constexpr double kStatusRateHz = 10;

/// A message of a channel: encoded bytes, stamped with the sim time of the state it shows.
struct Message {
  std::uint32_t channel = 0;
  Duration stamp{0};
  std::string data;
};

/// What the export model needs from outside the registry (the runner's statistics and the
/// counters of whoever reads it), for the stats channel.
struct StepContext {
  Duration sim_time{0};       ///< time of the state exported (the end of the step)
  sim::RunStats stats;        ///< the runner's statistics
  std::uint64_t dropped = 0;  ///< messages a reader dropped (newest-wins), shown in stats
  std::uint64_t refused = 0;  ///< bad client input refused, shown in stats
  std::uint64_t clients = 0;  ///< readers connected
};

class ExportModel {
 public:
  /// Builds the channel list of the world the registry holds (`world_name` names its topics).
  /// `raw_numbers`: the sensor and state channels whose JSON is written as text (not built as a
  /// tree) leave their numbers as doubles, for a reader that formats them on another thread
  /// (finish_json; the recorder, src/record/README.md). Such channels are marked raw_numbers.
  ExportModel(const ecs::Registry& reg, std::string world_name, bool raw_numbers = false);
  ~ExportModel();
  ExportModel(const ExportModel&) = delete;
  ExportModel& operator=(const ExportModel&) = delete;

  const std::vector<Channel>& channels() const { return channels_; }
  /// The channel of a topic, or nullptr.
  const Channel* find(const std::string& topic) const;

  /// One step (after PostUpdate): notes what changed in the registry (spawned or removed
  /// visuals and links: the scene; moved links: the transforms; the clock and stats always),
  /// then calls `sink` for every channel for which `wanted(channel)` is true and whose data
  /// changed since the last message this model made for it (or that `force`d). A channel not
  /// wanted keeps its change pending. Call it every step, or (a reader that wants channels
  /// at its own times) at least at every step at which news() is true or a channel that is not
  /// `samples` becomes wanted: what changed in between is seen then.
  void step(const ecs::Registry& reg, const StepContext& ctx,
            const std::function<bool(std::uint32_t)>& wanted,
            const std::function<void(Message&&)>& sink);
  /// Whether step() now would send a message of a `samples` channel `wanted` (a sensor's new
  /// reading, a fault), or the scene, or a forced channel, or must note a change of the
  /// registry's layout — all it may send whatever the time. Much cheaper than step().
  bool news(const ecs::Registry& reg, const std::function<bool(std::uint32_t)>& wanted) const;

  /// Makes every channel's next step() send a message even if nothing changed (a reader
  /// subscribed; after a reset).
  void force(std::uint32_t channel);

  /// The last message of a latched channel (nullptr if none yet).
  const Message* last(std::uint32_t channel) const;

 private:
  struct Impl;
  std::vector<Channel> channels_;
  Impl* impl_;
};

}  // namespace kestrel::exports
