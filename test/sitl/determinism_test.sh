#!/usr/bin/env bash
# Lockstep determinism (docs/px4.md, docs/ardupilot.md): a test autopilot whose answers come at
# once, after a random 0–20 ms each, or once after a 3 s stall must give the same ground truth
# byte for byte — the autopilot's answers decide when sim time advances, not the wall clock.
#   test/sitl/determinism_test.sh NODE KESTREL WORLD px4|ardupilot
# Run inside scripts/netns (ctest is); the runs have no transport (no topics to collide with the
# transport tests ctest runs beside them). Exit 77 (skipped) when the peer is (node-mavlink).
set -uo pipefail
node=$1 kestrel=$2 world=$3 peer=$4
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
duration=5
run() {  # NAME PEER-OPTIONS...
  local name=$1
  shift
  echo "== $peer peer, $name"
  "$node" "$here/${peer}_peer.js" "$kestrel" "$world" 0 --duration "$duration" \
    --truth-csv "$out/$name.csv" --no-transport "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n 3 "$out/$name.log"
  if [ "$rc" -eq 77 ]; then exit 77; fi
  if [ "$rc" -ne 0 ]; then
    echo "FAILED: the $name run exited $rc:"
    cat "$out/$name.log"
    exit 1
  fi
}
run prompt
run jitter --jitter 20
run stall --stall-at 3 --stall-for 3
rows=$(($(wc -l <"$out/prompt.csv") - 1))
[ "$rows" -ge $((duration * 1000)) ] || { echo "FAILED: only $rows truth rows"; exit 1; }
status=0
for name in jitter stall; do
  if cmp -s "$out/prompt.csv" "$out/$name.csv"; then
    echo "$name: truth CSV identical to the prompt run ($rows rows)"
  else
    echo "FAILED: $name: truth CSV differs from the prompt run:"
    cmp "$out/prompt.csv" "$out/$name.csv" | head -n 1
    diff "$out/prompt.csv" "$out/$name.csv" | head -n 6
    status=1
  fi
done
grep -h "step-thread CPU per lockstep exchange" "$out"/*.log | head -n 3
exit $status
