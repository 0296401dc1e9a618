#!/usr/bin/env bash
# End to end: `kestrel run` in the background, driven by Kestrel's own CLI (service, topic,
# model) and by the packaged ign-transport-topic / ign-transport-service (interop).
# ctest runs this inside scripts/netns (loopback only); it refuses to run outside a namespace
# whose only interface is loopback.
#   usage: transport_cli_test.sh KESTREL_BINARY SOURCE_DIR
set -euo pipefail
kestrel=$1
[ "$(ip -o link show | grep -vc ': lo:')" -eq 0 ] ||
  { echo "refusing to run: not in a loopback-only network namespace (use scripts/netns)"; exit 1; }
export IGN_PARTITION="kestrel_cli_$$"
unset IGN_IP
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# grep reading all its input (grep -q would exit early and SIGPIPE the writer under pipefail)
has() { grep "$@" >/dev/null; }
fail() { echo "FAIL: $*"; [ -f "$tmp/run.log" ] && sed 's/^/  run: /' "$tmp/run.log"; exit 1; }

cat > "$tmp/world.sdf" <<'SDF'
<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>1</real_time_factor></physics>
    <model name="ground"><static>true</static><link name="link">
      <collision name="c"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
    </link></model>
    <model name="box"><pose>0 0 0.5 0 0 0</pose>
      <link name="body">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>
SDF
cat > "$tmp/ball.sdf" <<'SDF'
<?xml version="1.0"?>
<sdf version="1.9"><model name="ball"><pose>3 0 2 0 0 0</pose><link name="link">
  <inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy><izz>0.004</izz></inertia></inertial>
  <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
</link></model></sdf>
SDF

"$kestrel" run "$tmp/world.sdf" --paused --quiet > "$tmp/run.log" 2>&1 &
pid=$!
# Discovery may list a service once and miss it in the next listing: one sighting is enough.
found=""
for _ in $(seq 100); do
  if "$kestrel" service -l 2>/dev/null | has -x /world/tw/control; then
    found=1
    break
  fi
  sleep 0.1
done
[ -n "$found" ] || fail "no /world/tw/control"

svc() {  # svc SERVICE REQTYPE REQ -> prints the reply
  "$kestrel" service -s "$1" --reqtype "$2" --reptype ignition.msgs.Boolean --req "$3" --timeout 5000
}
stats() { "$kestrel" topic -e -t /world/tw/stats -n 1; }

# World control: multi_step then check sim time exactly, reset.
svc /world/tw/control ignition.msgs.WorldControl 'multi_step: 25 pause: true' | has 'data: true' ||
  fail "multi_step"
sleep 0.5
stats | has 'iterations: 25' || fail "25 iterations after multi_step: $(stats)"
stats | grep -A2 '^sim_time' | has 'nsec: 25000000' || fail "sim time 25 ms: $(stats)"
svc /world/tw/control ignition.msgs.WorldControl 'pause: true reset { all: true }' | has 'data: true' ||
  fail "reset"
sleep 0.5
stats | has 'iterations:' && fail "iterations after reset: $(stats)"

# The packaged tools do not set IGN_IP themselves.
ign() { IGN_IP=127.0.0.1 "/usr/libexec/ignition/transport11/ign-transport-$1" "${@:2}"; }

# Clock echo (kestrel and the packaged tool).
"$kestrel" topic -e -t /clock -n 1 --json | has '"sim"' || fail "clock echo (json)"
ign topic -e -t /world/tw/clock -n 1 | has 'sim' ||
  fail "ign-transport-topic echo clock"

# Spawn from a file and by clone, set a pose, read it back, remove.
svc /world/tw/create ignition.msgs.EntityFactory "sdf_filename: \"$tmp/ball.sdf\"" |
  has 'data: true' || fail "create from file"
svc /world/tw/create/blocking ignition.msgs.EntityFactory 'clone_name: "box" name: "box2"' |
  has 'data: true' || fail "clone"
"$kestrel" model --list | has -- '- box2' || fail "model --list: $("$kestrel" model --list)"
svc /world/tw/set_pose ignition.msgs.Pose 'name: "box2" position { x: 2 y: 3 z: 0.5 }' |
  has 'data: true' || fail "set_pose"
"$kestrel" model -m box2 --pose | has '\[2.000000 3.000000 0.500000\]' ||
  fail "pose read back: $("$kestrel" model -m box2 --pose)"
"$kestrel" topic -e -t /world/tw/pose/info -n 1 | grep -A6 'name: "box2"' | has 'x: 2' ||
  fail "pose/info"
"$kestrel" model -m box2 --link | has 'Name: body' || fail "model --link"
svc /world/tw/remove ignition.msgs.Entity 'name: "ball" type: MODEL' | has 'data: true' ||
  fail "remove"
"$kestrel" model --list | has -- '- ball' && fail "ball still listed after remove"
# A bad request answers false, names the problem, and the world keeps going.
if svc /world/tw/remove ignition.msgs.Entity 'name: "nope"' >/dev/null 2>&1; then
  fail "removing an unknown model succeeded"
fi
grep -q "remove: no entity named 'nope'" "$tmp/run.log" || fail "no log line for the bad request"

# Interop with the packaged tools: list, echo, call.
# `ign topic|service -l` waits a fixed moment for discovery's answers: on a loaded machine (CI's
# ASan stage, tests side by side) the run answers later, so a list is asked up to 5 times.
listed() {  # listed topic|service NAME
  for _ in 1 2 3 4 5; do
    ign "$1" -l | has -x "$2" && return 0
    sleep 1
  done
  return 1
}
listed topic /world/tw/stats || fail "ign-transport-topic -l"
listed service /world/tw/create || fail "ign-transport-service -l"
ign service -s /world/tw/control --reqtype ignition.msgs.WorldControl \
  --reptype ignition.msgs.Boolean --timeout 5000 --req 'multi_step: 5 pause: true' |
  has 'data: true' || fail "ign-transport-service call"
"$kestrel" topic -i -t /world/tw/stats | has 'ignition.msgs.WorldStatistics' || fail "topic -i"

# Exit codes: 0 done, 1 what was asked for is not there, 2 usage.
set +e
"$kestrel" topic -p -t /x -m ignition.msgs.NoSuchType 'data: 1' 2>/dev/null; [ $? -eq 2 ] ||
  fail "unknown msgtype must exit 2"
"$kestrel" topic -i -t /no/such/topic 2>"$tmp/err"; [ $? -eq 1 ] || fail "topic -i on no topic must exit 1"
has -F "error: no publishers on topic [/no/such/topic]" "$tmp/err" || fail "topic -i says why"
"$kestrel" service -i -s /no/such/service 2>/dev/null; [ $? -eq 1 ] ||
  fail "service -i on no service must exit 1"
"$kestrel" service -s /no/such/service --reqtype ignition.msgs.Empty --reptype ignition.msgs.Empty \
  --req '' --timeout 200 2>"$tmp/err"; [ $? -eq 1 ] || fail "a call nobody answers must exit 1"
has -F "error: service call to /no/such/service timed out after 200 ms" "$tmp/err" ||
  fail "the timed-out call says so"
"$kestrel" model -m nope 2>/dev/null; [ $? -eq 1 ] || fail "model -m on no model must exit 1"
"$kestrel" model --list >/dev/null 2>&1; [ $? -eq 0 ] || fail "model --list must exit 0"
"$kestrel" model 2>/dev/null; [ $? -eq 2 ] || fail "model without --list or -m must exit 2"
set -e

kill -TERM "$pid"  # (background jobs of a script ignore SIGINT)
wait "$pid" || fail "kestrel run did not exit 0 on SIGTERM"
pid=""
echo "transport CLI end to end: OK"
