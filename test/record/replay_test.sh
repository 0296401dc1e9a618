#!/usr/bin/env bash
# kestrel replay (src/record/README.md, "Replay"): the X3 mission recorded with --record and
# --truth-csv, replayed with --truth-csv, gives the same CSV byte for byte (at the default
# 100 Hz and at every step); a truncated recording replays up to its last complete chunk and
# says so; a file that is not MCAP, a recording without the state channel and a world that does
# not match are refused (exit 2) naming what is wrong.
# Usage: test/record/replay_test.sh KESTREL_BINARY SOURCE_DIR
set -uo pipefail
kestrel=$(realpath "$1")
src=$(realpath "$2")
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=../lib/checks.sh
source "$src/test/lib/checks.sh"  # expect, contains
same() {  # same NAME A B
  if cmp -s "$2" "$3"; then
    echo "ok: $1 ($(wc -l <"$2") lines identical)"
  else
    echo "FAIL: $1: $2 and $3 differ: $(cmp "$2" "$3" 2>&1 | head -1)"; fails=$((fails+1))
  fi
}

world="$src/worlds/x3_mission.sdf"
# The whole mission (exit 0: it completed), recorded, with the truth CSV at 100 Hz.
expect 0 "run the X3 mission with --record and --truth-csv" \
  "$kestrel" run "$world" --no-transport --quiet --record "$tmp/x3.mcap" --truth-csv "$tmp/run.csv"
expect 0 "replay it with --truth-csv" \
  "$kestrel" replay "$tmp/x3.mcap" --no-transport --rtf 0 --truth-csv "$tmp/replay.csv"
contains "replay names the world" "$tmp/out" "world 'x3_mission'"
same "truth CSV of the replay = the run's" "$tmp/run.csv" "$tmp/replay.csv"
rows=$(wc -l <"$tmp/run.csv")
[ "$rows" -gt 1000 ] || { echo "FAIL: the run's CSV has only $rows lines"; fails=$((fails+1)); }

# Every step (1 ms), on the first 3 s.
expect 1 "run 3 s with --truth-rate 0, recording every change" "$kestrel" run "$world" \
  --no-transport --quiet --duration 3 --record "$tmp/x3s.mcap" --record-rate 0 \
  --truth-csv "$tmp/run0.csv" --truth-rate 0
expect 0 "replay with --truth-rate 0" "$kestrel" replay "$tmp/x3s.mcap" --no-transport --quiet \
  --truth-csv "$tmp/replay0.csv" --truth-rate 0
same "every-step truth CSV of the replay = the run's" "$tmp/run0.csv" "$tmp/replay0.csv"

# Truncated in the middle: replays its complete chunks, says so, and the CSV is the beginning
# of the run's.
size=$(stat -c %s "$tmp/x3.mcap")
head -c $((size / 2)) "$tmp/x3.mcap" >"$tmp/cut.mcap"
expect 0 "replay a truncated recording" "$kestrel" replay "$tmp/cut.mcap" --no-transport \
  --truth-csv "$tmp/cut.csv"
contains "truncation said" "$tmp/err" "ends before its Data End"
contains "up to its last complete chunk" "$tmp/err" "replaying its complete chunks, up to sim time"
cut_rows=$(wc -l <"$tmp/cut.csv")
if [ "$cut_rows" -gt 100 ] && [ "$cut_rows" -lt "$rows" ] &&
   cmp -s -n "$(stat -c %s "$tmp/cut.csv")" "$tmp/cut.csv" "$tmp/run.csv"; then
  echo "ok: the truncated replay's CSV is the first $cut_rows of $rows lines of the run's"
else
  echo "FAIL: the truncated replay's CSV ($cut_rows lines) is not a beginning of the run's"
  fails=$((fails+1))
fi

# Not MCAP, no state channel, another world.
echo "sim_time,model" >"$tmp/not.mcap"
expect 2 "a file that is not MCAP" "$kestrel" replay "$tmp/not.mcap" --no-transport
contains "not MCAP named" "$tmp/err" "$tmp/not.mcap"
contains "not MCAP said" "$tmp/err" "not an MCAP file"
expect 1 "run recording only /tf" "$kestrel" run "$world" --no-transport --quiet --duration 0.1 \
  --record "$tmp/tf.mcap" --record-topics /tf
expect 2 "a recording without the state channel" "$kestrel" replay "$tmp/tf.mcap" --no-transport
contains "missing state channel said" "$tmp/err" "has no /kestrel/state channel"
expect 2 "a world that does not match" "$kestrel" replay "$tmp/x3s.mcap" --no-transport \
  --world "$src/worlds/demo.sdf"
contains "mismatch names the recording" "$tmp/err" "$tmp/x3s.mcap: does not match the world"
contains "mismatch names a recorded model" "$tmp/err" "model 'x3_mission::x3' was recorded and is not in the world"

# kestrel log to-csv: one CSV per channel, log time first, values as the run had them.
expect 0 "log to-csv every channel" "$kestrel" log to-csv "$tmp/x3s.mcap" -o "$tmp/csv"
for f in tf.csv scene.csv kestrel_state.csv world_x3_mission_clock.csv world_x3_mission_stats.csv; do
  [ -s "$tmp/csv/$f" ] || { echo "FAIL: to-csv wrote no $f ($(ls "$tmp/csv"))"; fails=$((fails+1)); }
done
clock="$tmp/csv/world_x3_mission_clock.csv"
contains "clock header" <(head -1 "$clock") "log_time,sim_time,sec,nsec"
n=$(awk -F, 'NR > 1 { split($1, p, "."); f = p[2]; while (length(f) < 9) f = f "0"
  if (p[1] f == sprintf("%d%09d", $3, $4)) ok++ } END { print ok + 0 }' "$clock")
[ "$n" -eq 3000 ] && echo "ok: 3000 clock rows, log time = the clock's sec and nsec" ||
  { echo "FAIL: $n of 3000 clock rows agree"; fails=$((fails+1)); }
# The state and /tf rows of the X3 at 1, 2 and 3 s: the truth CSV's pose and rotor speeds, as text.
for t in 1 2 3; do
  truth=$(awk -F, -v t="$t" '$1 == t && $2 == "x3" { print $3","$4","$5","$6","$7","$8","$9","$16","$17","$18","$19 }' "$tmp/run0.csv")
  state=$(awk -F, -v t="$t" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
    $1 == t && $2 == "x3_mission::x3" { print $c["x"]","$c["y"]","$c["z"]","$c["qw"]","$c["qx"]","$c["qy"]","$c["qz"]","$c["rotor_0"]","$c["rotor_1"]","$c["rotor_2"]","$c["rotor_3"] }' "$tmp/csv/kestrel_state.csv")
  tf=$(awk -F, -v t="$t" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
    $1 == t && $c["transforms.child_frame_id"] == "x3::base_link" { print $c["transforms.translation.x"]","$c["transforms.translation.y"]","$c["transforms.translation.z"] }' "$tmp/csv/tf.csv")
  if [ -n "$truth" ] && [ "$state" = "$truth" ] && [ "$tf" = "$(echo "$truth" | cut -d, -f1-3)" ]; then
    echo "ok: at $t s the state and /tf CSVs hold the truth CSV's values ($truth)"
  else
    echo "FAIL: at $t s: truth '$truth', state '$state', /tf '$tf'"; fails=$((fails+1))
  fi
done
expect 0 "log to-csv one channel into one file" "$kestrel" log to-csv "$tmp/x3s.mcap" \
  --topic '/world/*/clock' -o "$tmp/clock.csv"
same "the chosen channel's file = the one of all channels" "$tmp/clock.csv" "$clock"
expect 2 "log to-csv with a pattern that matches nothing" "$kestrel" log to-csv "$tmp/x3s.mcap" \
  --topic '/nope*' -o "$tmp/none"
contains "unmatched pattern lists the channels" "$tmp/err" "'/nope*' matches no channel"
expect 2 "log to-csv of a file that is not MCAP" "$kestrel" log to-csv "$tmp/not.mcap" -o "$tmp/n"
contains "not MCAP named" "$tmp/err" "not an MCAP file"

# Pause, step and seek through world control (transport; this test runs in scripts/netns): run
# to 2 s, seek back to 1.5 s (reset + run_to_sim_time), step 10: every row the replay's truth
# CSV gets on the way is the recorded run's row of the same sim time.
"$kestrel" replay "$tmp/x3s.mcap" --paused --quiet --truth-csv "$tmp/seek.csv" --truth-rate 0 \
  >"$tmp/seek.log" 2>&1 &
pid=$!
svc() {
  "$kestrel" service -s /world/x3_mission/control --reqtype ignition.msgs.WorldControl \
    --reptype ignition.msgs.Boolean --req "$1" --timeout 5000 2>&1 | grep -q 'data: true'
}
at() {  # at ITERATIONS: waits until the stats say so (up to 20 s)
  for _ in $(seq 200); do
    "$kestrel" topic -e -t /world/x3_mission/stats -n 1 2>/dev/null | grep -q "iterations: $1\$" && return 0
    sleep 0.1
  done
  return 1
}
found=""
for _ in $(seq 100); do
  if "$kestrel" service -l 2>/dev/null | grep -qx /world/x3_mission/control; then found=1; break; fi
  sleep 0.1
done
if [ -z "$found" ]; then
  echo "FAIL: the replay offers no /world/x3_mission/control"; sed 's/^/  | /' "$tmp/seek.log"
  fails=$((fails+1))
elif svc 'pause: true run_to_sim_time { sec: 2 }' && at 2000 &&
     svc 'pause: true reset { all: true } run_to_sim_time { sec: 1 nsec: 500000000 }' && at 1500 &&
     svc 'multi_step: 10 pause: true' && at 1510; then
  echo "ok: run to 2 s, seek back to 1.5 s, 10 steps through /world/x3_mission/control"
else
  echo "FAIL: world control of the replay did not reach 2 s, 1.5 s, 1.51 s"; fails=$((fails+1))
fi
kill -INT "$pid" 2>/dev/null
wait "$pid"
rows=$(($(wc -l <"$tmp/seek.csv") - 1))
last=$(tail -1 "$tmp/seek.csv" | cut -d, -f1)
if awk 'NR == FNR { want[$0] = 1; next } FNR > 1 && !($0 in want) { bad++ } END { exit bad > 0 }' \
     "$tmp/run0.csv" "$tmp/seek.csv" && [ "$rows" -eq 3510 ] && [ "$last" = "1.51" ]; then
  echo "ok: the $rows rows replayed while seeking (0.001 to 2 s, then 0.001 to 1.51 s) are the run's"
else
  echo "FAIL: the seek's truth CSV: $rows rows (3510 expected), last at $last s, or rows not the run's"
  fails=$((fails+1))
fi

# Gazebo's LogRecord plugin (src/record/README.md, "LogRecord"): `kestrel run` records the world
# into <path>/state.mcap as --record would, and the recording replays to the run's CSV.
python3 - "$src/worlds/demo.sdf" "$tmp/lr.sdf" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index("<model")
plugin = ('<plugin filename="gz-sim-log-system" name="gz::sim::systems::LogRecord">'
          '<path>logs/lr</path></plugin>\n    ')
open(sys.argv[2], "w").write(s[:i] + plugin + s[i:])
PY
line=$(grep -n "LogRecord" "$tmp/lr.sdf" | cut -d: -f1)
cd "$tmp" || exit 1
expect 0 "a world declaring LogRecord runs" \
  "$kestrel" run lr.sdf --no-transport --duration 1 --truth-csv lr_run.csv --truth-rate 0
cd - >/dev/null || exit 1
contains "LogRecord names its file" "$tmp/out" "kestrel: LogRecord (lr.sdf:$line): recording to $tmp/logs/lr/state.mcap"
expect 0 "its recording replays" "$kestrel" replay "$tmp/logs/lr/state.mcap" --no-transport \
  --truth-csv "$tmp/lr_replay.csv" --truth-rate 0 --quiet
same "LogRecord's recording replays to the run's truth CSV" "$tmp/lr_run.csv" "$tmp/lr_replay.csv"
expect 0 "--record beside LogRecord" "$kestrel" run "$tmp/lr.sdf" --no-transport --duration 0.1 \
  --record "$tmp/cli.mcap"
contains "--record records instead" "$tmp/out" "kestrel: --record $tmp/cli.mcap records; the LogRecord plugin"
sed 's|<path>logs/lr</path>|<record_resources>true</record_resources>|' "$tmp/lr.sdf" >"$tmp/lr_res.sdf"
expect 2 "LogRecord <record_resources>true is refused" "$kestrel" run "$tmp/lr_res.sdf" --no-transport --duration 1
contains "record_resources at its line" "$tmp/err" "lr_res.sdf:$line: LogRecord <record_resources>true: Kestrel does not copy"
printf 'world: %s\nruns: 2\n' "$tmp/lr.sdf" >"$tmp/lr_plan.yaml"
cd "$tmp" || exit 1
expect 2 "a batch of a LogRecord world without record: true is refused" \
  "$kestrel" batch lr_plan.yaml --out lr_batch --quiet
cd - >/dev/null || exit 1
contains "the batch says why" "$tmp/err" "the world declares LogRecord: every run of the batch would write $tmp/logs/lr/state.mcap"
# Gazebo's own LogRecord world, with its default folder ~/.gz/sim/log/<time> under a test HOME.
gz="$src/../shared/worlds/gz/log_record_dbl_pendulum.sdf"
if [ -f "$gz" ]; then
  expect 0 "gz-sim's log_record_dbl_pendulum runs and records" \
    env HOME="$tmp/home" "$kestrel" run "$gz" --no-transport --duration 0.5
  rec=$(ls "$tmp"/home/.gz/sim/log/*/state.mcap 2>/dev/null | head -1)
  if [ -n "$rec" ] && "$kestrel" log info "$rec" >"$tmp/info" 2>&1 && grep -q "/kestrel/state" "$tmp/info"; then
    echo "ok: its recording in ~/.gz/sim/log/<time>/state.mcap holds the state channel"
  else
    echo "FAIL: no readable recording under $tmp/home/.gz/sim/log"; fails=$((fails+1))
  fi
else
  echo "SKIPPED: $gz not found (the shared folder beside the repository)"
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all replay checks passed"
