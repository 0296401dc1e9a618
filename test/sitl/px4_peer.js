#!/usr/bin/env node
// Plays PX4's simulator_mavlink against Kestrel over TCP with node-mavlink: decodes every message
// Kestrel sends and checks fields, units and frames against the truth Kestrel sends alongside
// (HIL_STATE_QUATERNION), answers each sensor step with HIL_ACTUATOR_CONTROLS from a simple
// attitude + altitude controller, and flies the quad to 5 m and holds it there.
//
//   node test/sitl/px4_peer.js KESTREL WORLD [INSTANCE]
// Exit 0 when every check passed, 1 otherwise, 77 when node-mavlink is not installed.
'use strict';
const net = require('net');
const path = require('path');
const { startKestrel, finalPosition, Checks, rotateInverse, QuadController } = require('./common');

let mavlink;
try {
  mavlink = require(path.join(__dirname, '..', 'node_modules', 'node-mavlink'));
} catch (e) {
  console.error('SKIP: node-mavlink is not installed (run scripts/install-deps)');
  process.exit(77);
}
const { MavLinkPacketSplitter, MavLinkPacketParser, MavLinkProtocolV2, minimal, common, send } = mavlink;
const REGISTRY = { ...minimal.REGISTRY, ...common.REGISTRY };

const [kestrel, world, instanceArg] = process.argv.slice(2);
const instance = Number(instanceArg || 0);
const DURATION = 12;         // s of sim time
const TARGET = 5;            // m above the world origin
const ELEVATION = 488;       // the world's <elevation> [m]
// The world's magnetic field (SDF default), NED [gauss]: north 22.8758 µT, east 5.5645 µT,
// down 42.3884 µT.
const FIELD_NED = [0.228758, 0.055645, 0.423884];

const checks = new Checks();
const ctl = new QuadController(TARGET);
const protocol = new MavLinkProtocolV2(255, 1);
const stats = { sensor: 0, gps: 0, state: 0, heartbeat: 0, answers: 0, other: 0 };
let lastSensor = null, lastState = null, lastTime = 0n, firstTime = null, holdErrors = [];

function onSensor(s, socket) {
  stats.sensor++;
  const t = BigInt(s.timeUsec);
  checks.expect(t > lastTime, 'HIL_SENSOR time_usec increases');
  checks.expect(t % 4000n === 0n, 'HIL_SENSOR at 250 Hz of sim time (multiples of 4 ms)');
  lastTime = t;
  if (firstTime === null) firstTime = t;
  checks.expect((s.fieldsUpdated & 0x1fff) === (0x1fff & ~1024), 'fields_updated: accel, gyro, mag, baro, temperature');
  const acc = Math.hypot(s.xacc, s.yacc, s.zacc);
  checks.expect(acc > 0 && acc < 60, `specific force magnitude plausible (${acc})`);
  checks.near(s.temperature, 15 - 0.0065 * (ELEVATION + 0.05), 0.1, 'temperature [°C] near 11.8 °C');
  checks.expect(s.absPressure > 900 && s.absPressure < 1000, `abs_pressure in hPa (${s.absPressure})`);
  lastSensor = s;
}

function onState(q, socket) {
  stats.state++;
  const s = lastSensor;
  const att = q.attitudeQuaternion;
  checks.near(Math.hypot(...att), 1, 1e-5, 'attitude quaternion is unit');
  if (s && BigInt(s.timeUsec) === BigInt(q.timeUsec)) {
    // Noise-free stand-in sensors: the IMU equals the truth, in FRD.
    checks.near(s.xgyro, q.rollspeed, 1e-5, 'gyro x (FRD) = truth rollspeed');
    checks.near(s.ygyro, q.pitchspeed, 1e-5, 'gyro y (FRD) = truth pitchspeed');
    checks.near(s.zgyro, q.yawspeed, 1e-5, 'gyro z (FRD) = truth yawspeed');
    checks.near(s.xacc * 1000 / 9.80665, q.xacc, 1.01, 'accel x [m/s²] vs truth [mG]');
    checks.near(s.zacc * 1000 / 9.80665, q.zacc, 1.01, 'accel z [m/s²] vs truth [mG]');
    // The magnetometer is the world field rotated into the body (NED → FRD), in gauss.
    const m = rotateInverse(att, FIELD_NED);
    checks.near(s.xmag, m[0], 1e-4, 'mag x (FRD, gauss)');
    checks.near(s.ymag, m[1], 1e-4, 'mag y (FRD, gauss)');
    checks.near(s.zmag, m[2], 1e-4, 'mag z (FRD, gauss)');
    checks.near(s.pressureAlt, q.alt / 1000, 0.05, 'pressure altitude vs truth altitude [m]');
  }
  lastState = q;
  // Control: answer this sensor step.
  const altitude = q.alt / 1000 - ELEVATION;
  const climb = -q.vz / 100;  // NED down cm/s → up m/s
  const u = ctl.update(att, [q.rollspeed, q.pitchspeed, q.yawspeed], altitude, climb, 0.004);
  const simTime = Number(q.timeUsec) / 1e6;
  if (simTime > DURATION - 4) holdErrors.push(altitude - TARGET);
  const a = new common.HilActuatorControls();
  a.timeUsec = BigInt(q.timeUsec);
  a.controls = [...u, ...new Array(12).fill(0)];
  a.mode = 128 | 1;  // SAFETY_ARMED | CUSTOM_MODE_ENABLED
  a.flags = 1n;      // HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP
  stats.answers++;
  send(socket, a, protocol);
  // Once, a burst of malformed bytes and a truncated frame: Kestrel must shrug them off.
  if (stats.answers === 500) socket.write(Buffer.from([0xfd, 0x40, 0x00, 0x00, 0x01, 0xfe, 0x11, 0xfd, 0xfd, 0x09]));
}

function onGps(g) {
  stats.gps++;
  checks.expect(g.fixType === 3, 'HIL_GPS fix_type 3');
  checks.expect(g.satellitesVisible >= 10, 'HIL_GPS ≥ 10 satellites');
  checks.expect(g.eph >= 30 && g.eph <= 100 && g.epv >= 30 && g.epv <= 100, 'HIL_GPS eph/epv 30–100 cm');
  if (lastState) {
    checks.near(g.lat, lastState.lat, 2, 'HIL_GPS lat [degE7] vs truth');
    checks.near(g.lon, lastState.lon, 2, 'HIL_GPS lon [degE7] vs truth');
    checks.near(g.alt, lastState.alt, 1, 'HIL_GPS alt [mm] vs truth');
    checks.near(g.vd, lastState.vz, 1, 'HIL_GPS vd [cm/s] (NED) vs truth');
  }
}

async function connect(port) {
  for (let i = 0; i < 200; i++) {
    try {
      return await new Promise((resolve, reject) => {
        const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
        s.once('error', reject);
      });
    } catch (e) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`could not connect to Kestrel on 127.0.0.1:${port}`);
}

async function main() {
  const run = startKestrel(kestrel, [world, '--px4', `quad:${instance}`, '--duration', String(DURATION), '--rtf', '0']);
  const socket = await connect(4560 + instance);
  socket.setNoDelay(true);
  const splitter = new MavLinkPacketSplitter();
  socket.pipe(splitter).pipe(new MavLinkPacketParser()).on('data', (packet) => {
    const clazz = REGISTRY[packet.header.msgid];
    if (!clazz) { stats.other++; return; }
    const m = packet.protocol.data(packet.payload, clazz);
    if (clazz === common.HilSensor) onSensor(m, socket);
    else if (clazz === common.HilStateQuaternion) onState(m, socket);
    else if (clazz === common.HilGps) onGps(m);
    else if (clazz === minimal.Heartbeat) stats.heartbeat++;
    else stats.other++;
  });
  socket.on('error', () => {});
  const t0 = process.hrtime.bigint();
  const result = await run.done;
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  socket.destroy();

  checks.expect(result.code === 0, `kestrel exited 0 (got ${result.code})`);
  checks.expect(splitter.invalidPackages === 0, `every frame passed node-mavlink's CRC check (${splitter.invalidPackages} invalid)`);
  // Kestrel runs on its own until the peer connects: rates over the connected span.
  const span = Number(lastTime - (firstTime || 0n)) / 1e6;
  checks.expect(span > DURATION / 2, `connected for most of the run (${span} s)`);
  checks.expect(Math.abs(stats.sensor - 1 - 250 * span) <= 1, `HIL_SENSOR at 250 Hz (${stats.sensor} in ${span} s)`);
  const gpsRate = stats.gps / span;
  checks.expect(gpsRate >= 5 && gpsRate <= 10.5, `HIL_GPS at 5–10 Hz (${gpsRate.toFixed(1)} Hz)`);
  checks.expect(stats.heartbeat >= Math.floor(span) - 1, `HEARTBEAT at 1 Hz (${stats.heartbeat})`);
  checks.expect(stats.other === 0, `only known messages (${stats.other} others)`);
  const worst = Math.max(...holdErrors.map(Math.abs));
  checks.expect(holdErrors.length > 0 && worst < 0.25, `holds 5 m ± 0.25 m for the last 4 s (worst ${worst.toFixed(3)} m)`);
  const pos = finalPosition(result.stdout, 'quad');
  checks.expect(pos !== null && Math.abs(pos[2] - TARGET) < 0.25, `Kestrel's final quad position z ≈ 5 m (${pos})`);
  console.log(`px4 peer: ${stats.answers} lockstep exchanges in ${wall.toFixed(2)} s wall ` +
              `(${(stats.answers / wall).toFixed(0)} exchanges/s), ${stats.gps} GPS, ${stats.heartbeat} heartbeats`);
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
