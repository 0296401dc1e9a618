#pragma once
// URDF files (internal to src/sdf): libsdformat 12 converts them; what its conversion loses
// without a word is found here, in the URDF's own XML, with file:line.

#include <string>
#include <vector>

#include "kestrel/sdf/finding.h"

namespace tinyxml2 {
class XMLElement;
}

namespace kestrel::sdf::detail {

/// A URDF <mimic>: joint `follower` = multiplier · `leader` + offset.
struct UrdfMimic {
  std::string follower, leader;
  double multiplier = 1, offset = 0;
  int line = 0;  ///< of the <mimic>
};

struct UrdfRobot {
  std::string name;  ///< <robot name>: the model's name
  std::vector<UrdfMimic> mimics;
};

/// Reads a URDF <robot> and reports, at `display`:line, what libsdformat 12's conversion would
/// drop or make immovable: a body (a link and the links fixed joints lump into it) without mass
/// — no <inertial> or mass 0 — which the conversion leaves out with every link below it (the root
/// link too, unless it is the link "world"); a <mimic> whose leader or follower cannot be
/// followed (errors); effort="0" on a moving joint (a warning: every command is clamped to 0).
UrdfRobot read_urdf(const tinyxml2::XMLElement& robot, const std::string& display,
                    Findings& findings);

}  // namespace kestrel::sdf::detail
