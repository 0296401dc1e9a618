#pragma once
/// @file Replay (src/record/README.md, "Replay"): `kestrel replay FILE.mcap` loads the world a
/// recording names and drives its registry from the recording's state channel — every model's
/// and link's world and relative poses, the links' world velocities and the rotor speeds, at
/// full double precision, as the recorded run's physics wrote them each step — instead of
/// simulating it. What reads the registry (the truth CSV, transport, the viewer) sees what the
/// recorded run saw.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/record/mcap.h"
#include "kestrel/system.h"

namespace kestrel::record {

/// Kestrel's state channel: its topic, message encoding and format version (the `format` key of
/// its metadata). The channel has no schema; its binary layout is documented in
/// src/record/README.md.
inline constexpr char kStateTopic[] = "/kestrel/state";
inline constexpr char kStateEncoding[] = "kestrel.state";
inline constexpr char kStateFormat[] = "2";
/// The older format this build still reads (format 2 added poses given by the world poses and
/// split each double into its high and low bytes).
inline constexpr char kStateFormatV1[] = "1";

/// This build's version (the project's), which recordings carry in their state channel.
const char* build_version();

/// A recording read for replay: the state channel's metadata and its messages.
struct Recording {
  std::string path;
  std::filesystem::path world;  ///< the world file the run loaded (absolute)
  std::string world_name, kestrel_version;
  std::uint64_t seed = 0;
  Duration step_size{0};
  std::vector<std::string> models, links;  ///< scoped names, in the order of each sample
  std::string format;                      ///< the state channel's format (kStateFormat…)
  /// Per model, then link: the index of the model its relative pose is taken from (format 2),
  /// or a negative value (src/record/state.h, state_parents).
  std::vector<int> parents;
  struct Sample {
    Duration time{0};
    std::size_t offset = 0, size = 0;  ///< in `data`
  };
  std::vector<Sample> samples;  ///< in log-time order
  std::string data;
  bool complete = true;  ///< false: the file ends before its Data End (a killed run)
  /// Why the samples end before the recording does ("" when they do not): the world's models
  /// changed, or the run was reset (log time went back).
  std::string ends_early;
};

/// Reads the state channel of an MCAP file (chunks decompressed and their CRCs checked). A
/// file cut short is read up to its last complete record (`complete` false).
/// @throws Error naming the file when it is not MCAP, is corrupt, or has no state channel (or
/// one of another format).
Recording read_recording(const std::filesystem::path& path);

/// Checks that the world loaded into `reg` under `world` has exactly the models and links the
/// recording was laid out for (the moving models directly under the world and everything in
/// them) and (when given) the same step size.
/// @throws Error naming the recording, the world file and every model or link missing or added.
void check_world(const Recording& recording, const ecs::Registry& reg, ecs::Entity world,
                 std::optional<Duration> step_size);

/// Fills `recording`'s world, seed, version, step size and layout from the state channel's
/// record. @throws Error naming recording.path when it is of another format or lacks a key.
void read_state_channel(const McapSummary::Channel& channel, Recording& recording);

/// The state channel's samples as table rows (`kestrel log to-csv`): one row per model and link
/// of each sample, columns `entity` (scoped name), `kind` (model or link), `x y z qw qx qy qz`
/// (world pose), `rel_x … rel_qz` (pose relative to the parent), `vx vy vz` and `wx wy wz`
/// (links' world velocities), `rotor_0 …` (models' rotor speeds); empty cells for what an
/// entity does not have.
class StateTable {
 public:
  /// @throws Error as read_state_channel.
  StateTable(const McapSummary::Channel& channel, std::string path);
  /// @throws Error naming the log time when the sample is malformed.
  std::vector<std::vector<std::pair<std::string, std::string>>> rows(Duration time,
                                                                     std::string_view data) const;

 private:
  Recording layout_;
};

/// The replay system (attached to the world, Update): each step it writes the last sample whose
/// log time is at or before the step's end (sim time + dt) into the registry. Reset goes back
/// to the first sample. @throws Error at configure as check_world, and during a step when a
/// sample is malformed (naming its log time).
std::unique_ptr<System> make_replay_system(std::shared_ptr<const Recording> recording);

}  // namespace kestrel::record
