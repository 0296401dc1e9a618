#!/usr/bin/env bash
# End-to-end checks of the `kestrel` command: exit codes, messages, summary.
# Usage: test/cli_test.sh KESTREL_BINARY SOURCE_DIR
set -uo pipefail
kestrel=$1
src=$2
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect CODE NAME CMD... : runs CMD, checks its exit code; output in $tmp/out, $tmp/err.
expect() {
  local code=$1 name=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$code" ]; then
    echo "FAIL: $name: exit $got, expected $code"; sed 's/^/  stderr: /' "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $name"
  fi
}
contains() {  # contains NAME FILE TEXT
  if ! grep -qF -- "$3" "$2"; then
    echo "FAIL: $1: '$3' not in output"; sed 's/^/  | /' "$2"; fails=$((fails+1))
  fi
}

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
