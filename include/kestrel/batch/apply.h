#pragma once
/// @file Drawn values applied to a loaded world before its systems are configured (the world
/// file on disk is never touched): what `kestrel batch` does for each run and `kestrel run --set`
/// does to replay one.

#include <span>

#include "kestrel/batch/plan.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/runner.h"

namespace kestrel::batch {

/// Applies each value to the world `world` of `registry`, in order:
/// - wind_speed [m/s, >= 0]: the horizontal magnitude of the world's <wind> linear velocity
///   (components::Wind, ENU), keeping its direction and vertical component;
/// - wind_direction [deg]: the direction the wind blows FROM, clockwise from north (0: from the
///   north, blowing south, -y; 90: from the east, blowing west, -x), keeping the magnitude;
/// - mass/MODEL/LINK [kg, > 0]: the link's mass, its inertia scaled by the same factor (same
///   shape and mass distribution).
/// - pose/MODEL[/NESTED...]/C, C one of x, y, z [m, world ENU] and roll, pitch, yaw [deg, SDF's
///   fixed-axis angles]: the model's world pose gets the components given (the rest kept from the
///   world file), its Pose relative to its parent follows, and everything below it keeps its
///   pose relative to the model (WorldPose moved with it: where physics builds the bodies). A
///   model's components are applied together, models in the order of their names (a parent
///   before its nested models).
/// - sensor/MODEL[/NESTED...]/LINK/SENSOR/PATH: the text (one number) of every element at PATH
///   below the sensor's <sensor> (`*`: every child at that level), in a new element with the
///   file's lines that replaces components::Sensor::element (read by its system at configure).
/// plugin/ and fault/ values are in the runner's systems: they need the overload below (given
/// here, a programmer error: KESTREL_DEMAND).
/// @throws Error(value.where, ...) for a value out of range, a model, link, sensor or sensor
///         element not in the world (naming what is there), or two keys setting one element.
void apply_values(std::span<const Value> values, ecs::Registry& registry, ecs::Entity world);

/// The systems that read the world's wind (components::Wind), by their built-in names: a wind
/// drawn for a world with none of them would change nothing, silently.
std::span<const std::string_view> wind_readers();

/// apply_values() on the runner's world, after checking that a wind_speed or wind_direction has
/// a reader among the runner's active systems; and plugin/MODEL[/NESTED...]/PLUGIN[/N]/PARAM:
/// the <PARAM> child (one number) of the model's <plugin> PLUGIN (built-in short name or name
/// attribute; N-th of several from 0, or * for all) gets the value, in a new element with the
/// file's lines that replaces the system's config; fault/N/ATTR: attribute ATTR (one number) of
/// the N-th <fault> of the world's FaultInjection plugin, the same way.
/// @pre the runner is not yet configured.
/// @throws Error(value.where, ...) naming the systems that read the wind, for a world without any;
///         for a plugin or fault value, naming what the model, plugin, schedule or fault has.
void apply_values(std::span<const Value> values, sim::Runner& runner);

}  // namespace kestrel::batch
