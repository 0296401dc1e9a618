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
#            perfectly used cores); once with the rotors free ("free": less than Kestrel
#            simulates) and once with each rotor held by a friction-loss row (--servos, "rows"),
#            the constraint rows Kestrel's joint velocity servos give the commanded rotors,
#            solved by MuJoCo's own solver
#   packed   the same on 2 threads with the vehicles packed K to a MuJoCo model (N / K copies of
#            a K-vehicle world, `make-swarm K` without islands), for K in PACKS: what raw MuJoCo
#            reaches when fewer, larger models share its per-model costs
# Prints ms per step of each and Kestrel's ratios to raw MuJoCo; RTF = 1 / (ms per step).
#   usage: bench/swarm_islands_bench.sh [BUILD_DIR] [N] [PACKS]  (default: build 1000 "10 20";
#          PACKS "" leaves the packed rows out; each K must divide N)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
n=${2:-1000}
packs=${3-10 20}
kestrel=$build/src/cli/kestrel
raw=$build/bench/kestrel_raw_islands_bench
[ -x "$kestrel" ] || { echo "swarm_islands_bench: $kestrel not built (cmake --build $build --target kestrel)" >&2; exit 2; }
[ -x "$raw" ] || { echo "swarm_islands_bench: $raw not built (cmake --build $build --target kestrel_raw_islands_bench)" >&2; exit 2; }
for k in $packs; do
  [[ "$k" =~ ^[1-9][0-9]*$ && $((n % k)) = 0 ]] ||
    { echo "swarm_islands_bench: a pack of '$k' vehicles does not divide $n vehicles" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/kestrel-swarm-islands.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# run CMD...: runs it, its output kept; on failure says which command failed and what it said
run() {
  "$@" > "$tmp/log" 2>&1 || { echo "swarm_islands_bench: failed: $*" >&2; tail -3 "$tmp/log" >&2; exit 1; }
}
run "$kestrel" make-swarm "$n" --islands -o "$tmp/sw.sdf"
run "$kestrel" make-swarm 1 --islands -o "$tmp/one.sdf"
run "$kestrel" export-mjcf "$tmp/one.sdf" -o "$tmp/one.xml"

# loop_s CORES SECONDS -> the step loop's wall time [s] of a SECONDS run
loop_s() {
  taskset -c "$1" "$kestrel" run "$tmp/sw.sdf" --no-transport --rtf 0 --duration "$2" \
    > "$tmp/out" 2> "$tmp/err" || true
  local summary
  summary=$(grep -h 'finished after' "$tmp/out" "$tmp/err" | tail -1)
  [ -n "$summary" ] || { echo "swarm_islands_bench: the run failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
  sed -E 's/.*wall time ([0-9.]+) s.*/\1/' <<< "$summary"
}
# raw_ms COPIES MODEL ARGS... -> kestrel_raw_islands_bench's ms per step
raw_ms() { "$raw" "${@:3}" "$1" "$2" | sed -E 's/.*: ([0-9.]+) ms per step/\1/'; }

declare -A kg kf rg rf sg sf  # ground and flight ms per step by thread count
printf '%-40s %10s %10s\n' "$n vehicles, ms per step" ground flight
for t in 1 2; do
  cores=$([ "$t" = 1 ] && echo 0 || echo 0,1)
  t1=$(loop_s "$cores" 1)
  t3=$(loop_s "$cores" 3)
  kg[$t]=$(awk -v a="$t1" 'BEGIN { printf "%.2f", a }')  # 1000 steps: s = ms per step
  kf[$t]=$(awk -v a="$t1" -v b="$t3" 'BEGIN { printf "%.2f", 1000 * (b - a) / 2000 }')
  printf '%-40s %10s %10s\n' "kestrel, $t island thread(s)" "${kg[$t]}" "${kf[$t]}"
done
for t in 1 2; do
  rg[$t]=$(raw_ms "$n" "$tmp/one.xml" --threads="$t")
  rf[$t]=$(raw_ms "$n" "$tmp/one.xml" --fly --threads="$t")
  printf '%-40s %10s %10s\n' "raw MuJoCo free, $t thread(s)" "${rg[$t]}" "${rf[$t]}"
  sg[$t]=$(raw_ms "$n" "$tmp/one.xml" --servos --threads="$t")
  sf[$t]=$(raw_ms "$n" "$tmp/one.xml" --servos --fly --threads="$t")
  printf '%-40s %10s %10s\n' "raw MuJoCo rows, $t thread(s)" "${sg[$t]}" "${sf[$t]}"
done
for k in $packs; do
  run "$kestrel" make-swarm "$k" --no-islands -o "$tmp/pack.sdf"
  run "$kestrel" export-mjcf "$tmp/pack.sdf" -o "$tmp/pack.xml"
  for o in free rows; do
    flag=$([ "$o" = rows ] && echo --servos || true)
    pg=$(raw_ms $((n / k)) "$tmp/pack.xml" $flag --threads=2)
    pf=$(raw_ms $((n / k)) "$tmp/pack.xml" $flag --fly --threads=2)
    printf '%-40s %10s %10s\n' "raw MuJoCo $o, $k per model, 2 threads" "$pg" "$pf"
  done
done
for t in 1 2; do
  awk -v t="$t" -v kg="${kg[$t]}" -v kf="${kf[$t]}" -v rg="${rg[$t]}" -v rf="${rf[$t]}" \
      -v sg="${sg[$t]}" -v sf="${sf[$t]}" 'BEGIN {
    printf "%-40s %10.2f %10.2f\n", "kestrel / raw free, " t " thread(s)", kg / rg, kf / rf
    printf "%-40s %10.2f %10.2f\n", "kestrel / raw rows, " t " thread(s)", kg / sg, kf / sf
    printf "%-40s %10.3f %10.3f\n", "RTF kestrel, " t " thread(s)", 1 / kg, 1 / kf
    printf "%-40s %10.3f %10.3f\n", "RTF raw MuJoCo free, " t " thread(s)", 1 / rg, 1 / rf
    printf "%-40s %10.3f %10.3f\n", "RTF raw MuJoCo rows, " t " thread(s)", 1 / sg, 1 / sf }'
done
