#!/usr/bin/env bash
# The demo mission carrying x500_depth's camera payload (bench/worlds/x3_depth_mission.sdf)
# against the plain demo mission (worlds/x3_mission.sdf) in the same run, on two cores
# (docs/performance.md, "Rendering sensors"). Needs PX4's models in ../shared/models/px4.
#   bench/x3_depth_mission.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
export KESTREL_RESOURCE_PATH="$PWD/../shared/models/px4/models${KESTREL_RESOURCE_PATH:+:$KESTREL_RESOURCE_PATH}"
rtf() {
  "$@" 2>/dev/null | sed -n 's/.*RTF \([0-9.]*\), .*/\1/p' | tail -1
}
plain=$(rtf "$build/src/cli/kestrel" run worlds/x3_mission.sdf --no-transport)
depth=$(rtf "$build/src/cli/kestrel" run bench/worlds/x3_depth_mission.sdf --no-transport)
echo "mission RTF: with the x500_depth payload $depth, without $plain"
