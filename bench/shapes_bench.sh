#!/usr/bin/env bash
# 3k-shapes benchmark (docs/performance.md, "Large worlds"): the world bench/shapes_world.sh
# writes (gz-sim's 3k_shapes.sdf equivalent at N = 1001 rows, 3,003 shapes), then the program:
#   load   wall time of `kestrel run --iterations 1` (process start, parse, physics build of every
#          island, configure, one step, exit) and its peak RSS (GNU time %M)
#   step   ms per step of `kestrel run --iterations STEPS --rtf 0` (kestrel's own summary: the
#          step loop's wall time over its iterations), with the Physics <threads> at 1 and 2
#   raw    ms per step of raw MuJoCo's mj_step on the same models: N copies each of the box's,
#          the cylinder's and the sphere's island (`kestrel export-mjcf` of a one-shape world),
#          each its own mjModel/mjData (kestrel_raw_islands_bench), one thread
# Transport is off (--no-transport).
#   usage: bench/shapes_bench.sh [BUILD_DIR] [N] [STEPS]      (default: build 1001 300)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
n=${2:-1001}
steps=${3:-300}
kestrel=$build/src/cli/kestrel
raw=$build/bench/kestrel_raw_islands_bench
[ -x "$raw" ] || { echo "shapes_bench: $raw not built (cmake --build $build --target kestrel_raw_islands_bench)" >&2; exit 2; }
[ -x "$kestrel" ] || { echo "shapes_bench: $kestrel not built (cmake --build $build --target kestrel)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "shapes_bench: GNU time (/usr/bin/time) not installed" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kestrel-shapes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '%6s %8s %7s %8s %10s %10s %8s\n' shapes threads load_s load_MB ms/step RTF peak_MB
for threads in 1 2; do
  f=$tmp/shapes_$threads.sdf
  "$root/bench/shapes_world.sh" "$n" "$threads" > "$f"
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$kestrel" run "$f" --no-transport --iterations 1 \
    > /dev/null 2> "$tmp/err" || { echo "shapes_bench: the load failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
  read -r load_s load_kb < <(tail -1 "$tmp/time")
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$kestrel" run "$f" --no-transport --iterations "$steps" \
    --rtf 0 > "$tmp/out" 2> "$tmp/err" || { echo "shapes_bench: the run failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
  read -r _ peak_kb < <(tail -1 "$tmp/time")
  summary=$(grep 'finished after' "$tmp/out" "$tmp/err" | tail -1)
  wall=$(sed -E 's/.*wall time ([0-9.]+) s.*/\1/' <<< "$summary")
  rtf=$(sed -E 's/.*RTF ([0-9.]+).*/\1/' <<< "$summary")
  printf '%6d %8d %7.2f %8d %10.2f %10s %8d\n' $((3 * n)) "$threads" "$load_s" $((load_kb / 1024)) \
    "$(awk -v w="$wall" -v s="$steps" 'BEGIN { print 1000 * w / s }')" "$rtf" $((peak_kb / 1024))
done
# raw MuJoCo: one island per shape, as Kestrel builds them
"$root/bench/shapes_world.sh" 1 > "$tmp/row.sdf"
islands=()
for kind in box cylinder sphere; do
  sed -E "/<model name=\"(box|cylinder|sphere)_0\">/{/<model name=\"${kind}_0\">/!{:a;N;/<\/model>/!ba;d}}" \
    "$tmp/row.sdf" > "$tmp/$kind.sdf"
  "$kestrel" export-mjcf "$tmp/$kind.sdf" -o "$tmp/$kind.xml" 2> /dev/null
  islands+=("$tmp/$kind.xml")
done
echo "raw MuJoCo, same islands: $("$raw" "$n" "${islands[@]}")"
