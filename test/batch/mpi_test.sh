#!/usr/bin/env bash
# kestrel batch under `mpirun -n 2` (OpenMPI): each rank takes its share from OpenMPI's
# environment into DIR/shard-I-of-2; merged, the rows equal a local batch's. Kestrel links no MPI.
# Usage: mpi_test.sh KESTREL REPO (inside scripts/netns: loopback only). Exit 77 without mpirun.
set -u
kestrel=$(realpath "$1")
repo=$(realpath "$2")
if ! command -v mpirun >/dev/null; then
  echo "SKIPPED: mpirun not found (Debian openmpi-bin, scripts/install-deps)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$repo/test/lib/checks.sh"
. "$repo/test/batch/common.sh"
cd "$tmp"
# Offline: shared memory between the ranks, the runtime's own channel on loopback.
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
expect 0 "mpirun -n 2 kestrel batch" mpirun -n 2 --oversubscribe --allow-run-as-root \
  "$kestrel" batch plan.yaml --out mpi -j 1
contains "rank 0's share" "$tmp/out" "2 runs of plan.yaml (shard 0/2 from OpenMPI)"
contains "rank 1's share" "$tmp/out" "2 runs of plan.yaml (shard 1/2 from OpenMPI)"
expect 0 "merge the ranks' databases" "$kestrel" batch merge mpi
contains "merged" "$tmp/out" "4 runs from 2 databases into mpi/results.sqlite"
same "mpirun -n 2 gives the local rows" local/results.sqlite mpi/results.sqlite
if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all MPI batch checks passed"
