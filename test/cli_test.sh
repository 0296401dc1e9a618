#!/usr/bin/env bash
# End-to-end checks of the `kestrel` command: exit codes, messages, summary.
# Usage: test/cli_test.sh KESTREL_BINARY SOURCE_DIR
set -uo pipefail
kestrel=$1
src=$2
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib/checks.sh
source "$src/test/lib/checks.sh"  # expect, contains

expect 0 "help" "$kestrel" --help
contains "help lists run" "$tmp/out" "run"
expect 0 "run help" "$kestrel" run --help
for flag in --iterations --duration --rtf --paused --seed --quiet; do
  contains "run help describes $flag" "$tmp/out" "$flag"
done
expect 2 "no subcommand" "$kestrel"
expect 2 "unknown flag" "$kestrel" run "$src/worlds/demo.sdf" --bogus
expect 2 "conflicting limits" "$kestrel" run "$src/worlds/demo.sdf" --iterations 5 --duration 1
expect 2 "negative rtf" "$kestrel" run "$src/worlds/demo.sdf" --rtf -1
expect 2 "missing world file" "$kestrel" run "$tmp/nope.sdf"
contains "missing file named" "$tmp/err" "nope.sdf"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: usage errors are one line"; fails=$((fails+1)); }
printf '<sdf version="1.9"><world name="w">' >"$tmp/bad.sdf"
expect 2 "malformed world" "$kestrel" run "$tmp/bad.sdf"

expect 0 "demo runs" "$kestrel" run "$src/worlds/demo.sdf" --iterations 200 --rtf 0
contains "summary" "$tmp/out" "finished after 200 iterations: sim time 0.200 s"
contains "models listed" "$tmp/out" "demo::box"
# A URDF runs directly (as a model in an empty world); one whose conversion would drop links
# does not run (src/sdf/README.md, "URDF").
expect 0 "urdf runs" "$kestrel" run "$src/test/worlds/urdf_gripper.urdf" --iterations 100 --rtf 0 \
  --no-transport
contains "urdf model listed" "$tmp/out" "empty::gripper"
expect 1 "urdf traps stop the run" "$kestrel" run "$src/test/worlds/urdf_traps.urdf" \
  --iterations 10 --no-transport
contains "urdf trap named" "$tmp/err" "urdf_traps.urdf:11: [traps::arm] link 'arm' has no <inertial>"
expect 0 "quiet" "$kestrel" run "$src/worlds/demo.sdf" --iterations 10 --quiet
[ ! -s "$tmp/out" ] || { echo "FAIL: --quiet printed output"; fails=$((fails+1)); }

# Numbers must be finite and in range (CLI11's own checks let nan through; seeds wrapped).
for bad in "--duration nan" "--rtf nan" "--rtf -1" "--seed -1" "--seed 18446744073709551616" \
           "--seed 1.5"; do
  # shellcheck disable=SC2086
  expect 2 "refuses $bad" "$kestrel" run "$src/worlds/demo.sdf" --no-transport $bad
done
contains "names the value found" "$tmp/err" "found '1.5'"
expect 2 "truth rate nan" "$kestrel" run "$src/worlds/demo.sdf" --truth-csv "$tmp/t.csv" --truth-rate nan
expect 2 "paused without transport could never resume" \
  "$kestrel" run "$src/worlds/demo.sdf" --paused --no-transport
# Outputs never overwrite the world being read, and a directory is not an output file.
cp "$src/worlds/demo.sdf" "$tmp/w.sdf"
expect 2 "truth csv onto the world" "$kestrel" run "$tmp/w.sdf" --no-transport --iterations 1 \
  --truth-csv "$tmp/./w.sdf"
contains "says it would overwrite" "$tmp/err" "would be overwritten"
expect 2 "export onto the world" "$kestrel" export-mjcf "$tmp/w.sdf" -o "$tmp/w.sdf"
cmp -s "$tmp/w.sdf" "$src/worlds/demo.sdf" || { echo "FAIL: the world file was changed"; fails=$((fails+1)); }
expect 2 "export to a directory" "$kestrel" export-mjcf "$tmp/w.sdf" -o "$tmp"
expect 2 "make-swarm nan wind" "$kestrel" make-swarm 2 --wind nan -o "$tmp/s.sdf"
mkdir -p "$tmp/adir"
expect 2 "make-swarm to a directory" "$kestrel" make-swarm 2 -o "$tmp/adir"
[ ! -e "$tmp/adir.vehicle.sdf" ] || { echo "FAIL: make-swarm left a vehicle file"; fails=$((fails+1)); }

# A model file is checked in an empty world (as `gz sdf -k` checks it); findings name the model
# file's lines. `run` still wants a world.
mkdir -p "$tmp/models/crate"
cat >"$tmp/models/crate/model.sdf" <<'EOF'
<?xml version="1.0"?>
<sdf version="1.9">
  <model name="crate">
    <link name="body">
      <inertial><mass>-2</mass></inertial>
    </link>
  </model>
</sdf>
EOF
expect 1 "check a model file with an error" "$kestrel" check "$tmp/models/crate/model.sdf"
contains "names the model file's line" "$tmp/out" "$tmp/models/crate/model.sdf:5:"
contains "says it is a model" "$tmp/out" "model 'crate' (checked in an empty world)"
sed -i 's|<mass>-2</mass>|<mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia>|' \
  "$tmp/models/crate/model.sdf"
expect 0 "check a good model file" "$kestrel" check "$tmp/models/crate/model.sdf"
expect 0 "check a model file by its folder's name" sh -c 'cd "$1" && "$2" check model.sdf' sh \
  "$tmp/models/crate" "$(realpath "$kestrel")"
expect 2 "run wants a world" "$kestrel" run "$tmp/models/crate/model.sdf" --no-transport
contains "run says check takes a model" "$tmp/err" "kestrel check"

# An autopilot flag the world cannot take is a usage error, before anything listens.
expect 2 "px4 on a static model" "$kestrel" run "$src/worlds/x3_mission.sdf" --no-transport \
  --px4 ground_plane
contains "says the model is static" "$tmp/err" "static"

# An autopilot that never connects: the world holds, says what it waits for and where, and
# --sitl-connect-timeout ends the run with exit 1 (instance 97: no other test listens there).
expect 1 "px4 that never connects" "$kestrel" run "$src/test/worlds/sitl_quad.sdf" --no-transport \
  --px4 quad:97 --sitl-connect-timeout 0.3
contains "says what it waits for and where" "$tmp/err" \
  "waiting for PX4 instance 97 to connect on TCP 127.0.0.1:4657 (sim time 0.000 s held"
contains "gives up loudly" "$tmp/err" "PX4 instance 97 did not connect on TCP 127.0.0.1:4657 within 0.3 s"
expect 1 "ardupilot that never sends" "$kestrel" run "$src/test/worlds/sitl_quad.sdf" \
  --no-transport --ardupilot quad:97 --sitl-connect-timeout 0.3
contains "gives up loudly" "$tmp/err" "ArduPilot instance 97 sent no servo packet to UDP 127.0.0.1:9972"
expect 2 "connect timeout 0" "$kestrel" run "$src/test/worlds/sitl_quad.sdf" --px4 quad \
  --sitl-connect-timeout 0
expect 2 "answer timeout nan" "$kestrel" run "$src/test/worlds/sitl_quad.sdf" --px4 quad \
  --sitl-answer-timeout nan

# make-swarm writes the world and the vehicle it includes; both load by bare file name from their
# own folder (the include is relative to the world file), as a user types them.
mkdir -p "$tmp/swarm"
expect 0 "make-swarm" "$kestrel" make-swarm 3 -o "$tmp/swarm/s.sdf"
contains "make-swarm names both files" "$tmp/err" "s.vehicle.sdf"
expect 0 "swarm checks from its folder" sh -c 'cd "$1" && "$2" check s.sdf' sh "$tmp/swarm" "$(realpath "$kestrel")"
expect 2 "make-swarm refuses stdout" "$kestrel" make-swarm 3 -o -
contains "make-swarm says why not stdout" "$tmp/err" "two files"

# Exit codes through the binary, for every command: 0 success, 1 a run, check or command that
# fails, 2 unusable input, output or usage (before anything runs).
expect 1 "run: a mission not completed" "$kestrel" run "$src/worlds/x3_mission.sdf" --no-transport \
  --duration 1
contains "run: says the mission is not completed" "$tmp/out" "mission: NOT completed"
expect 0 "run: RTF and counts as written" "$kestrel" run "$src/worlds/demo.sdf" --no-transport \
  --iterations 5 --rtf 1
contains "run: RTF with two decimals" "$tmp/out" "RTF 1.00"
cat >"$tmp/one.sdf" <<'EOF'
<?xml version="1.0"?>
<sdf version="1.9">
  <world name="one">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="crate">
      <link name="body">
        <inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
        <velocity_decay/>
      </link>
    </model>
  </world>
</sdf>
EOF
expect 0 "run: one model" "$kestrel" run "$tmp/one.sdf" --no-transport --iterations 1
contains "run: '1 model', not '1 models'" "$tmp/out" "world 'one': 1 model,"
expect 0 "check: a warning only" "$kestrel" check "$tmp/one.sdf"
contains "check: the warning" "$tmp/out" "warning: $tmp/one.sdf:8:"
contains "check: singular counts" "$tmp/out" "1 model, 1 link, 0 joints"
expect 1 "check --strict: the warning is an error" "$kestrel" check --strict "$tmp/one.sdf"
contains "check --strict: reported as an error" "$tmp/out" "error: $tmp/one.sdf:8:"
contains "check --strict: counted as one" "$tmp/out" "1 error, 0 warnings"
if grep -q "^warning:" "$tmp/out"; then echo "FAIL: --strict lists warning: lines"; fails=$((fails+1)); fi
expect 1 "run --strict: refused" "$kestrel" run --strict "$tmp/one.sdf" --no-transport --iterations 1
contains "run --strict: lists it as an error" "$tmp/err" "error: $tmp/one.sdf:8:"
if grep -q "warning:" "$tmp/err"; then echo "FAIL: run --strict lists warning: lines"; fails=$((fails+1)); fi

# A misspelt element is an error naming the element meant (the run would use the default).
sed 's|<mass>2</mass>|<mas>2</mas>|' "$tmp/one.sdf" >"$tmp/mas.sdf"
expect 1 "check: misspelt element" "$kestrel" check "$tmp/mas.sdf"
contains "check: did you mean" "$tmp/out" \
  "error: $tmp/mas.sdf:7: [one::crate::body] <mas> is not an element of <inertial>: did you mean <mass>?"
expect 1 "run: misspelt element refused" "$kestrel" run "$tmp/mas.sdf" --no-transport --iterations 1
contains "run: did you mean" "$tmp/err" "did you mean <mass>?"
if grep -q "error: error:\|kestrel: error" "$tmp/err"; then
  echo "FAIL: doubled error label"; sed 's/^/  | /' "$tmp/err"; fails=$((fails+1))
fi
expect 1 "export-mjcf: a world with errors" "$kestrel" export-mjcf "$tmp/mas.sdf"
expect 0 "export-mjcf: a good world" "$kestrel" export-mjcf "$tmp/one.sdf"
contains "export-mjcf: MJCF on stdout" "$tmp/out" "<mujoco"

# Plugins that cannot be resolved: refused, each named with its file:line, unless
# --allow-missing-systems (then listed at the start and the end); a rendering-only world
# system is reported once and does not block.
cat >"$tmp/buoyancy.sdf" <<'EOF'
<?xml version="1.0"?>
<sdf version="1.9">
  <world name="buoyancy">
    <plugin filename="gz-sim-camera-video-recorder-system" name="gz::sim::systems::CameraVideoRecorder"/>
    <plugin filename="gz-sim-environment-preload-system" name="gz::sim::systems::EnvironmentPreload"/>
    <model name="sub">
      <link name="body">
        <inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      </link>
      <plugin filename="gz-sim-opticaltactileplugin-system" name="gz::sim::systems::OpticalTactilePlugin"/>
    </model>
  </world>
</sdf>
EOF
expect 1 "run: missing systems refused" "$kestrel" run "$tmp/buoyancy.sdf" --no-transport \
  --iterations 10
contains "run: names the world system" "$tmp/err" "$tmp/buoyancy.sdf:5: [buoyancy] plugin 'gz::sim::systems::EnvironmentPreload'"
contains "run: names the model system" "$tmp/err" "$tmp/buoyancy.sdf:10: [buoyancy::sub] plugin 'gz::sim::systems::OpticalTactilePlugin'"
contains "run: says how to run anyway" "$tmp/err" "--allow-missing-systems"
if grep -q "CameraVideoRecorder" "$tmp/err"; then echo "FAIL: a rendering-only system blocked"; fails=$((fails+1)); fi
expect 1 "check: missing systems are errors" "$kestrel" check "$tmp/buoyancy.sdf"
expect 0 "check --allow-missing-systems" "$kestrel" check --allow-missing-systems "$tmp/buoyancy.sdf"
expect 0 "run --allow-missing-systems" "$kestrel" run "$tmp/buoyancy.sdf" --no-transport \
  --iterations 10 --allow-missing-systems
contains "run: start lists what runs without" "$tmp/out" "kestrel: runs without 3 systems it declares:"
contains "run: end lists what ran without" "$tmp/out" "kestrel: ran without 3 systems it declares:"
contains "run: the missing one with its line" "$tmp/out" "gz::sim::systems::OpticalTactilePlugin on buoyancy::sub ($tmp/buoyancy.sdf:10)"
[ "$(grep -c "gz::sim::systems::CameraVideoRecorder' (filename" "$tmp/err")" -eq 1 ] ||
  { echo "FAIL: the rendering-only system is reported once"; fails=$((fails+1)); }

# A misspelt flag or command: the closest one and the command's --help.
expect 2 "run: misspelt flag" "$kestrel" run "$src/worlds/demo.sdf" --duraton 5
contains "run: suggests the flag" "$tmp/err" "unknown option --duraton: did you mean --duration? (see kestrel run --help)"
expect 2 "check: misspelt flag" "$kestrel" check --jsn "$tmp/one.sdf"
contains "check: suggests the flag" "$tmp/err" "did you mean --json? (see kestrel check --help)"
expect 2 "misspelt command" "$kestrel" chek "$tmp/one.sdf"
contains "suggests the command" "$tmp/err" "did you mean 'check'?"

# Unusable output: exit 2 before anything runs, for every command that writes a file.
expect 2 "run: truth CSV in a missing folder" "$kestrel" run "$src/worlds/demo.sdf" --no-transport \
  --iterations 5 --truth-csv "$tmp/no/such/dir/t.csv"
[ ! -s "$tmp/out" ] || { echo "FAIL: run started with an unusable output"; fails=$((fails+1)); }
expect 2 "run: recording in a missing folder" "$kestrel" run "$src/worlds/demo.sdf" --no-transport \
  --iterations 5 --record "$tmp/no/such/dir/r.mcap"
[ ! -s "$tmp/out" ] || { echo "FAIL: run started with an unusable recording"; fails=$((fails+1)); }
expect 2 "run: recording and truth CSV in one file" "$kestrel" run "$src/worlds/demo.sdf" \
  --no-transport --iterations 5 --record "$tmp/same" --truth-csv "$tmp/./same"
expect 2 "run: --record-topics without --record" "$kestrel" run "$src/worlds/demo.sdf" \
  --no-transport --iterations 5 --record-topics /tf
expect 2 "run: unknown recording compression" "$kestrel" run "$src/worlds/demo.sdf" \
  --no-transport --iterations 5 --record "$tmp/r.mcap" --record-compression gzip
expect 2 "run: recording rate nan" "$kestrel" run "$src/worlds/demo.sdf" \
  --no-transport --iterations 5 --record "$tmp/r.mcap" --record-rate nan
expect 2 "log info: not an MCAP file" "$kestrel" log info "$src/worlds/demo.sdf"
contains "log info: names the magic" "$tmp/err" "at byte 0: expected the MCAP magic"
expect 2 "export-mjcf: output in a missing folder" "$kestrel" export-mjcf "$tmp/one.sdf" \
  -o "$tmp/no/such/dir/m.xml"
expect 2 "make-swarm: output in a missing folder" "$kestrel" make-swarm 2 -o "$tmp/no/such/dir/s.sdf"
expect 2 "check: unreadable world" "$kestrel" check "$tmp/nope.sdf"
expect 2 "export-mjcf: unreadable world" "$kestrel" export-mjcf "$tmp/nope.sdf"
expect 2 "topic: no action" "$kestrel" topic -t /x
expect 2 "service: no service" "$kestrel" service -i
expect 2 "model: no model" "$kestrel" model

# check --json: stdout is only the JSON array, also for worlds whose systems log while
# configuring (Gazebo's wind, sensors and battery worlds).
shared=$src/../shared/worlds/gz
if [ -d "$shared" ]; then
  for w in wind sensors linear_battery_demo; do
    "$kestrel" check --json "$shared/$w.sdf" >"$tmp/out" 2>"$tmp/err"
    if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"; then
      echo "FAIL: check --json $w.sdf: stdout is not only JSON"; sed 's/^/  | /' "$tmp/out"
      fails=$((fails+1))
    fi
    if grep -Eq '^\[20[0-9][0-9]-' "$tmp/err"; then
      echo "FAIL: check --json $w.sdf: timestamped log lines"; fails=$((fails+1))
    fi
  done
else
  echo "skip: check --json on Gazebo's worlds ($shared not found)"
fi

# SIGINT stops a real-time run cleanly with exit 0 and a summary.
"$kestrel" run "$src/worlds/demo.sdf" --rtf 1 >"$tmp/out" 2>"$tmp/err" &
pid=$!
# Wait until the run has started (its header line is flushed before stepping); loading may be
# slow under sanitizers.
for _ in $(seq 600); do grep -q "kestrel: world" "$tmp/out" && break; sleep 0.1; done
sleep 0.3
kill -INT "$pid"
wait "$pid"
code=$?
[ "$code" -eq 0 ] || { echo "FAIL: SIGINT exit $code"; fails=$((fails+1)); }
contains "stopped by signal" "$tmp/out" "stopped by signal"

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all CLI checks passed"
