#!/usr/bin/env bash
# Real-time factor of the perception world (bench/worlds/perception.sdf: a 640x480 camera and a
# 640x480 depth camera at 30 Hz, a 16x1800 lidar at 10 Hz) on one core and on two, each against
# the same world with --no-render measured in the same run (docs/performance.md).
#   bench/perception_rtf.sh [build-dir] [sim-seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
seconds="${2:-10}"
kestrel="$build/src/cli/kestrel"
world=bench/worlds/perception.sdf
rtf() {  # prints the RTF kestrel reports
  "$@" 2>/dev/null | sed -n 's/.*RTF \([0-9.]*\), .*/\1/p' | tail -1
}
for cores in 0 0,1; do
  n=$(( $(echo "$cores" | tr ',' '\n' | wc -l) ))
  base=$(rtf taskset -c "$cores" "$kestrel" run "$world" --duration "$seconds" --no-transport --no-render)
  full=$(rtf taskset -c "$cores" "$kestrel" run "$world" --duration "$seconds" --no-transport --render-threads "$n")
  echo "cores $cores: RTF with rendering $full, without (--no-render) $base"
done
