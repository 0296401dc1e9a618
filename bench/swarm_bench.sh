#!/usr/bin/env bash
# Swarm benchmark (docs/performance.md, section "Swarms"): for each N, `kestrel make-swarm N`,
# then the whole program:
#   load     wall time of `kestrel run --iterations 1` (process start, parse, build, configure,
#            one step, exit) and its peak RSS (GNU time %M)
#   run      `kestrel run --duration SEC --rtf 0` on one core (taskset): RTF and
#            vehicle-steps/s = N * iterations / wall time of the step loop (kestrel's own summary)
#   memory   (peak RSS(N) - peak RSS(1)) / (N - 1) per vehicle, from the run
# Transport is off (--no-transport): transport_bench.sh measures its cost. The missions start
# between 0.5 and 1 s, so runs of >= 2 s of sim time measure flying vehicles.
#   usage: bench/swarm_bench.sh [BUILD_DIR] [N...]      (default: build 10 100 1000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 100 1000)
kestrel=$build/src/cli/kestrel
[ -x "$kestrel" ] || { echo "swarm_bench: $kestrel not built (cmake --build $build --target kestrel)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "swarm_bench: GNU time (/usr/bin/time) not installed" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kestrel-swarm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
core=${SWARM_BENCH_CORE:-0}

duration_for() {  # sim seconds per size: long enough to fly, short enough for 1000 vehicles
  if [ "$1" -le 10 ]; then echo 20; elif [ "$1" -le 100 ]; then echo 10; else echo 2; fi
}

# run_measure FILE ARGS... -> "<elapsed s> <peak RSS kB>" on stdout; kestrel's output in $tmp/out
run_measure() {
  local file=$1
  shift
  /usr/bin/time -f '%e %M' -o "$tmp/time" taskset -c "$core" "$kestrel" run "$file" \
    --no-transport "$@" > "$tmp/out" 2> "$tmp/err" || {
    local rc=$?
    # A mission that is not over when --duration ends is not a failure of the benchmark.
    if ! grep -q 'finished after' "$tmp/out"; then
      echo "swarm_bench: kestrel run $file failed (exit $rc):" >&2
      tail -2 "$tmp/err" >&2
      return 1
    fi
  }
  tail -1 "$tmp/time"  # GNU time writes "Command exited with non-zero status N" first
}

printf '%6s %9s %8s %9s %8s %9s %14s %12s %10s\n' N file_kB check_s load_s load_MB RTF \
  vehicle_steps/s peak_MB kB/vehicle
rss1=""
for n in 1 "${sizes[@]}"; do
  f=$tmp/swarm_$n.sdf
  "$kestrel" make-swarm "$n" -o "$f" 2> /dev/null
  # `kestrel check`: parse, checks and every system configured (physics build), no step.
  check_s=$( (/usr/bin/time -f '%e' "$kestrel" check "$f" 2>&1 > /dev/null || true) | tail -1)
  if ! out=$(run_measure "$f" --iterations 1); then
    echo "$n: kestrel check ${check_s} s; the run failed (above)"
    continue
  fi
  read -r load_s load_kb <<< "$out"
  d=$(duration_for "$n")
  read -r _ peak_kb < <(run_measure "$f" --duration "$d" --rtf 0)
  line=$(grep 'finished after' "$tmp/out")
  iters=$(sed -n 's/.*after \([0-9]*\) iterations.*/\1/p' <<< "$line")
  wall=$(sed -n 's/.*wall time \([0-9.]*\) s.*/\1/p' <<< "$line")
  rtf=$(sed -n 's/.*RTF \([0-9.]*\),.*/\1/p' <<< "$line")
  if [ "$n" -eq 1 ]; then
    rss1=$peak_kb
    continue
  fi
  awk -v n="$n" -v fk="$(($(stat -c %s "$f") / 1024))" -v cs="$check_s" -v ls="$load_s" \
      -v lk="$load_kb" \
      -v rtf="$rtf" -v it="$iters" -v w="$wall" -v pk="$peak_kb" -v r1="$rss1" 'BEGIN {
    printf "%6d %9d %8.2f %9.2f %8.1f %9.2f %14.0f %12.1f %10.1f\n", n, fk, cs, ls, lk / 1024, rtf,
           n * it / w, pk / 1024, (pk - r1) / (n - 1)
  }'
done
echo "(load: whole process for --iterations 1; run: taskset -c $core, --no-transport, sim" \
     "seconds per N: 10→$(duration_for 10), 100→$(duration_for 100), 1000→$(duration_for 1000))"
