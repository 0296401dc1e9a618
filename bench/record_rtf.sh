#!/usr/bin/env bash
# The recorder's cost on the X3 mission demo (worlds/x3_mission.sdf, --no-transport, as fast as
# possible): RTF without --record, with it by default (every channel at the viewer's rates, every
# sensor sample, a state sample every step), at every change (--record-rate 0), with
# --record-rate 100 and with only the state channel (--record-topics /kestrel/state, what replay
# needs), alternating in the same run, and each recording's size per simulated minute
# (docs/performance.md). The CPU time of each run is printed beside its RTF: on a loaded
# machine it varies far less than the wall-clock RTF.
#   bench/record_rtf.sh [build-dir] [rounds] [compression]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
rounds="${2:-3}"
compression="${3:-zstd}"
kestrel="$build/src/cli/kestrel"
world=worlds/x3_mission.sdf
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rtf() {  # prints the RTF kestrel reports and the process's CPU time (user + system) [s]
  /usr/bin/time -o "$tmp/time" -f '%U %S' "$@" >"$tmp/out" 2>/dev/null
  echo "$(sed -n 's/.*RTF \([0-9.]*\), .*/\1/p' "$tmp/out" | tail -1)" \
       "(cpu $(awk '{ printf "%.2f", $1 + $2 }' "$tmp/time") s)"
}
size() {  # MiB per simulated minute of a recording
  local bytes sim
  bytes=$(stat -c %s "$1")
  sim=$("$kestrel" log info "$1" | sed -n 's/^duration: *\([0-9.]*\) s.*/\1/p')
  awk -v b="$bytes" -v s="$sim" 'BEGIN { printf "%.2f MiB/min", b / s * 60 / 1048576 }'
}
ratio() { awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { printf "%.3f", a / b }'; }
for i in $(seq "$rounds"); do
  off=$(rtf "$kestrel" run "$world" --no-transport)
  def=$(rtf "$kestrel" run "$world" --no-transport --record "$tmp/def.mcap" --record-compression "$compression")
  all=$(rtf "$kestrel" run "$world" --no-transport --record "$tmp/all.mcap" --record-compression "$compression" --record-rate 0)
  r100=$(rtf "$kestrel" run "$world" --no-transport --record "$tmp/r100.mcap" --record-compression "$compression" --record-rate 100)
  state=$(rtf "$kestrel" run "$world" --no-transport --record "$tmp/state.mcap" --record-compression "$compression" --record-topics /kestrel/state)
  echo "round $i ($compression): RTF without --record $off;" \
       "default $def ($(ratio "$def" "$off"), $(size "$tmp/def.mcap"));" \
       "every change $all ($(ratio "$all" "$off"), $(size "$tmp/all.mcap"));" \
       "--record-rate 100 $r100 ($(ratio "$r100" "$off"), $(size "$tmp/r100.mcap"));" \
       "state only $state ($(ratio "$state" "$off"), $(size "$tmp/state.mcap"))"
done
