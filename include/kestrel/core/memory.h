#pragma once
/// @file How much memory a world may still take, for estimates made before allocating.
///
/// Loading a world allocates in two large steps that cannot be interrupted once started: the
/// SDF document (libsdformat 12 keeps ~2.5 MB per model) and the physics data (MuJoCo 2.2 sizes
/// its constraint arrays for the worst case). Both are estimated first and refused with the
/// numbers when they do not fit the budget below (src/sdf/README.md, src/physics/README.md).

#include <cstdint>
#include <string>

namespace kestrel {

struct MemoryBudget {
  std::uint64_t bytes = 0;  ///< what may still be allocated
  std::string source;       ///< what limits it, e.g. "MemAvailable in /proc/meminfo"
};

/// The smallest of: KESTREL_MEMORY_LIMIT (bytes, or with a K/M/G/T suffix, powers of 1024) minus
/// what the process already uses, the system's MemAvailable, the room under the cgroup's
/// memory.max, and the room under RLIMIT_AS. Unknown limits are skipped.
/// @throws Error if KESTREL_MEMORY_LIMIT is set but not a size.
MemoryBudget memory_budget();

/// "1.5 GiB", "640 MiB", "12 KiB", "100 B".
std::string format_bytes(double bytes);

}  // namespace kestrel
