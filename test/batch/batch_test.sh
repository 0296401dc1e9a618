#!/usr/bin/env bash
# kestrel batch end to end on a short X3 mission (test/batch/short_x3.py): rows and parameters
# as drawn, the replay command reproducing a run, -j 1 = -j 2 = shards 0/2 + 1/2 merged = shards
# from OpenMPI's environment merged, resume, bad plans with file:line, timed_out and crashed.
# Usage: batch_test.sh KESTREL REPO
set -u
kestrel=$(realpath "$1")
repo=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$repo/test/lib/checks.sh"
cd "$tmp"
same() {  # same NAME A.sqlite B.sqlite
  if python3 "$repo/test/batch/compare.py" "$2" "$3" >"$tmp/cmp" 2>&1; then echo "ok: $1"
  else echo "FAIL: $1"; sed 's/^/  | /' "$tmp/cmp"; fails=$((fails+1)); fi
}
sql() { python3 -c 'import sqlite3,sys; [print("|".join(map(str, r))) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]' "$@"; }

python3 "$repo/test/batch/short_x3.py" "$repo" x3_short.sdf || exit 1
cat >plan.yaml <<'PLAN'
world: x3_short.sdf
runs: 4
seed: 11
vary:
  wind_speed: {uniform: [0, 1]}        # m/s (the X3 misses its 0.2 m acceptance radius in 2.4 m/s)
  wind_direction: {uniform: [0, 360]}  # deg, from north, clockwise
PLAN

expect 0 "four runs with -j 1, every mission completed" "$kestrel" batch plan.yaml --out j1 -j 1
contains "summary" "$tmp/out" "4 runs in j1/results.sqlite: 4 completed, 0 failed, 0 crashed, 0 timed_out"
sql j1/results.sqlite "SELECT run_id, outcome, mission_completed FROM runs" >rows
if [ "$(cat rows)" = "$(printf '0|completed|1\n1|completed|1\n2|completed|1\n3|completed|1')" ]; then
  echo "ok: rows 0..3, completed"; else echo "FAIL: rows:"; cat rows; fails=$((fails+1)); fi
# Parameters as drawn: in range, distinct per run, seeds distinct; metrics filled.
python3 - j1/results.sqlite <<'PY' || fails=$((fails+1))
import json, sqlite3, sys
rows = list(sqlite3.connect(sys.argv[1]).execute(
    "SELECT seed, params, max_tracking_error_m, energy_J, min_battery, final_x_m, final_z_m, "
    "faults_applied, sim_time_s FROM runs ORDER BY run_id"))
p = [json.loads(r[1]) for r in rows]
ok = all(list(q) == ["wind_speed", "wind_direction"] for q in p)
ok &= all(0 <= q["wind_speed"] < 1 and 0 <= q["wind_direction"] < 360 for q in p)
ok &= len({q["wind_speed"] for q in p}) == 4 and len({r[0] for r in rows}) == 4
# Landed near 2 m east, battery drawn, tracking error bounded, no faults.
ok &= all(abs(r[5] - 2) < 0.5 and r[6] < 0.2 and r[3] > 0 and 0 < r[4] < 1 and 0 < r[2] < 2
          and r[7] == 0 and r[8] > 3 for r in rows)
print("ok: parameters as drawn, metrics filled" if ok else f"FAIL: rows {rows}")
sys.exit(0 if ok else 1)
PY

# The replay command of a run (what the report prints) reproduces its final position.
read -r seed speed dir x <<<"$(python3 -c '
import json, sqlite3
s, p, x = sqlite3.connect("j1/results.sqlite").execute("SELECT seed, params, final_x_m FROM runs WHERE run_id = 2").fetchone()
p = json.loads(p)
print(s, repr(p["wind_speed"]), repr(p["wind_direction"]), "%.3f" % x)')"
expect 0 "replaying run 2 with kestrel run --seed --set" "$kestrel" run x3_short.sdf --no-transport \
  --seed "$seed" --set "wind_speed=$speed" --set "wind_direction=$dir"
contains "replayed final position" "$tmp/out" "at ($x,"

# The report: self-contained HTML, the success rate, histograms, replay commands.
expect 0 "report" "$kestrel" batch report j1
contains "report printed" "$tmp/out" "4 runs, 100.0 % completed: j1/report.html"
contains "success rate" j1/report.html "Success rate: 100.0 %"
contains "a histogram" j1/report.html "<svg width="
contains "percentiles" j1/report.html "<th>p95</th>"
contains "run 2's replay command" j1/report.html \
  "kestrel run x3_short.sdf --no-transport --rtf 0 --seed $seed --set wind_speed="
if grep -qiE '<script|https?:|src=|<link' j1/report.html; then
  echo "FAIL: the report refers to something outside itself"; fails=$((fails+1)); fi

expect 0 "the same plan with -j 2" "$kestrel" batch plan.yaml --out j2 -j 2
same "-j 1 and -j 2 give the same rows" j1/results.sqlite j2/results.sqlite

expect 0 "shard 0/2" "$kestrel" batch plan.yaml --out s0 --shard 0/2 -j 1
contains "shard 0/2 runs two" "$tmp/out" "2 runs of plan.yaml (shard 0/2 from --shard)"
# A shard alone: the merge and the report name the plan's runs that are missing.
expect 0 "merge s0 alone" "$kestrel" batch merge half s0
contains "merge names the missing runs" "$tmp/out" "2 runs of the plan's 4 still missing: 1, 3"
expect 0 "report of half the runs" "$kestrel" batch report half
contains "report names the missing runs" half/report.html \
  "2 of the plan's 4 runs are missing (not run yet, or a shard not merged): 1, 3."
if grep -q "are missing" j1/report.html; then
  echo "FAIL: a complete batch's report says runs are missing"; fails=$((fails+1)); fi
expect 0 "shard 1/2" "$kestrel" batch plan.yaml --out s1 --shard 1/2 -j 1
expect 0 "merge s0 s1" "$kestrel" batch merge merged s0 s1
contains "merge counts" "$tmp/out" "4 runs from 2 databases into merged/results.sqlite"
same "shards 0/2 + 1/2 merged give the rows of one batch" j1/results.sqlite merged/results.sqlite
expect 0 "merging again adds nothing" "$kestrel" batch merge merged s0 s1
contains "merge again" "$tmp/out" "(4 runs already there)"

# Ranks from OpenMPI's environment (what mpirun sets) into DIR/shard-I-of-N, merged from DIR.
for rank in 0 1; do
  expect 0 "rank $rank of 2 from OMPI_COMM_WORLD_*" env OMPI_COMM_WORLD_RANK=$rank \
    OMPI_COMM_WORLD_SIZE=2 "$kestrel" batch plan.yaml --out mpi -j 1
done
expect 0 "merge mpi" "$kestrel" batch merge mpi
same "OpenMPI ranks merged give the rows of one batch" j1/results.sqlite mpi/results.sqlite

# Resume: done runs are skipped; a run removed from the database is run again, the same.
expect 0 "a re-run skips the runs done" "$kestrel" batch plan.yaml --out j2 -j 2
contains "nothing to run" "$tmp/out" "4 already in j2/results.sqlite, 0 to run"
python3 -c 'import sqlite3; d = sqlite3.connect("j2/results.sqlite"); d.execute("DELETE FROM runs WHERE run_id = 1"); d.commit()'
expect 0 "resume after losing run 1" "$kestrel" batch plan.yaml --out j2 -j 2
contains "one to run" "$tmp/out" "3 already in j2/results.sqlite, 1 to run"
same "resumed rows equal" j1/results.sqlite j2/results.sqlite
# Another plan into the same folder is refused.
sed 's/seed: 11/seed: 12/' plan.yaml >other.yaml
expect 2 "another plan's folder is refused" "$kestrel" batch other.yaml --out j2
contains "another plan" "$tmp/err" "holds the results of another plan (plan.yaml"

# Per-run outputs: each run's truth CSV is the one `kestrel run --truth-csv` writes with the run's
# seed and values, byte for byte; each run's recording reads back (kestrel log info), replays to
# the same CSV, and the report names it.
cat >out.yaml <<'PLAN'
world: x3_short.sdf
runs: 2
seed: 11
truth_csv: true
record: true
vary:
  wind_speed: {uniform: [0, 1]}
PLAN
expect 0 "a plan writing each run's truth CSV and recording" "$kestrel" batch out.yaml --out outs -j 2
for k in 0 1; do
  for f in outs/runs/run-$k.csv outs/runs/run-$k.mcap; do
    [ -s "$f" ] || { echo "FAIL: no $f"; fails=$((fails+1)); }
  done
done
read -r seed speed <<<"$(python3 -c '
import json, sqlite3
s, p = sqlite3.connect("outs/results.sqlite").execute("SELECT seed, params FROM runs WHERE run_id = 1").fetchone()
print(s, repr(json.loads(p)["wind_speed"]))')"
expect 0 "run 1 again with kestrel run --truth-csv" "$kestrel" run x3_short.sdf --no-transport \
  --rtf 0 --seed "$seed" --set "wind_speed=$speed" --truth-csv run1.csv
if cmp -s run1.csv outs/runs/run-1.csv; then echo "ok: run 1's truth CSV is kestrel run's"; else
  echo "FAIL: run 1's truth CSV differs from kestrel run's"; fails=$((fails+1)); fi
if cmp -s outs/runs/run-0.csv outs/runs/run-1.csv; then
  echo "FAIL: runs 0 and 1 (other winds) wrote the same truth CSV"; fails=$((fails+1)); fi
expect 0 "run 1's recording reads back" "$kestrel" log info outs/runs/run-1.mcap
contains "the recording has the world's poses" "$tmp/out" "/tf   "
contains "the recording has the replay state" "$tmp/out" "/kestrel/state   "
expect 0 "run 1's recording replays" "$kestrel" replay outs/runs/run-1.mcap --no-transport \
  --truth-csv replayed1.csv
if cmp -s replayed1.csv outs/runs/run-1.csv; then echo "ok: the replay writes run 1's truth CSV"
else echo "FAIL: the replay of run 1 writes another truth CSV"; fails=$((fails+1)); fi
expect 0 "report of the recorded runs" "$kestrel" batch report outs
contains "the report names each run's recording" outs/report.html \
  "kestrel replay outs/runs/run-1.mcap"
printf 'world: x3_short.sdf\nruns: 1\nrecord: yes\n' >bad0.yaml
expect 2 "record takes true or false" "$kestrel" batch bad0.yaml --out bad
contains "record: yes" "$tmp/err" "bad0.yaml:3:9: record: expected true or false, found 'yes'"

# A resume after the world file changed is refused (its runs would mix two worlds); restored, it
# resumes.
cp x3_short.sdf changing.sdf
sed 's/x3_short.sdf/changing.sdf/' plan.yaml >changing.yaml
expect 0 "a batch of a world that will change" "$kestrel" batch changing.yaml --out changing -j 2
cp changing.sdf changing.orig
echo '<!-- changed -->' >>changing.sdf
python3 -c 'import sqlite3; d = sqlite3.connect("changing/results.sqlite"); d.execute("DELETE FROM runs WHERE run_id = 3"); d.commit()'
expect 2 "resuming with the world file changed is refused" "$kestrel" batch changing.yaml --out changing
contains "the world changed" "$tmp/err" "changing.yaml: the world file changing.sdf changed since the runs already in changing/results.sqlite were run"
cp changing.orig changing.sdf
expect 0 "with the world restored it resumes" "$kestrel" batch changing.yaml --out changing
contains "one to run" "$tmp/out" "3 already in changing/results.sqlite, 1 to run"
# A database of runs without the world's text (a Kestrel before it was kept) cannot be checked:
# refused, not resumed as if the world were the same.
cp -r changing unkept
python3 -c 'import sqlite3; d = sqlite3.connect("unkept/results.sqlite"); d.execute("DELETE FROM batch WHERE key = '"'"'world'"'"'"); d.execute("DELETE FROM runs WHERE run_id = 3"); d.commit()'
expect 2 "resuming runs whose world text was not kept is refused" "$kestrel" batch changing.yaml --out unkept
contains "no world text" "$tmp/err" "unkept/results.sqlite holds 3 runs but not the text of the world file they ran"
# Shards of another world do not merge: shard 1/2 run after the file changed.
expect 0 "shard 0/2 of the world as it was" "$kestrel" batch changing.yaml --out w0 --shard 0/2
echo '<!-- changed -->' >>changing.sdf
expect 0 "shard 1/2 of the changed world" "$kestrel" batch changing.yaml --out w1 --shard 1/2
expect 2 "merging shards of two worlds is refused" "$kestrel" batch merge wmerged w0 w1
contains "merge of two worlds" "$tmp/err" "batch merge: w1/results.sqlite was run with another world file than the runs already in wmerged/results.sqlite"
cp changing.orig changing.sdf
# The world file edited while the batch runs: the result that follows is not recorded, the
# batch stops (exit 2), and with the file restored the same command resumes.
"$kestrel" batch changing.yaml --out during -j 1 >"$tmp/out" 2>"$tmp/err" &
batch=$!
for _ in $(seq 3000); do [ -e during/logs/run-1.log ] && break; sleep 0.01; done
echo '<!-- changed -->' >>changing.sdf
wait $batch
code=$?
if [ "$code" -eq 2 ] && grep -qF "changing.yaml: the world file changing.sdf changed while the batch ran: run 1 and those running beside it are not recorded" "$tmp/err"; then
  echo "ok: a world edited during the batch stops it before run 1 is recorded"
else
  echo "FAIL: world edited during the batch: exit $code"; sed 's/^/  | /' "$tmp/err" | tail -5; fails=$((fails+1))
fi
[ "$(sql during/results.sqlite 'SELECT run_id FROM runs')" = "0" ] ||
  { echo "FAIL: rows after the edit: $(sql during/results.sqlite 'SELECT run_id FROM runs' | tr '\n' ' ')"; fails=$((fails+1)); }
cp changing.orig changing.sdf
expect 0 "restored, the batch resumes" "$kestrel" batch changing.yaml --out during -j 1
contains "three to run" "$tmp/out" "1 already in during/results.sqlite, 3 to run"

# Bad plans: file:line:column and what was expected, before anything runs.
printf 'world: x3_short.sdf\nruns: 2\nsede: 3\n' >bad1.yaml
expect 2 "unknown key" "$kestrel" batch bad1.yaml --out bad
contains "unknown key" "$tmp/err" "bad1.yaml:3:1: unknown key 'sede' (did you mean 'seed'?)"
printf 'world: x3_short.sdf\nruns: 2\nvary:\n  wind_speed: {uniform: [0, fast]}\n' >bad2.yaml
expect 2 "bad number" "$kestrel" batch bad2.yaml --out bad
contains "bad number" "$tmp/err" "bad2.yaml:4:29: wind_speed.uniform: expected a finite number, found 'fast'"
printf 'world: x3_short.sdf\nruns: 2\nvary:\n  mass/x3/no_such_link: [1]\n' >bad3.yaml
expect 2 "a link the world does not have, before anything runs" "$kestrel" batch bad3.yaml --out bad
contains "missing link" "$tmp/err" "bad3.yaml:4:3: mass/x3/no_such_link: the world has no link"
printf 'world: x3_short.sdf\nruns: 2\nvary:\n  pose/x4/yaw: [1]\n' >bad4.yaml
expect 2 "a model the world does not have, before anything runs" "$kestrel" batch bad4.yaml --out bad
contains "missing model" "$tmp/err" "bad4.yaml:4:3: pose/x4/yaw: the world has no model 'x3_mission::x4' (models in 'x3_mission': ground_plane, x3)"
[ -e bad/results.sqlite ] && { echo "FAIL: a bad plan created a database"; fails=$((fails+1)); }

printf 'world: x3_short.sdf\nruns: 2\nvary:\n  plugin/x3/MulticopterMotorModel/*/motorConstnt: [1e-5]\n' >bad5.yaml
expect 2 "a plugin parameter the world does not have, before anything runs" "$kestrel" batch bad5.yaml --out bad
contains "missing parameter" "$tmp/err" "bad5.yaml:4:3: plugin/x3/MulticopterMotorModel/*/motorConstnt: the MulticopterMotorModel plugin at"
contains "missing parameter" "$tmp/err" "has no <motorConstnt> (did you mean 'motorConstant'?)"
[ -e bad/results.sqlite ] && { echo "FAIL: a bad plan created a database"; fails=$((fails+1)); }

printf 'world: x3_short.sdf\nruns: 2\nvary:\n  fault/0/time: [5]\n' >bad6.yaml
expect 2 "a fault the world does not schedule, before anything runs" "$kestrel" batch bad6.yaml --out bad
contains "no fault" "$tmp/err" "bad6.yaml:4:3: fault/0/time: the FaultInjection plugin at"
contains "no fault" "$tmp/err" "schedules 0 faults"
[ -e bad/results.sqlite ] && { echo "FAIL: a bad plan created a database"; fails=$((fails+1)); }

# A grid without runs: one run per combination, in order (the last parameter fastest).
cat >grid.yaml <<'PLAN'
world: x3_short.sdf
seed: 11
grid:
  wind_speed: [0, 0.5]
  pose/x3/yaw: [0, 90]
PLAN
expect 0 "a 2 x 2 grid" "$kestrel" batch grid.yaml --out grid -j 2
python3 - grid/results.sqlite <<'PY' || fails=$((fails+1))
import json, sqlite3, sys
rows = [(k, o, json.loads(p)) for k, o, p in sqlite3.connect(sys.argv[1]).execute(
    "SELECT run_id, outcome, params FROM runs ORDER BY run_id")]
want = [(k, "completed", {"wind_speed": s, "pose/x3/yaw": y})
        for k, (s, y) in enumerate([(0, 0), (0, 90), (0.5, 0), (0.5, 90)])]
ok = rows == want and all(list(r[2]) == ["wind_speed", "pose/x3/yaw"] for r in rows)
print("ok: the grid's four runs in order" if ok else f"FAIL: grid rows {rows}")
sys.exit(0 if ok else 1)
PY

# An initial pose through --set (the batch's parse and apply): after one step physics has the X3
# where it was put (on the ground, z as in the file), not at the file's origin. Exit 1: one step
# does not complete the mission.
expect 1 "kestrel run --set pose" "$kestrel" run x3_short.sdf --no-transport --iterations 1 \
  --set pose/x3/x=1 --set pose/x3/y=5 --set pose/x3/yaw=90
contains "the X3 starts at (1, 5)" "$tmp/out" "x3_mission::x3"
contains "the X3 starts at (1, 5)" "$tmp/out" "at (1.000, 5.000, 0.056) m"

# timed_out: a wall-clock limit far below a run's time; crashed: a run killed by a signal.
printf 'world: x3_short.sdf\nruns: 1\ntimeout: 0.05\n' >slow.yaml
expect 1 "a run past its wall-clock limit" "$kestrel" batch slow.yaml --out slow
sql slow/results.sqlite "SELECT outcome, message FROM runs" >rows
contains "timed_out" rows "timed_out|still running after the wall-clock limit of 0.05 s; killed"
printf 'world: %s\nruns: 1\nduration: 100000\n' "$repo/worlds/demo.sdf" >long.yaml
start_long() {  # start_long DIR: a batch of one endless run in the background; $batch, $kids
  "$kestrel" batch long.yaml --out "$1" -j 1 >/dev/null 2>"$tmp/$1.err" &
  batch=$!
  # The run's child (not the one that first checks the plan) writes its log.
  for _ in $(seq 200); do [ -e "$1/logs/run-0.log" ] && break; sleep 0.1; done
  sleep 0.3
  kids=$(pgrep -P $batch)
}
start_long crash
# SIGABRT (an assertion's end): ASan would catch a SIGSEGV and exit 1 instead, still `crashed`.
kill -ABRT $kids
wait $batch
sql crash/results.sqlite "SELECT outcome, message FROM runs" >rows
contains "crashed" rows "crashed|killed by signal 6 (Aborted); see crash/logs/run-0.log"

# SIGINT stops the batch: exit 130, no child left running, the message says the finished runs
# are kept (resume, above, shows that they are).
start_long int
kill -INT $batch
wait $batch
code=$?
if [ $code -eq 130 ]; then echo "ok: SIGINT stops the batch with 130"; else
  echo "FAIL: SIGINT: exit $code, expected 130"; fails=$((fails+1)); fi
for k in $kids; do
  kill -0 "$k" 2>/dev/null && { echo "FAIL: child $k still running"; fails=$((fails+1)); }
done
contains "interrupted" "$tmp/int.err" "stopped by signal 2: the runs finished before it are in int/results.sqlite"

# A run stopped from outside (scancel signals every process of the job with SIGTERM) is an
# interruption, not a crash: exit 128 + 15 and no row, so that a resume runs it again.
start_long term
kill -TERM $kids
wait $batch
code=$?
if [ $code -eq 143 ]; then echo "ok: a run's SIGTERM stops the batch with 143"; else
  echo "FAIL: a run's SIGTERM: exit $code, expected 143"; fails=$((fails+1)); fi
n=$(sql term/results.sqlite "SELECT count(*) FROM runs")
if [ "$n" = 0 ]; then echo "ok: the interrupted run has no row"; else
  echo "FAIL: the interrupted run left $n row(s)"; fails=$((fails+1)); fi
contains "interrupted by a run's signal" "$tmp/term.err" "stopped by signal 15"

# A batch killed outright (SIGKILL: no chance to stop its children) takes its runs with it.
start_long kill
kill -KILL $batch
wait $batch 2>/dev/null
gone=0
for _ in $(seq 50); do
  alive=0
  for k in $kids; do kill -0 "$k" 2>/dev/null && alive=1; done
  [ $alive -eq 0 ] && { gone=1; break; }
  sleep 0.1
done
if [ $gone -eq 1 ]; then echo "ok: the runs die with a SIGKILLed batch"; else
  echo "FAIL: runs outlive a SIGKILLed batch"; fails=$((fails+1)); kill -KILL $kids; fi

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all batch checks passed"
