#!/usr/bin/env node
// Plays PX4's simulator_mavlink against Kestrel over TCP with node-mavlink: decodes every message
// Kestrel sends and checks fields, units and frames against the truth Kestrel sends alongside
// (HIL_STATE_QUATERNION), answers each sensor step with HIL_ACTUATOR_CONTROLS from a simple
// attitude + altitude controller, and flies the quad to 5 m and holds it there.
//
//   node test/sitl/px4_peer.js KESTREL WORLD [INSTANCE] [--sensors] [--duration S]
//        [--truth-csv FILE] [--jitter MS] [--stall-at S --stall-for S] [--model NAME --no-checks]
// Without --sensors the quad has no sensors of its own (noise-free stand-ins: sensors equal the
// truth); with --sensors it carries Kestrel's IMU, magnetometer, barometer, GNSS and altimeter
// with the noise of test/worlds/sitl_quad_sensors.sdf, and every check allows 6 sigma of it.
// Like PX4, the peer answers disarmed until it has "booted" (BOOT = 2 s of sim time), then armed.
// Its answers are functions of what Kestrel sent (hence of sim time), however late they are:
// --jitter MS delays each answer by a random 0..MS ms of wall clock, --stall-at S delays the
// answer to the first message at or after sim time S by --stall-for seconds (default 3) — the
// lockstep determinism test (test/sitl/determinism_test.sh) compares the --truth-csv of such
// runs byte for byte. --duration S (default 16) shorter than 12 s skips the hold checks.
// --model NAME flies another model; --no-checks only answers (bench/sitl_exchange_bench.sh).
// Exit 0 when every check passed, 1 otherwise, 77 when node-mavlink is not installed.
'use strict';
const net = require('net');
const path = require('path');
const { startKestrel, Checks, checkHold, rotateInverse, QuadController, parseArgs,
        AnswerDelay } = require('./common');

let mavlink;
try {
  mavlink = require(path.join(__dirname, '..', 'node_modules', 'node-mavlink'));
} catch (e) {
  console.error('SKIP: node-mavlink is not installed (run scripts/install-deps)');
  process.exit(77);
}
const { MavLinkPacketSplitter, MavLinkPacketParser, MavLinkProtocolV2, minimal, common, send } = mavlink;
const REGISTRY = { ...minimal.REGISTRY, ...common.REGISTRY };

const { options, positional } = parseArgs(process.argv.slice(2), ['--sensors', '--no-checks', '--no-transport']);
const SENSORS = options.has('--sensors');
const [kestrel, world, instanceArg] = positional;
const instance = Number(instanceArg || 0);
// Kestrel holds its world until the peer connects, so the flight starts at sim time 0.
const DURATION = Number(options.get('--duration') || 16);  // s of sim time
const MODEL = options.get('--model') || 'quad';  // the model PX4 flies
// s of sim time answered disarmed (PX4's boot): lockstep must be on before the peer arms for
// the run not to depend on timing, and on a loaded machine the first answer can take a second.
const BOOT = 2;
const TARGET = 5;            // m above the world origin
const ELEVATION = 488;       // the world's <elevation> [m]
// The geomagnetic field at the world origin, NED [gauss]: the World Magnetic Model (WMM2025) at
// 47.397742° N 8.545594° E, 488 m — declination 3.4° E, inclination 63.5°, 48.3 µT, as NOAA
// publishes for Zurich. Kestrel's stand-in magnetometer uses the WMM wherever the world has
// <spherical_coordinates> (the world's <magnetic_field>, 5.4° off, is not used).
const FIELD_NED = [0.215199, 0.012868, 0.432424];

// Tolerances: noise-free stand-ins, or 6 sigma of the noise in sitl_quad_sensors.sdf (thousands
// of samples per check; 5 sigma was exceeded once by the gyro) plus the wire's rounding and,
// for the magnetometer, the sensor's 5° WMM table vs the model.
const TOL = SENSORS ? {
  gyro: 6 * 0.002,                    // rad/s
  accelMg: 6 * 0.03 * 1000 / 9.80665 + 1,  // mG
  mag: 6 * 0.001 + 0.004,             // gauss (σ 1e-7 T = 0.001 gauss)
  baroAlt: 6 * 0.25,                  // m (σ 3 Pa ≈ 0.25 m)
  latE7: 6 * 0.5 * 90 + 2,            // 1 m of latitude ≈ 90 degE7
  lonE7: 6 * 0.5 * 133 + 2,           // 1 m of longitude at 47.4° N ≈ 133 degE7
  altMm: 6 * 1000 + 1,
  velCm: 6 * 5 + 1,
  rangeCm: 6 * 2 + 1,
} : { gyro: 1e-5, accelMg: 1.01, mag: 1e-4, baroAlt: 0.05, latE7: 2, lonE7: 2, altMm: 1, velCm: 1 };

const checks = new Checks();
const ctl = new QuadController(TARGET);
const delay = new AnswerDelay(options);
const protocol = new MavLinkProtocolV2(255, 1);
const stats = { sensor: 0, gps: 0, state: 0, heartbeat: 0, answers: 0, other: 0, distance: 0,
                mag: 0, baro: 0 };
let lastSensor = null, lastState = null, lastTime = 0n, firstTime = null, holdErrors = [];

function onSensor(s, socket) {
  stats.sensor++;
  const t = BigInt(s.timeUsec);
  checks.expect(t > lastTime, 'HIL_SENSOR time_usec increases');
  checks.expect(t % 4000n === 0n, 'HIL_SENSOR at 250 Hz of sim time (multiples of 4 ms)');
  lastTime = t;
  if (firstTime === null) firstTime = t;
  const bits = s.fieldsUpdated & 0x1fff;
  if (SENSORS) {
    // The IMU runs at the sensor rate (new every message); magnetometer 100 Hz, baro 50 Hz.
    checks.expect((bits & 0x3f) === 0x3f, 'fields_updated: accel and gyro in every message');
    checks.expect([0, 0x1c0].includes(bits & 0x1c0), 'fields_updated: mag x, y, z together');
    checks.expect([0, 0x1a00].includes(bits & 0x1a00), 'fields_updated: baro bits together');
    checks.expect((bits & 1024) === 0, 'fields_updated: no diff_pressure');
  } else {
    checks.expect(bits === (0x1fff & ~1024), 'fields_updated: accel, gyro, mag, baro, temperature');
  }
  if (bits & 0x1c0) stats.mag++;
  if (bits & 0x1a00) stats.baro++;
  const acc = Math.hypot(s.xacc, s.yacc, s.zacc);
  checks.expect(acc > 0 && acc < 60, `specific force magnitude plausible (${acc})`);
  checks.near(s.temperature, 15 - 0.0065 * (ELEVATION + 0.05), 0.1, 'temperature [°C] near 11.8 °C');
  // A real barometer's value counts once it has sampled (fields_updated says so; before its
  // first sample the field is 0 and flagged as not updated).
  if (!SENSORS || (bits & 0x1a00)) {
    checks.expect(s.absPressure > 900 && s.absPressure < 1000, `abs_pressure in hPa (${s.absPressure})`);
  }
  lastSensor = s;
}

function onState(q, socket) {
  stats.state++;
  const s = lastSensor;
  const att = q.attitudeQuaternion;
  checks.near(Math.hypot(...att), 1, 1e-5, 'attitude quaternion is unit');
  if (s && BigInt(s.timeUsec) === BigInt(q.timeUsec)) {
    // The IMU is the truth in FRD (noise-free stand-in, or Kestrel's IMU within its noise).
    checks.near(s.xgyro, q.rollspeed, TOL.gyro, 'gyro x (FRD) = truth rollspeed');
    checks.near(s.ygyro, q.pitchspeed, TOL.gyro, 'gyro y (FRD) = truth pitchspeed');
    checks.near(s.zgyro, q.yawspeed, TOL.gyro, 'gyro z (FRD) = truth yawspeed');
    checks.near(s.xacc * 1000 / 9.80665, q.xacc, TOL.accelMg, 'accel x [m/s²] vs truth [mG]');
    checks.near(s.yacc * 1000 / 9.80665, q.yacc, TOL.accelMg, 'accel y [m/s²] vs truth [mG]');
    checks.near(s.zacc * 1000 / 9.80665, q.zacc, TOL.accelMg, 'accel z [m/s²] vs truth [mG]');
    // The magnetometer is the geomagnetic field rotated into the body (NED → FRD), in gauss;
    // a real sensor's value is checked when it is new (fields_updated), else it is held.
    const bits = s.fieldsUpdated;
    if (bits & 0x1c0) {
      const m = rotateInverse(att, FIELD_NED);
      checks.near(s.xmag, m[0], TOL.mag, 'mag x (FRD, gauss)');
      checks.near(s.ymag, m[1], TOL.mag, 'mag y (FRD, gauss)');
      checks.near(s.zmag, m[2], TOL.mag, 'mag z (FRD, gauss)');
    }
    if (bits & 0x1a00) {
      checks.near(s.pressureAlt, q.alt / 1000, TOL.baroAlt, 'pressure altitude vs truth altitude [m]');
    }
  }
  lastState = q;
  // Control: answer this sensor step (disarmed, all zero, while booting).
  const simTime = Number(q.timeUsec) / 1e6;
  const booted = simTime >= BOOT;
  const altitude = q.alt / 1000 - ELEVATION;
  const climb = -q.vz / 100;  // NED down cm/s → up m/s
  const u = booted ? ctl.update(att, [q.rollspeed, q.pitchspeed, q.yawspeed], altitude, climb, 0.004)
                   : [0, 0, 0, 0];
  if (simTime > DURATION - 4) holdErrors.push(altitude - TARGET);
  const a = new common.HilActuatorControls();
  a.timeUsec = BigInt(q.timeUsec);
  a.controls = [...u, ...new Array(12).fill(0)];
  a.mode = booted ? 128 | 1 : 1;  // SAFETY_ARMED | CUSTOM_MODE_ENABLED once booted
  a.flags = 1n;      // HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP
  stats.answers++;
  const n = stats.answers;
  delay.then(simTime, () => {
    if (!socket.writable) return;  // a late answer after Kestrel has finished
    send(socket, a, protocol).catch(() => {});
    // Once, a burst of malformed bytes and a truncated frame: Kestrel must shrug them off.
    if (n === 500) socket.write(Buffer.from([0xfd, 0x40, 0x00, 0x00, 0x01, 0xfe, 0x11, 0xfd, 0xfd, 0x09]));
  });
}

function onGps(g) {
  stats.gps++;
  checks.expect(g.fixType === 3, 'HIL_GPS fix_type 3');
  checks.expect(g.satellitesVisible >= 10, 'HIL_GPS ≥ 10 satellites');
  checks.expect(g.eph >= 30 && g.eph <= 100 && g.epv >= 30 && g.epv <= 100, 'HIL_GPS eph/epv 30–100 cm');
  if (lastState) {
    checks.near(g.lat, lastState.lat, TOL.latE7, 'HIL_GPS lat [degE7] vs truth');
    checks.near(g.lon, lastState.lon, TOL.lonE7, 'HIL_GPS lon [degE7] vs truth');
    checks.near(g.alt, lastState.alt, TOL.altMm, 'HIL_GPS alt [mm] vs truth');
    checks.near(g.vn, lastState.vx, TOL.velCm, 'HIL_GPS vn [cm/s] (NED) vs truth');
    checks.near(g.ve, lastState.vy, TOL.velCm, 'HIL_GPS ve [cm/s] (NED) vs truth');
    checks.near(g.vd, lastState.vz, TOL.velCm, 'HIL_GPS vd [cm/s] (NED) vs truth');
  }
}

// DISTANCE_SENSOR: the altimeter as a downward rangefinder over the ground (z = 0) at 50 Hz.
function onDistance(d) {
  stats.distance++;
  checks.expect(d.orientation === 25, `DISTANCE_SENSOR orientation 25 (PITCH_270, down) (${d.orientation})`);
  checks.expect(d.type === 0, `DISTANCE_SENSOR type LASER (${d.type})`);
  checks.expect(d.minDistance === 10 && d.maxDistance === 4000, `DISTANCE_SENSOR range 10..4000 cm (${d.minDistance}..${d.maxDistance})`);
  checks.expect(d.covariance === 4, `DISTANCE_SENSOR covariance (2 cm)² = 4 cm² (${d.covariance})`);
  if (lastState) {
    checks.expect(BigInt(d.timeBootMs) === BigInt(lastState.timeUsec) / 1000n, 'DISTANCE_SENSOR time_boot_ms = time_usec / 1000');
    const [w, x, y, z] = lastState.attitudeQuaternion;
    const cosTilt = 1 - 2 * (x * x + y * y);
    const height = lastState.alt / 1000 - ELEVATION;  // base link origin above z = 0 [m]
    checks.near(d.currentDistance, (height / cosTilt) * 100, TOL.rangeCm, 'DISTANCE_SENSOR current_distance [cm] vs truth height / cos(tilt)');
  }
}

async function connect(port) {
  for (let i = 0; i < 1200; i++) {  // up to 60 s: loading is slow under sanitizers on a loaded machine
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
  // Every step's truth (--truth-rate 0; the default is 100 Hz): the determinism test compares them.
  const extra = options.has('--truth-csv')
    ? ['--truth-csv', options.get('--truth-csv'), '--truth-rate', '0'] : [];
  if (options.has('--no-transport')) extra.push('--no-transport');
  const run = startKestrel(kestrel, [world, '--px4', `${MODEL}:${instance}`, '--duration', String(DURATION), '--rtf', '0', ...extra]);
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
    else if (clazz === common.DistanceSensor) onDistance(m);
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
  // Kestrel holds the world until the peer connects: the first HIL_SENSOR is at 4 ms.
  checks.expect(firstTime === 4000n, `the first HIL_SENSOR is at sim time 4 ms (${firstTime} us)`);
  const span = Number(lastTime - (firstTime || 0n)) / 1e6;
  checks.expect(/lockstep on, sim time advances only on PX4's answers/.test(result.stderr),
                'Kestrel said lockstep is on');
  checks.expect(!/did not answer HIL_SENSOR/.test(result.stderr), 'no stall, no run-on');
  checks.expect(!/not reproducible/.test(result.stderr), 'lockstep was on before the peer armed');
  checks.expect(/step-thread CPU per lockstep exchange/.test(result.stderr), 'Kestrel reported the exchange cost');
  checks.expect(Math.abs(stats.sensor - 1 - 250 * span) <= 1, `HIL_SENSOR at 250 Hz (${stats.sensor} in ${span} s)`);
  const gpsRate = stats.gps / span;
  checks.expect(gpsRate >= 5 && gpsRate <= 10.5, `HIL_GPS at 5–10 Hz (${gpsRate.toFixed(1)} Hz)`);
  checks.expect(stats.heartbeat >= Math.floor(span) - 1, `HEARTBEAT at 1 Hz (${stats.heartbeat})`);
  checks.expect(stats.other === 0, `only known messages (${stats.other} others)`);
  if (SENSORS) {
    checks.expect(Math.abs(stats.mag - 100 * span) <= 2, `new magnetometer samples at 100 Hz (${stats.mag})`);
    checks.expect(Math.abs(stats.baro - 50 * span) <= 2, `new barometer samples at 50 Hz (${stats.baro})`);
    checks.expect(Math.abs(stats.distance - 50 * span) <= 2, `DISTANCE_SENSOR at 50 Hz (${stats.distance})`);
  } else {
    checks.expect(stats.distance === 0, `no DISTANCE_SENSOR without an altimeter (${stats.distance})`);
  }
  checkHold(checks, 'px4', holdErrors, result.stdout, MODEL, TARGET, DURATION);
  console.log(`px4 peer: ${stats.answers} lockstep exchanges in ${wall.toFixed(2)} s wall ` +
              `(${(stats.answers / wall).toFixed(0)} exchanges/s), ${stats.gps} GPS, ${stats.heartbeat} heartbeats`);
  if (options.has('--no-checks')) process.exit(result.code === 0 ? 0 : 1);  // a benchmark
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
