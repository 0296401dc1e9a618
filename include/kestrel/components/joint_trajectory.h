#pragma once
/// @file The topics of a model's JointTrajectoryControllers, in their own header so that the
/// many files that include messages.h do not depend on them. Bridged by src/transport as
/// TopicInputs and TopicOutputs are (kestrel/components/messages.h): the latest trajectory
/// received on an entry's topic is written into it at the step boundary (`count` + 1); its
/// progress is published in PostUpdate when `progress_sequence` moved (again after a reset).

#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/core/time.h"

namespace kestrel::components {

/// One point of an ignition.msgs.JointTrajectory: values in the order of the message's
/// joint_names (an array may be shorter, or empty).
struct JointTrajectoryPoint {
  std::vector<double> positions;      ///< [rad or m]
  std::vector<double> velocities;     ///< [rad/s or m/s]
  std::vector<double> accelerations;  ///< [rad/s² or m/s²]
  std::vector<double> effort;         ///< [N·m or N]
  Duration time_from_start{0};        ///< since the trajectory's start
};

/// One controller's topics: ignition.msgs.JointTrajectory in on `topic`, ignition.msgs.Float
/// out on `progress_topic`.
struct JointTrajectoryEntry {
  std::string topic;
  bool has_stamp = false;  ///< the last message had header.stamp
  Duration stamp{0};       ///< its header.stamp (sim time), saturated to Duration's range
  std::vector<std::string> joint_names;
  std::vector<JointTrajectoryPoint> points;
  std::uint64_t count = 0;  ///< messages received so far

  std::string progress_topic;
  float progress = 0;  ///< fraction of the points reached, (0, 1]
  std::uint64_t progress_sequence = 0;
};

/// The JointTrajectoryControllers' entries of a model (one per controller, in configure order).
struct JointTrajectoryTopics {
  std::vector<JointTrajectoryEntry> entries;
};

}  // namespace kestrel::components
