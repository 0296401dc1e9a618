#!/usr/bin/env bash
# End to end through transport: a mission and faults sent at run time to `kestrel run
# worlds/x3_mission.sdf` with `kestrel topic -p` (StringMsg carrying the SDF syntax). Bad ones
# are rejected with one log line and change nothing; good ones replace the mission / are applied
# and logged with their sim time; the replaced mission completes (exit 0).
# Runs itself inside scripts/netns (loopback only).
#   usage: runtime_commands_test.sh KESTREL_BINARY SOURCE_DIR
set -uo pipefail
kestrel=$1
src=$2
if [ "$(ip -o link show | grep -vc ': lo:')" -ne 0 ]; then
  exec "$src/scripts/netns" "$0" "$@"
fi
export IGN_PARTITION="kestrel_runtime_cmds_$$"
tmp=$(mktemp -d)
fails=0
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  sed 's/^/  | /' "$tmp/log"
  fails=$((fails + 1))
}
# wait_for TEXT [SECONDS]: until the run's log contains TEXT.
wait_for() {
  for _ in $(seq $((${2:-20} * 10))); do
    grep -qF -- "$1" "$tmp/log" && return 0
    sleep 0.1
  done
  fail "'$1' not logged"
  return 1
}
pub() {  # pub TOPIC TEXT
  "$kestrel" topic -p -t "$1" -m ignition.msgs.StringMsg "data: '$2'" > /dev/null 2>> "$tmp/pub"
}

# Real time, long enough to send commands while it flies (the demo mission takes 41 s; each
# `kestrel topic -p` takes up to 5 s under ASan); the new mission is short.
"$kestrel" run "$src/worlds/x3_mission.sdf" --rtf 1 --duration 120 > "$tmp/log" 2>&1 &
pid=$!
# Command topics are subscribed, not advertised (`topic -l` lists publishers): wait for the
# world's own publications instead.
for _ in $(seq 100); do
  "$kestrel" topic -l 2> /dev/null | grep -q '^/world/x3_mission/clock$' && break
  sleep 0.1
done
sleep 3  # the mission (start 1 s) is climbing

# Bad commands: one loud line each, nothing changes.
pub /model/x3/mission '<waypoint>1 2 3</waypoint><land/>'
wait_for "rejected the mission sent on topic /model/x3/mission" || true
grep -q "the first item must be <takeoff" "$tmp/log" || fail "rejection does not say why"
pub /world/x3_mission/fault '<fault type="rotor" model="x3" rotor="7" efficiency="0"/>'
wait_for "rejected the faults sent on topic /world/x3_mission/fault" || true
grep -q "model 'x3_mission::x3' has no rotor 7: no MulticopterMotorModel of it has <actuator_number> 7" "$tmp/log" || fail "fault rejection does not say why"
grep -q '\[fault\] t=.*: rotor' "$tmp/log" && fail "a rejected fault was applied"

# Good ones.
pub /world/x3_mission/fault '<fault type="rotor" model="x3" rotor="1" efficiency="0.95"/>'
wait_for "rotor 1 of x3_mission::x3 efficiency 0.95" || true
grep -qE '\[fault\] t=[0-9]+\.[0-9]{3} s: rotor 1 of' "$tmp/log" || fail "fault not logged with its sim time"
pub /model/x3/mission '<takeoff altitude="3"/><waypoint>2 2 3</waypoint><land/>'
wait_for "new mission from topic /model/x3/mission" || true

wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "kestrel run exited $rc (mission not completed?)"
grep -q "completed" "$tmp/log" || fail "mission not completed"
if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  sed 's/^/  pub: /' "$tmp/pub"
  exit 1
fi
echo "ok: runtime mission and fault commands"
