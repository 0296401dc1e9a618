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

# A host on the network sends discovery messages to the discovery ports: ignition-transport
# binds them to 0.0.0.0 whatever IGN_IP says, and makes any sender of a message with the relay
# flag a relay that it then sends all its discovery to (topic names, the partition, addresses).
# Kestrel binds those sockets to lo (transport/network.cc): the datagrams must not be delivered
# (the kernel counts them in "a" as sent to no port) and nothing may come back.
noports() {  # UDP datagrams "a" received for no socket (Udp: NoPorts of /proc/net/snmp)
  ip netns exec "$a" awk '/^Udp:/ { if (h) { print $3; exit } h = 1 }' /proc/net/snmp
}
relay_attack() {  # relay_attack CMD... (run in "a"): prints "SENT_BACK UNDELIVERED": UDP packets
  # "a" sent to "b" (the kernel's ICMP "port unreachable" is not counted) and how many of the 30
  # datagrams sent to "a" were delivered to no socket
  rm -f "$tmp/att.pcap"
  ip netns exec "$b" tcpdump -i "vb$$" -n -U -w "$tmp/att.pcap" udp and src host 10.213.0.1 \
    2>"$tmp/tcpdump.log" &
  cap=$!
  ip netns exec "$a" env -u IGN_IP IGN_PARTITION=leak "$@" >"$tmp/victim.log" 2>&1 &
  local victim=$! i
  for ((i = 0; i < 600; i++)); do  # until both discovery sockets exist (and tcpdump listens)
    [ "$(ip netns exec "$a" ss -u -a -n | grep -cE ':1031[78] ')" -ge 2 ] &&
      grep -q "listening on" "$tmp/tcpdump.log" && break
    sleep 0.1
  done
  local before
  before=$(noports)
  ip netns exec "$b" python3 - <<'PY'
import socket, struct, time
uuid = b'0123456789abcdef0123456789abcdef'
# ignition.msgs.Discovery: version 10, process_uuid, type HEARTBEAT, flags { relay: true }
msg = b'\x10\x0a' + b'\x1a' + bytes([len(uuid)]) + uuid + b'\x20\x04' + b'\x2a\x02\x08\x01'
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(15):
    for port in (10317, 10318):
        s.sendto(struct.pack('<H', len(msg)) + msg, ('10.213.0.1', port))
    time.sleep(0.2)
PY
  local after
  after=$(noports)
  sleep 2  # the victim's heartbeats to a relay go out every second: give it two
  kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null || true
  sleep 1
  kill "$cap"; wait "$cap" 2>/dev/null || true
  cap=""
  echo "$(tcpdump -r "$tmp/att.pcap" -n 2>/dev/null | wc -l) $((after - before))"
}
read -r got undelivered < <(relay_attack "$kestrel" run "$tmp/world.sdf" --quiet --duration 60)
if [ "$got" -ne 0 ] || [ "$undelivered" -lt 30 ]; then
  tcpdump -r "$tmp/att.pcap" -n 2>/dev/null | head -10
  echo "FAIL: a host on the network made a default run send it $got packet(s);" \
    "$undelivered of its 30 discovery datagrams were refused by the kernel (expected all)"
  exit 1
fi
# Control: the packaged ignition tool with IGN_IP=127.0.0.1 (not hardened) falls for it.
tool=/usr/libexec/ignition/transport11/ign-transport-topic
if [ -x "$tool" ]; then
  read -r fell delivered_not < <(relay_attack env IGN_IP=127.0.0.1 timeout 60 "$tool" -e -t /leak/probe)
  [ "$fell" -gt 0 ] && [ "$delivered_not" -eq 0 ] ||
    { echo "FAIL: the unhardened control sent $fell packets, $delivered_not datagrams undelivered: the attack test is blind"; exit 1; }
  echo "discovery from a host on the network is not delivered ($undelivered of 30 datagrams refused by the kernel, nothing sent back; the packaged tool with IGN_IP=127.0.0.1 received all and sent $fell packets)"
else
  echo "discovery from a host on the network is not delivered ($undelivered of 30 refused; control skipped: $tool not installed)"
fi
