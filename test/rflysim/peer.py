#!/usr/bin/env python3
"""An RflySim-style external program flying a Kestrel multicopter over CopterSim's UDP structs.

Independent of Kestrel's code: the layouts are written here from RflySim's documentation
(src/sitl/rflysim/README.md lists the facts), with `socket` and `struct` only.

    peer.py KESTREL WORLD

Starts `KESTREL run WORLD --rflysim x3:1`, then
  1. climb: mode 1, NED velocity (0, 0, -1) -> PosE down decreases at 1 m/s (±0.05) after 3 s;
  2. yaw:   mode 1, zero velocity, yaw rate 0.5 rad/s -> AngEuler yaw grows at 0.5 rad/s (±0.05);
  3. bad packets: 3 wrong checksum, 2 wrong size, 1 unknown CopterID, 1 unknown mode, each
     carrying a 3 m/s descent -> not applied (the vehicle holds height) and counted in
     outCopterData[4..7]; Kestrel's log names each kind once and reports the counts at exit.
Exit 0 when every check holds, 1 otherwise (each failure printed).
"""

import math
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

CHECKSUM = 1234567897
COPTER_ID = 1
IN_PORT = 30100 + 2 * (COPTER_ID - 1)  # Kestrel listens here
OUT_PORT = 30101 + 2 * (COPTER_ID - 1)  # Kestrel sends here

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def int_float(mode, floats, copter_id=COPTER_ID, checksum=CHECKSUM):
    """PX4SILIntFloat: int checksum, int CopterID, int inSILInts[8], float inSILFLoats[20]."""
    ints = [mode] + [0] * 7
    f = list(floats) + [0.0] * (20 - len(floats))
    return struct.pack("<ii8i20f", checksum, copter_id, *ints, *f)


class Peer:
    def __init__(self, kestrel, world):
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind(("127.0.0.1", OUT_PORT))
        self.rx.settimeout(0.5)
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.log = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [kestrel, "run", world, "--rflysim", "x3:%d" % COPTER_ID, "--duration", "120"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.truth = None  # the latest VehileInfo60d
        self.data = None  # the latest outCopterData
        self.command = int_float(0, [])

    def send(self, packet):
        self.tx.sendto(packet, ("127.0.0.1", IN_PORT))

    def poll(self):
        """Reads what arrived; returns False on a 0.5 s silence."""
        try:
            packet = self.rx.recv(4096)
        except socket.timeout:
            return False
        if len(packet) == 480:
            self.truth = struct.unpack("<60d", packet)
        elif len(packet) == 256:
            self.data = struct.unpack("<32d", packet)
        else:
            check(False, "Kestrel sent a %d-byte datagram (480 or 256 expected)" % len(packet))
        return True

    def sim_time(self):
        return self.truth[2] if self.truth else -1.0

    def run_for(self, seconds, samples=None):
        """Lets `seconds` of sim time pass, resending the command at ~20 Hz of sim time.
        Appends (runnedTime, VehileInfo60d) to `samples`."""
        deadline_wall = time.monotonic() + 10 * seconds + 10
        start = self.sim_time()
        last_sent = -1.0
        while self.sim_time() < start + seconds:
            if time.monotonic() > deadline_wall:
                raise RuntimeError("sim time stopped advancing (at %.3f s)" % self.sim_time())
            if self.proc.poll() is not None:
                raise RuntimeError("kestrel exited early with %d" % self.proc.returncode)
            if self.sim_time() - last_sent >= 0.05:
                self.send(self.command)
                last_sent = self.sim_time()
            if self.poll() and samples is not None and self.truth:
                samples.append((self.truth[2], self.truth))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.seek(0)
        return rc, self.log.read()


def slope(samples, index):
    """Least-squares rate of truth[index] over sim time."""
    ts = [t for t, _ in samples]
    ys = [s[index] for _, s in samples]
    n = len(ts)
    mt, my = sum(ts) / n, sum(ys) / n
    num = sum((t - mt) * (y - my) for t, y in zip(ts, ys))
    den = sum((t - mt) ** 2 for t in ts)
    return num / den


def unwrap(samples, index):
    out, prev, offset = [], None, 0.0
    for t, s in samples:
        a = s[index]
        if prev is not None and a - prev > math.pi:
            offset -= 2 * math.pi
        elif prev is not None and a - prev < -math.pi:
            offset += 2 * math.pi
        prev = a
        out.append((t, {index: a + offset}))
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    peer = Peer(sys.argv[1], sys.argv[2])
    try:
        # Wait for the first truth packet (the world's first steps).
        deadline = time.monotonic() + 30
        while peer.truth is None or peer.data is None:
            if time.monotonic() > deadline or peer.proc.poll() is not None:
                raise RuntimeError("no VehileInfo60d/outCopterData from Kestrel")
            peer.poll()
        check(peer.truth[0] == COPTER_ID, "VehileInfo60d copterID is %g" % peer.truth[0])
        check(all(v == 0 for v in peer.truth[33:]), "VehileInfo60d[33..59] are 0")
        check(abs(math.sqrt(sum(q * q for q in peer.truth[12:16])) - 1) < 1e-9,
              "AngQuatern is a unit quaternion")
        check(abs(peer.truth[30] - 47.397742) < 1e-3 and abs(peer.truth[31] - 8.545594) < 1e-3,
              "PosGPS is (lat, lon) = (%.6f, %.6f)" % (peer.truth[30], peer.truth[31]))
        peer.run_for(0.5)  # mode 0: nothing applied; the vehicle settles on the ground
        check(abs(peer.truth[26] + 9.8) < 0.1,
              "AccB down is -g at rest on the ground (specific force), got %.3f" % peer.truth[26])
        check(abs(peer.truth[8] + 0.056) < 0.02,
              "PosE down is the start height -0.056 m, got %.4f" % peer.truth[8])
        check(peer.data[2] == 0, "outCopterData[2] (mode) is 0 before any command")

        # 1. Climb at 1 m/s (NED: velocity down -1).
        peer.command = int_float(1, [0.0, 0.0, -1.0, 0.0])
        peer.run_for(3.0)  # settle: take-off and acceleration
        climb = []
        peer.run_for(3.0, climb)
        rate = slope(climb, 8)  # PosE down
        check(abs(rate + 1.0) < 0.05, "climb: PosE down changes at %.4f m/s (-1 ± 0.05)" % rate)
        vd = sum(s[5] for _, s in climb) / len(climb)
        check(abs(vd + 1.0) < 0.05, "climb: VelE down averages %.4f m/s (-1 ± 0.05)" % vd)
        check(peer.data[2] == 1, "outCopterData[2] (mode) is %g" % peer.data[2])

        # 2. Yaw at 0.5 rad/s (clockwise from above) holding position.
        peer.command = int_float(1, [0.0, 0.0, 0.0, 0.5])
        peer.run_for(2.0)
        turn = []
        peer.run_for(3.0, turn)
        yaw_rate = slope(unwrap(turn, 11), 11)
        # Tolerance 10 %: Gazebo's velocity controller tracks a yaw rate with a proportional
        # loop only (about 0.465 of 0.5 rad/s on this X3); the frames are checked tightly below.
        check(abs(yaw_rate - 0.5) < 0.05,
              "yaw: AngEuler yaw changes at %.4f rad/s (0.5 ± 0.05)" % yaw_rate)
        rate_b = sum(s[29] for _, s in turn) / len(turn)
        check(abs(rate_b - yaw_rate) < 0.005,
              "yaw: RateB r averages %.4f rad/s, the yaw rate (± 0.005)" % rate_b)
        drift = max(abs(s[8] - turn[0][1][8]) for _, s in turn)
        check(drift < 0.1, "yaw: height held (PosE down within %.3f m)" % drift)

        # 3. Hold, then bad packets that would make it descend at 3 m/s if applied.
        peer.command = int_float(1, [0.0, 0.0, 0.0, 0.0])
        peer.run_for(1.0)
        applied_before = peer.data[3]
        down = [0.0, 0.0, 3.0, 0.0]
        for _ in range(3):
            peer.send(int_float(1, down, checksum=123456789))
        for n in (100, 121):
            peer.send(int_float(1, down)[:n] if n < 120 else int_float(1, down) + b"\0")
        peer.send(int_float(1, down, copter_id=2))
        peer.send(int_float(7, down))
        hold = []
        peer.run_for(1.5, hold)
        d = peer.data
        check(d[4] == 2, "outCopterData[4] (wrong size) is %g, expected 2" % d[4])
        check(d[5] == 3, "outCopterData[5] (wrong checksum) is %g, expected 3" % d[5])
        check(d[6] == 1, "outCopterData[6] (unknown CopterID) is %g, expected 1" % d[6])
        check(d[7] == 1, "outCopterData[7] (unknown mode) is %g, expected 1" % d[7])
        check(d[3] > applied_before, "valid commands still applied (%g > %g)" % (d[3],
                                                                                 applied_before))
        worst = max(abs(s[5]) for _, s in hold)
        check(worst < 0.2, "bad packets not applied: |VelE down| stays below 0.2 (%.3f)" % worst)
    except RuntimeError as e:
        check(False, str(e))
    rc, log = peer.stop()
    check(rc == 0, "kestrel exited with %d on SIGINT" % rc)
    for kind in ("wrong size", "wrong checksum", "unknown CopterID", "unknown mode"):
        lines = [l for l in log.splitlines() if "rejected a datagram" in l and kind in l]
        check(len(lines) == 1, "the log names '%s' once (%d lines)" % (kind, len(lines)))
    check("rejected: 2 wrong size, 3 wrong checksum, 1 unknown CopterID, 1 unknown mode" in log,
          "the exit line reports the counts")
    os.unlink(peer.log.name)
    if failures:
        print("--- kestrel's output ---\n" + log)
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
