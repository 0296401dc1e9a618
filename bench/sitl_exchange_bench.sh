#!/usr/bin/env bash
# Lockstep exchange cost (docs/performance.md, section "SITL lockstep"): the CPU the step thread
# spends per exchange (physics, every system and the bridge; not the time spent waiting, not the
# peer), as Kestrel prints it at exit (src/sitl/exchange_cost.h), with the node test peers
# answering at once on the same machine. Runs itself inside scripts/netns (loopback only).
#   usage: bench/sitl_exchange_bench.sh [BUILD_DIR] [RUNS]
# Worlds: Kestrel's X3 (worlds/x3_mission.sdf without its velocity controller and mission, which
# an autopilot replaces) and test/worlds/sitl_quad.sdf. Reference, measured in the same run: the
# X3 mission world flying itself (--no-transport, one thread: process CPU = step thread) per 4
# steps — what the same vehicle costs per 4 ms of sim time without an autopilot (its own
# controller and mission instead of the bridge; the difference of a 12 s and a 2 s run, so
# loading the world cancels out).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-3}
if [ "$(ip -o link show | grep -vc ': lo:')" -ne 0 ]; then
  exec "$root/scripts/netns" "$0" "$build" "$runs"
fi
kestrel=$build/src/cli/kestrel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export IGN_PARTITION="kestrel_bench_$$"
# The X3 without the plugins an autopilot replaces.
python3 - "$root/worlds/x3_mission.sdf" "$tmp/x3_sitl.sdf" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for f in ("gz-sim-multicopter-control-system", "kestrel-multicopter-mission-system"):
    text, n = re.subn(r'<plugin[^>]*filename="%s".*?</plugin>' % f, "", text, flags=re.S)
    assert n == 1, f
open(sys.argv[2], "w").write(text)
PY
cost() {  # PEER WORLD MODEL -> "p50 p99 mean" of the run's exchange cost [us]
  node "$root/test/sitl/$1_peer.js" "$kestrel" "$2" 0 --model "$3" --no-checks 2>&1 |
    sed -n 's/.*step-thread CPU per lockstep exchange.*: p50 \([0-9.]*\) us, p99 \([0-9.]*\) us, mean \([0-9.]*\) us.*/\1 \2 \3/p'
}
cpu_and_steps() {  # DURATION -> "CPU-seconds steps" of the X3 mission world flying itself
  local TIMEFORMAT='%U %S'
  { time "$kestrel" run "$root/worlds/x3_mission.sdf" --rtf 0 --duration "$1" --no-transport \
      >"$tmp/out" 2>/dev/null; } 2>"$tmp/time" || true
  echo "$(awk '{print $1 + $2}' "$tmp/time") $(sed -n 's/.* after \([0-9]*\) iterations.*/\1/p' "$tmp/out")"
}
reference() {  # CPU per 4 steps [us]: the difference of a 12 s and a 2 s run (loading cancels)
  local a b
  a=$(cpu_and_steps 2)
  b=$(cpu_and_steps 12)
  echo "$a $b" | awk '{printf "%.1f\n", ($3 - $1) / ($4 - $2) * 4 * 1e6}'
}
printf '%-34s %8s %8s %8s\n' "run" "p50 us" "p99 us" "mean us"
for i in $(seq "$runs"); do
  printf '%-34s %8s\n' "reference: X3 mission, 4 steps" "$(reference)"
  printf '%-34s %8s %8s %8s\n' "PX4 peer, X3" $(cost px4 "$tmp/x3_sitl.sdf" x3)
  printf '%-34s %8s %8s %8s\n' "PX4 peer, sitl_quad" $(cost px4 "$root/test/worlds/sitl_quad.sdf" quad)
  printf '%-34s %8s %8s %8s\n' "ArduPilot peer, X3 (2.5 steps)" $(cost ardupilot "$tmp/x3_sitl.sdf" x3)
done
