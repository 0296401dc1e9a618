#!/usr/bin/env bash
# kestrel batch as a Slurm job array on a real single-node Slurm started here: munged, slurmctld
# and slurmd with a generated slurm.conf (NodeName=localhost NodeAddr=127.0.0.1, every file in a
# temporary folder), `sbatch --array=0-1 --wait` of the plan, the shards merged and compared
# with a local batch. The daemons are always stopped (trap).
# Usage: slurm_test.sh KESTREL REPO, inside scripts/netns (loopback only; the test adds a second
# address to lo because slurmctld's getaddrinfo(AI_ADDRCONFIG) finds no address on a namespace
# with only 127.0.0.1). Exit 77 (skipped) without the binaries, or without root in the namespace.
set -u
kestrel=$(realpath "$1")
repo=$(realpath "$2")
for b in munged slurmctld slurmd sbatch sinfo; do
  command -v $b >/dev/null || { echo "SKIPPED: $b not found (Debian slurm-wlm, munge; scripts/install-deps)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: Slurm's daemons need root (run inside scripts/netns)"; exit 77; }
# A network namespace of its own (inside the one scripts/netns gives every test): the address
# added to lo below and the daemons' ports are seen by no other test.
if [ -z "${KESTREL_SLURM_OWN_NETNS:-}" ]; then
  export KESTREL_SLURM_OWN_NETNS=1
  exec unshare --net -- sh -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
tmp=$(mktemp -d)
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap stop EXIT
fails=0
. "$repo/test/lib/checks.sh"
. "$repo/test/batch/common.sh"

ip addr add 10.254.254.1/32 dev lo || { echo "FAIL: cannot add an address to lo"; exit 1; }
S=$tmp/slurm
mkdir -p "$S/munge" "$S/state" "$S/spool"
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
munged --force --foreground --key-file="$S/munge/munge.key" --socket="$S/munge/munge.socket" \
  --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
  --seed-file="$S/munge/munged.seed" 2>"$S/munged.err" &
pids+=($!)
for _ in $(seq 50); do [ -S "$S/munge/munge.socket" ] && break; sleep 0.1; done
cat >"$S/slurm.conf" <<CONF
ClusterName=kestrel
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$S/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" 2>"$S/slurmctld.err" &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N localhost 2>"$S/slurmd.err" &
pids+=($!)
up=0
for _ in $(seq 100); do sinfo -h -o %T 2>/dev/null | grep -q idle && { up=1; break; }; sleep 0.2; done
if [ $up -ne 1 ]; then
  echo "FAIL: Slurm did not come up"; tail -n 20 "$S"/*.log "$S"/*.err; exit 1; fi
echo "ok: munged, slurmctld and slurmd up"

# The job script of docs/batch.md: one array task per shard.
cat >"$tmp/batch.sbatch" <<JOB
#!/bin/sh
#SBATCH --job-name=kestrel-batch
#SBATCH --cpus-per-task=1
#SBATCH --output=slurm-%A_%a.out
exec "$kestrel" batch plan.yaml --out slurm -j "\${SLURM_CPUS_PER_TASK:-1}"
JOB
cd "$tmp"
expect 0 "sbatch --array=0-1 --wait" timeout 300 sbatch --array=0-1 --wait batch.sbatch
cat slurm-*.out >"$tmp/tasks"
contains "task 0's share" "$tmp/tasks" "2 runs of plan.yaml (shard 0/2 from Slurm)"
contains "task 1's share" "$tmp/tasks" "2 runs of plan.yaml (shard 1/2 from Slurm)"
expect 0 "merge the tasks' databases" "$kestrel" batch merge slurm
same "the Slurm job array gives the local rows" local/results.sqlite slurm/results.sqlite
if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"; tail -n 30 "$S/slurmctld.log" "$S/slurmd.log"; exit 1; fi
echo "all Slurm batch checks passed"
