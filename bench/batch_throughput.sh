#!/usr/bin/env bash
# kestrel batch throughput and per-run overhead (docs/performance.md): N runs of the short X3
# mission (test/batch/short_x3.py: take off to 2 m, 2 m east, land) as
#   bare  N sequential `kestrel run WORLD --no-transport --quiet --rtf 0 --seed S` (the reference),
#   -j 1  `kestrel batch` with one process at a time,
#   -j 2  `kestrel batch` with two,
# alternated in each round. Prints runs/minute of each, -j 2 / -j 1 (target >= 1.8 on 2 free
# cores) and the batch's overhead per run against the bare runs ((T(-j 1) - T(bare)) / N: fork,
# the child's result, the database; target <= 50 ms).
#   bench/batch_throughput.sh [build-dir] [runs] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "${1:-build}")"
runs="${2:-32}"
rounds="${3:-3}"
repo=$PWD
kestrel="$build/src/cli/kestrel"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 test/batch/short_x3.py "$repo" "$tmp/x3_short.sdf"
printf 'world: x3_short.sdf\nruns: %s\nseed: 11\n' "$runs" >"$tmp/plan.yaml"
cd "$tmp"
now() { date +%s.%N; }
# The seeds the batch gives its runs, so that the bare runs fly the same flights.
"$kestrel" batch plan.yaml --out seeds -j 2 --quiet
mapfile -t seeds < <(python3 -c 'import sqlite3; [print(r[0]) for r in sqlite3.connect("seeds/results.sqlite").execute("SELECT seed FROM runs ORDER BY run_id")]')
for i in $(seq "$rounds"); do
  t0=$(now)
  for s in "${seeds[@]}"; do
    "$kestrel" run x3_short.sdf --no-transport --quiet --rtf 0 --seed "$s" >/dev/null 2>&1
  done
  t1=$(now)
  rm -rf j1 j2
  "$kestrel" batch plan.yaml --out j1 -j 1 --quiet
  t2=$(now)
  "$kestrel" batch plan.yaml --out j2 -j 2 --quiet
  t3=$(now)
  awk -v n="$runs" -v i="$i" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" 'BEGIN {
    b = t1 - t0; j1 = t2 - t1; j2 = t3 - t2
    printf "round %d (%d runs): bare %.1f runs/min, -j 1 %.1f runs/min, -j 2 %.1f runs/min; " \
           "-j 2 / -j 1 = %.2fx; overhead per run %.1f ms\n", i, n, n / b * 60, n / j1 * 60,
           n / j2 * 60, j1 / j2, (j1 - b) / n * 1000 }'
done
