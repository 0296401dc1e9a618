#!/usr/bin/env bash
# Proves a default `kestrel run` sends no packet off-host. Two network namespaces joined by a
# veth pair: Kestrel runs in "a", whose default route goes over the veth; tcpdump listens on the
# other end in "b" and must capture nothing. A control run with --transport-ip on the veth
# address must be captured (so the test can fail). Needs root (ip netns); skips otherwise.
#   usage: transport_no_leak_test.sh KESTREL_BINARY   (exit 77 = skipped)
set -euo pipefail
kestrel=$1
skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v tcpdump >/dev/null || skip "tcpdump not installed (scripts/install-deps installs it)"
a="kt_a_$$" b="kt_b_$$"
ip netns add "$a" 2>/dev/null || skip "cannot create network namespaces here"
tmp=$(mktemp -d)
cleanup() {
  [ -n "${cap:-}" ] && kill "$cap" 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$b"
for ns in "$a" "$b"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
  ip -n "$ns" link set lo up
done
ip link add "va$$" netns "$a" type veth peer name "vb$$" netns "$b"
ip -n "$a" addr add 10.213.0.1/24 dev "va$$"
ip -n "$b" addr add 10.213.0.2/24 dev "vb$$"
ip -n "$a" link set "va$$" up
ip -n "$b" link set "vb$$" up
ip -n "$a" route add default via 10.213.0.2

cat > "$tmp/world.sdf" <<'SDF'
<?xml version="1.0"?>
<sdf version="1.9"><world name="leak">
  <model name="box"><pose>0 0 1 0 0 0</pose><link name="l">
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
  </link></model>
</world></sdf>
SDF

# capture RUN_ARGS...: runs kestrel for 3 s of real time (plus a topic list and an echo, which
# make discovery talk) and prints how many packets reached the other end.
capture() {
  rm -f "$tmp/cap.pcap"
  ip netns exec "$b" tcpdump -i "vb$$" -n -U -w "$tmp/cap.pcap" 2>"$tmp/tcpdump.log" &
  cap=$!
  sleep 1
  ip netns exec "$a" env -u IGN_IP IGN_PARTITION=leak "$kestrel" run "$tmp/world.sdf" --quiet \
    --duration 3 "$@" >"$tmp/run.log" 2>&1 &
  local run=$!
  sleep 1
  ip netns exec "$a" env -u IGN_IP IGN_PARTITION=leak "$kestrel" topic -l >/dev/null 2>&1 || true
  # bounded: under a sanitizer on a loaded machine the run may end before the echo connects
  ip netns exec "$a" env -u IGN_IP IGN_PARTITION=leak timeout 10 "$kestrel" topic -e -t /clock \
    -n 1 >/dev/null 2>&1 || true
  wait "$run" || { cat "$tmp/run.log"; echo "FAIL: kestrel run failed"; exit 1; }
  sleep 1
  kill "$cap"; wait "$cap" 2>/dev/null || true
  cap=""
  tcpdump -r "$tmp/cap.pcap" -n 2>/dev/null | wc -l
}

leaked=$(capture)
if [ "$leaked" -ne 0 ]; then
  tcpdump -r "$tmp/cap.pcap" -n 2>/dev/null | head -20
  echo "FAIL: a default run sent $leaked packet(s) off-host"
  exit 1
fi
# Control: bound to the veth address, discovery must show up on the wire.
seen=$(capture --transport-ip 10.213.0.1)
[ "$seen" -gt 0 ] || { echo "FAIL: control run on 10.213.0.1 was not captured: the test is blind"; exit 1; }
echo "no packet left the host in a default run ($seen packets captured in the control run)"
