#pragma once
// SDFormat's own specification (libsdformat 12: SDF 1.9) as the loader's reference for which
// elements are valid where (internal to src/sdf).

#include <string>

namespace kestrel::sdf::detail {

/// The SDF element that `child`, not valid inside `parent`, is a misspelling of ("mas" in
/// "inertial" → "mass"): the closest valid child of `parent` within kestrel::closest_match's
/// distance, else empty. Valid inside `parent` means defined inside any element of that name in
/// the specification (`<ode>` under `<physics>` and under `<friction>` both count). Namespaced
/// elements (`kestrel:x`, `gz:y`) are never misspellings.
std::string misspelling_of(const std::string& parent, const std::string& child);

/// The error for a misspelt element: "<mas> is not an element of <inertial>: did you mean
/// <mass>? (...)".
std::string misspelling_message(const std::string& parent, const std::string& child,
                                const std::string& meant);

}  // namespace kestrel::sdf::detail
