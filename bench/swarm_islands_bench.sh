#!/usr/bin/env bash
# A swarm in physics islands against raw MuJoCo on the same islands (docs/performance.md,
# "Large worlds: 1000 vehicles"). For N vehicles (`kestrel make-swarm N --islands`):
#   kestrel  the step loop's wall time (kestrel's own summary) of `kestrel run --no-transport
#            --rtf 0` for 1 s and for 3 s of sim time, on one core (taskset -c 0: 1 island thread)
#            and on both (2 island threads); the vehicles stand on the ground for their first
#            0.5 - 1 s, so "ground" is the first second's ms per step and "flight" the last two
#            seconds' ((3 s run - 1 s run) / 2000 steps)
#   raw      kestrel_raw_islands_bench on N copies of one vehicle's island (`kestrel export-mjcf`
#            of a one-vehicle world: the vehicle and the ground), resting on the ground and in
#            free flight (--fly), on 1 and 2 threads with no synchronisation (the bound for two
#            perfectly used cores)
# Prints ms per step of each and Kestrel's ratio to raw MuJoCo; RTF = 1 / (ms per step).
#   usage: bench/swarm_islands_bench.sh [BUILD_DIR] [N]      (default: build 1000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
n=${2:-1000}
kestrel=$build/src/cli/kestrel
raw=$build/bench/kestrel_raw_islands_bench
[ -x "$kestrel" ] || { echo "swarm_islands_bench: $kestrel not built (cmake --build $build --target kestrel)" >&2; exit 2; }
[ -x "$raw" ] || { echo "swarm_islands_bench: $raw not built (cmake --build $build --target kestrel_raw_islands_bench)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kestrel-swarm-islands.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$kestrel" make-swarm "$n" --islands -o "$tmp/sw.sdf" 2> /dev/null
"$kestrel" make-swarm 1 --islands -o "$tmp/one.sdf" 2> /dev/null
"$kestrel" export-mjcf "$tmp/one.sdf" -o "$tmp/one.xml" 2> /dev/null

# step_ms CORES SECONDS -> the step loop's wall time [s] of a SECONDS run
loop_s() {
  taskset -c "$1" "$kestrel" run "$tmp/sw.sdf" --no-transport --rtf 0 --duration "$2" \
    > "$tmp/out" 2> "$tmp/err" || true
  local summary
  summary=$(grep -h 'finished after' "$tmp/out" "$tmp/err" | tail -1)
  [ -n "$summary" ] || { echo "swarm_islands_bench: the run failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
  sed -E 's/.*wall time ([0-9.]+) s.*/\1/' <<< "$summary"
}
printf '%-34s %10s %10s\n' "$n vehicles, ms per step" ground flight
for cores in 0 0,1; do
  t1=$(loop_s "$cores" 1)
  t3=$(loop_s "$cores" 3)
  threads=$(tr ',' '\n' <<< "$cores" | wc -l)
  ground=$(awk -v a="$t1" 'BEGIN { printf "%.2f", 1000 * a / 1000 }')
  flight=$(awk -v a="$t1" -v b="$t3" 'BEGIN { printf "%.2f", 1000 * (b - a) / 2000 }')
  printf '%-34s %10s %10s\n' "kestrel, $threads island thread(s)" "$ground" "$flight"
  eval "k_ground_$threads=$ground k_flight_$threads=$flight"
done
for threads in 1 2; do
  g=$("$raw" --threads="$threads" "$n" "$tmp/one.xml" | sed -E 's/.*: ([0-9.]+) ms per step/\1/')
  f=$("$raw" --fly --threads="$threads" "$n" "$tmp/one.xml" | sed -E 's/.*: ([0-9.]+) ms per step/\1/')
  printf '%-34s %10s %10s\n' "raw MuJoCo, $threads thread(s)" "$g" "$f"
  eval "r_ground_$threads=$g r_flight_$threads=$f"
done
for threads in 1 2; do
  eval "kg=\$k_ground_$threads kf=\$k_flight_$threads rg=\$r_ground_$threads rf=\$r_flight_$threads"
  awk -v t="$threads" -v kg="$kg" -v kf="$kf" -v rg="$rg" -v rf="$rf" 'BEGIN {
    printf "%-34s %10.2f %10.2f\n", "kestrel / raw, " t " thread(s)", kg / rg, kf / rf
    printf "%-34s %10.3f %10.3f\n", "RTF kestrel, " t " thread(s)", 1 / kg, 1 / kf
    printf "%-34s %10.3f %10.3f\n", "RTF raw MuJoCo alone, " t " thread(s)", 1 / rg, 1 / rf }'
done
