#!/usr/bin/env python3
"""An RflySim-style external program flying a Kestrel multicopter over CopterSim's UDP structs.

Independent of Kestrel's code: the layouts are written here from RflySim's documentation
(src/sitl/rflysim/README.md lists the facts), with `socket` and `struct` only.

    peer.py KESTREL WORLD

Starts `KESTREL run WORLD --rflysim x3:1`, then
  0. motor fault: on the ground, mode 3 at 0.5 on every motor; RflySim's fault parameters
     (PX4ModelInParams, FaultInParams [123450, 1, 0, 1, 1]) -> MotorRPMS[1] drops below 5 % of
     the others' (FaultInjection's failed rotor spins down), the others hold; fault ID 0 -> it
     spins up again; an unknown fault ID is refused and counted in outCopterData[10];
  1. climb: mode 1, NED velocity (0, 0, -1) -> PosE down decreases at 1 m/s (±0.05) after 3 s;
  2. yaw:   mode 1, zero velocity, yaw rate 0.5 rad/s -> AngEuler yaw grows at 0.5 rad/s (±0.05);
  3. bad packets: 3 wrong checksum, 2 wrong size, 1 unknown CopterID, 1 unknown mode, each
     carrying a 3 m/s descent, and a TerrainIn15d -> not applied (the vehicle holds height) and
     counted in outCopterData[4..7], [11]; Kestrel's log names each kind once and reports the
     counts at exit.
Then a second run of the same world with the bridge declared in the model and HILSensor30d and
HILGPS30d requested (<hil_sensor_port>, <hil_gps_port>), the vehicle at rest on the ground:
  4. sensors: HILSensor30d at 250 Hz (time_usec on multiples of 4000) with the specific force
     (0, 0, -9.8) FRD, no rotation, the pressure and temperature of the standard atmosphere at
     488.056 m (computed here), a magnetic field pointing down of the Earth's strength, every
     field updated; HILGPS30d at 10 Hz with the world's latitude, longitude and height, fix 3.
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
HIL_SENSOR_PORT = 30211  # the ports this peer asks HILSensor30d and HILGPS30d to go to
HIL_GPS_PORT = 30212

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def model_in_params(bitmask, params, checksum=1234567891):
    """PX4ModelInParams: int checksum, uint32 Bitmask, double InParams[32] (no CopterID)."""
    return struct.pack("<iI32d", checksum, bitmask, *(list(params) + [0.0] * (32 - len(params))))


def int_float(mode, floats, copter_id=COPTER_ID, checksum=CHECKSUM):
    """PX4SILIntFloat: int checksum, int CopterID, int inSILInts[8], float inSILFLoats[20]."""
    ints = [mode] + [0] * 7
    f = list(floats) + [0.0] * (20 - len(floats))
    return struct.pack("<ii8i20f", checksum, copter_id, *ints, *f)


class Peer:
    def __init__(self, kestrel, world, rflysim_flag=True):
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind(("127.0.0.1", OUT_PORT))
        self.rx.settimeout(0.5)
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.log = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        args = [kestrel, "run", world, "--duration", "120"]
        if rflysim_flag:
            args += ["--rflysim", "x3:%d" % COPTER_ID]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
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
        self.rx.close()
        self.tx.close()
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


def hil_world(world):
    """The test world with the bridge declared in the x3 model, HILSensor30d and HILGPS30d
    requested on their own ports."""
    with open(world) as f:
        text = f.read()
    plugin = ("<plugin filename=\"kestrel-rflysim-bridge-system\" "
              "name=\"kestrel::systems::RflySimBridge\"><copter_id>%d</copter_id>"
              "<hil_sensor_port>%d</hil_sensor_port><hil_gps_port>%d</hil_gps_port></plugin>"
              % (COPTER_ID, HIL_SENSOR_PORT, HIL_GPS_PORT))
    at = text.rindex("</model>")  # the x3 is the world's last model
    out = tempfile.NamedTemporaryFile(mode="w", suffix=".sdf", delete=False)
    out.write(text[:at] + plugin + text[at:])
    out.close()
    return out.name


def check_hil(kestrel, world):
    """Step 4: HILSensor30d and HILGPS30d of the X3 at rest, against values computed here."""
    sensor_rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sensor_rx.bind(("127.0.0.1", HIL_SENSOR_PORT))
    gps_rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gps_rx.bind(("127.0.0.1", HIL_GPS_PORT))
    path = hil_world(world)
    peer = Peer(kestrel, path, rflysim_flag=False)
    sensors, fixes = [], []
    try:
        deadline = time.monotonic() + 30
        while peer.sim_time() < 1.5:  # settle on the ground, then collect
            if time.monotonic() > deadline or peer.proc.poll() is not None:
                raise RuntimeError("the HIL run did not reach 1.5 s of sim time")
            peer.poll()
        sensor_rx.setblocking(False)
        gps_rx.setblocking(False)
        for rx, out in ((sensor_rx, sensors), (gps_rx, fixes)):
            while True:  # drop what arrived while settling
                try:
                    rx.recv(4096)
                except BlockingIOError:
                    break
        start = peer.sim_time()
        while peer.sim_time() < start + 1.0:
            peer.poll()
            for rx, out in ((sensor_rx, sensors), (gps_rx, fixes)):
                while True:
                    try:
                        packet = rx.recv(4096)
                    except BlockingIOError:
                        break
                    if len(packet) != 240:
                        check(False, "a HIL datagram of %d bytes (240)" % len(packet))
                        continue
                    out.append(struct.unpack("<30d", packet))
    except RuntimeError as e:
        check(False, str(e))
    rc, log = peer.stop()
    sensor_rx.close()
    gps_rx.close()
    os.unlink(path)
    os.unlink(peer.log.name)
    check(rc == 0, "the HIL run exited with %d on SIGINT" % rc)
    # About 250 and 10 a second of sim time; UDP on loopback may lose none, the wall clock
    # decides how many fall into the window.
    check(200 <= len(sensors) <= 300, "%d HILSensor30d in 1 s of sim time (250 Hz)" % len(sensors))
    check(7 <= len(fixes) <= 13, "%d HILGPS30d in 1 s of sim time (10 Hz)" % len(fixes))
    if not sensors or not fixes:
        return log
    check(all(s[0] % 4000 == 0 for s in sensors), "HILSensor30d time_usec on multiples of 4 ms")
    check(all(g[0] % 100000 == 0 for g in fixes), "HILGPS30d time_usec on multiples of 100 ms")
    h = 488.0 + 0.056  # the origin's elevation + the base link's height on the ground
    p_hpa = 1013.25 * (1 - 0.0065 * h / 288.15) ** 5.25588  # standard atmosphere
    t_c = 288.15 - 0.0065 * h - 273.15
    s = sensors[-1]
    check(abs(s[1]) < 0.1 and abs(s[2]) < 0.1 and abs(s[3] + 9.8) < 0.1,
          "accel FRD (%.3f, %.3f, %.3f) = (0, 0, -9.8) at rest" % s[1:4])
    check(max(abs(v) for v in s[4:7]) < 0.01, "gyro FRD (%.4f, %.4f, %.4f) = 0" % s[4:7])
    strength = math.sqrt(sum(v * v for v in s[7:10]))
    check(0.4 < strength < 0.55 and s[9] > 0.3,
          "mag %.3f gauss, down component %.3f > 0 (the Earth's at 47 N)" % (strength, s[9]))
    check(abs(s[10] - p_hpa) < 0.5, "abs_pressure %.2f hPa = %.2f" % (s[10], p_hpa))
    check(s[11] == 0, "diff_pressure 0 without a pitot")
    check(abs(s[12] - h) < 2, "pressure_alt %.2f m = %.2f" % (s[12], h))
    check(abs(s[13] - t_c) < 0.01, "temperature %.3f C = %.3f" % (s[13], t_c))
    check(s[14] == 7167, "fields_updated %g: every field but diff_pressure" % s[14])
    check(all(v == 0 for v in s[15:]), "HILSensor30d[15..29] are 0")
    g = fixes[-1]
    check(abs(g[1] - 473977420) < 20 and abs(g[2] - 85455940) < 20,
          "lat, lon (%.0f, %.0f) degE7 = the world's (473977420, 85455940)" % (g[1], g[2]))
    check(abs(g[3] - 1000 * h) < 10, "alt %.0f mm = %.0f" % (g[3], 1000 * h))
    check(g[4] == 30 and g[5] == 40, "eph, epv (%g, %g) cm = (30, 40)" % (g[4], g[5]))
    check(g[6] < 1 and max(abs(v) for v in g[7:10]) < 1, "GNSS velocity 0 at rest")
    check(g[11] == 3 and g[12] == 10, "fix_type %g, satellites %g = 3, 10" % (g[11], g[12]))
    check(all(v == 0 for v in g[13:]), "HILGPS30d[13..29] are 0")
    return log


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

        # 0. A motor fault on the ground: every motor at 0.5 (400 rad/s = 3819.7 rpm).
        peer.command = int_float(3, [0.5] * 4)
        peer.run_for(0.5)
        rpm = 400 * 60 / (2 * math.pi)
        check(all(abs(r - rpm) < 5 for r in peer.truth[16:20]),
              "mode 3: MotorRPMS %s = %.1f" % (["%.1f" % r for r in peer.truth[16:20]], rpm))
        peer.send(model_in_params(0b11111, [123450, 1, 0, 1, 1]))
        peer.run_for(0.5)
        r = peer.truth[16:20]
        check(r[1] < 0.05 * rpm and all(abs(r[i] - rpm) < 5 for i in (0, 2, 3)),
              "motor fault on motor 2: MotorRPMS %s" % ["%.1f" % v for v in r])
        check(peer.data[12] == 1 and peer.data[13] == 123450,
              "outCopterData[12] (fault packets) %g, [13] (fault ID) %g" % (peer.data[12],
                                                                          peer.data[13]))
        peer.send(model_in_params(1, [123459]))  # no such fault: refused, nothing changes
        peer.send(model_in_params(1, [0]))  # no fault
        peer.run_for(0.5)
        r = peer.truth[16:20]
        check(all(abs(v - rpm) < 5 for v in r),
              "fault ID 0: MotorRPMS %s" % ["%.1f" % v for v in r])
        check(peer.data[10] == 1,
              "outCopterData[10] (fault Kestrel cannot apply) %g" % peer.data[10])

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
        # TerrainIn15d as RflySim's SDK packs it: "ii20f", checksum 1234567881, 15 values.
        peer.send(struct.pack("<ii20f", 1234567881, COPTER_ID, *([-3.0] * 15 + [0.0] * 5)))
        hold = []
        peer.run_for(1.5, hold)
        d = peer.data
        check(d[4] == 2, "outCopterData[4] (wrong size) is %g, expected 2" % d[4])
        check(d[5] == 3, "outCopterData[5] (wrong checksum) is %g, expected 3" % d[5])
        check(d[6] == 1, "outCopterData[6] (unknown CopterID) is %g, expected 1" % d[6])
        check(d[7] == 1, "outCopterData[7] (unknown mode) is %g, expected 1" % d[7])
        check(d[11] == 1, "outCopterData[11] (input the model does not take) is %g, expected 1"
              % d[11])
        check(d[3] > applied_before, "valid commands still applied (%g > %g)" % (d[3],
                                                                                 applied_before))
        worst = max(abs(s[5]) for _, s in hold)
        check(worst < 0.2, "bad packets not applied: |VelE down| stays below 0.2 (%.3f)" % worst)
    except RuntimeError as e:
        check(False, str(e))
    rc, log = peer.stop()
    check(rc == 0, "kestrel exited with %d on SIGINT" % rc)
    for kind in ("wrong size", "wrong checksum", "unknown CopterID", "unknown mode",
                 "fault Kestrel cannot apply", "input the model does not take"):
        lines = [l for l in log.splitlines() if "rejected a datagram" in l and kind in l]
        check(len(lines) == 1, "the log names '%s' once (%d lines)" % (kind, len(lines)))
    check("2 fault parameter packets applied; rejected: 2 wrong size, 3 wrong checksum, 1 unknown "
          "CopterID, 1 unknown mode, 0 bad setpoint value, 0 mode the model cannot fly, 1 fault "
          "Kestrel cannot apply, 1 input the model does not take" in log,
          "the exit line reports the counts")
    os.unlink(peer.log.name)
    hil_log = check_hil(sys.argv[1], sys.argv[2])
    if failures:
        print("--- kestrel's output ---\n" + log)
        print("--- kestrel's output (HIL run) ---\n" + hil_log)
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
