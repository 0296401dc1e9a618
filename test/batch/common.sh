# Shared by the MPI and Slurm batch tests (sourced after $repo, $kestrel and $tmp are set): the
# short X3 plan in $tmp and the local reference results in $tmp/local (-j 2).
python3 "$repo/test/batch/short_x3.py" "$repo" "$tmp/x3_short.sdf" || exit 1
cat >"$tmp/plan.yaml" <<'PLAN'
world: x3_short.sdf
runs: 4
seed: 11
vary:
  wind_speed: {uniform: [0, 1]}
  wind_direction: {uniform: [0, 360]}
PLAN
same() {  # same NAME A.sqlite B.sqlite
  if python3 "$repo/test/batch/compare.py" "$2" "$3" >"$tmp/cmp" 2>&1; then echo "ok: $1"
  else echo "FAIL: $1"; sed 's/^/  | /' "$tmp/cmp"; fails=$((fails+1)); fi
}
(cd "$tmp" && "$kestrel" batch plan.yaml --out local -j 2 --quiet) || {
  echo "FAIL: the local batch"; exit 1; }
