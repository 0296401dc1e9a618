#!/usr/bin/env bash
# Instructions per physics step, raw MuJoCo vs Kestrel, counted by callgrind (docs/performance.md).
#
#   bench/physics_step_count.sh [BUILD_DIR] [driver options: --steps=N --request-wrenches ...]
#
# Runs BUILD_DIR/bench/kestrel_physics_step_count under `valgrind --tool=callgrind
# --instr-atstart=no`: each phase (raw / kestrel / engine, per world) is counted separately
# through callgrind client requests and dumped to its own file. Prints one row per world:
# instructions per step (Ir) of each phase and the ratios to raw MuJoCo. The callgrind files are
# kept in $CG_DIR (default: a fresh temporary directory, printed) for callgrind_annotate.
set -euo pipefail

build="${1:-build}"
[ $# -gt 0 ] && shift
driver="$build/bench/kestrel_physics_step_count"
[ -x "$driver" ] || { echo "physics_step_count: $driver not built (cmake --build $build --target kestrel_physics_step_count)" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "physics_step_count: valgrind not installed (scripts/install-deps)" >&2; exit 2; }

dir="${CG_DIR:-$(mktemp -d /tmp/kestrel-step-count.XXXXXX)}"
mkdir -p "$dir"
rm -f "$dir"/cg.out*
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/cg.out" \
  "$driver" "$@" > "$dir/driver.txt" 2> "$dir/valgrind.txt" || {
  echo "physics_step_count: the driver failed; see $dir/valgrind.txt" >&2
  cat "$dir/driver.txt" >&2
  exit 1
}

# Each dump: "desc: Trigger: Client Request: PHASE WORLD STEPS" and "summary: IR" (or totals:).
for f in $(ls "$dir"/cg.out.* | sort -t. -k3 -n); do
  awk '/^desc: Trigger: Client Request: / { phase = $5; world = $6; steps = $7 }
       /^(summary|totals): / { ir = $2 }
       END { if (phase != "") print world, phase, steps, ir }' "$f"
done | awk '
  { ir[$1 "," $2] = $4 / $3; steps[$1] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
  END {
    printf "%-14s %6s %14s %14s %8s %14s %8s\n", "world", "steps", "raw Ir/step", \
           "kestrel Ir/step", "ratio", "engine Ir/step", "ratio"
    for (i = 0; i < n; ++i) {
      w = order[i]; r = ir[w ",raw"]; k = ir[w ",kestrel"]; e = ir[w ",engine"]
      printf "%-14s %6d %14.0f %14.0f %8s %14.0f %8s\n", w, steps[w], r, k, \
             (r > 0 && k > 0) ? sprintf("%.3f", k / r) : "-", e, \
             (r > 0 && e > 0) ? sprintf("%.3f", e / r) : "-"
    }
  }'
echo
echo "digests and pose check (driver output):"
cat "$dir/driver.txt"
echo "callgrind files: $dir (callgrind_annotate --inclusive=yes $dir/cg.out.N)"
