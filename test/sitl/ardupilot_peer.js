#!/usr/bin/env node
// Plays ArduPilot's SITL JSON interface against Kestrel over UDP (plain node dgram): sends
// binary servo packets (magic 18458, 16 channels, 400 Hz frames), parses every JSON answer,
// checks its fields, units and frames, and flies the quad to 5 m and holds it there with the
// same controller as the PX4 peer (PWM 1000–2000 µs).
//
//   node test/sitl/ardupilot_peer.js KESTREL WORLD [INSTANCE]
'use strict';
const dgram = require('dgram');
const { startKestrel, finalPosition, Checks, QuadController } = require('./common');

const [kestrel, world, instanceArg] = process.argv.slice(2);
const instance = Number(instanceArg || 0);
const DURATION = 18;     // s of sim time (room for a late connection, as in px4_peer.js)
const TARGET = 5;        // m
const RATE = 400;        // frames per second of sim time
const checks = new Checks();
const ctl = new QuadController(TARGET);
let frame = 0, answers = 0, holdErrors = [], lastTimestamp = 0, firstTimestamp = null;

function servoPacket(pwm) {
  const b = Buffer.alloc(40);
  b.writeUInt16LE(18458, 0);
  b.writeUInt16LE(RATE, 2);
  b.writeUInt32LE(frame, 4);
  for (let i = 0; i < 16; i++) b.writeUInt16LE(pwm[i] || 0, 8 + 2 * i);
  return b;
}

async function main() {
  const run = startKestrel(kestrel, [world, '--ardupilot', `quad:${instance}`, '--duration', String(DURATION), '--rtf', '0']);
  const sock = dgram.createSocket('udp4');
  await new Promise((r) => sock.bind(0, '127.0.0.1', r));
  const port = 9002 + 10 * instance;
  let pwm = [1000, 1000, 1000, 1000];
  const sendFrame = () => { frame++; sock.send(servoPacket(pwm), port, '127.0.0.1'); };

  sock.on('message', (msg) => {
    const text = msg.toString();
    checks.expect(text.startsWith('\n'), 'JSON answer starts with a newline');
    let j;
    try { j = JSON.parse(text); } catch (e) { checks.expect(false, `answer is JSON: ${text}`); return; }
    if (j.timestamp <= lastTimestamp) return;  // Kestrel's answer to a resent frame
    answers++;
    // Kestrel ran on its own until the first packet: time counts from the first answer.
    if (firstTimestamp === null) firstTimestamp = j.timestamp - Math.ceil(1000 / RATE - 1e-9) / 1000;
    // 400 Hz frames on 1 ms steps: each frame ends at the first step at or after k / 400 s.
    checks.near(j.timestamp - firstTimestamp, Math.ceil(frame * 1000 / RATE - 1e-9) / 1000, 1e-6,
                'timestamp follows the frame schedule [s]');
    lastTimestamp = j.timestamp;
    for (const k of ['position', 'velocity']) checks.expect(Array.isArray(j[k]) && j[k].length === 3, `${k} is [n, e, d]`);
    checks.expect(Array.isArray(j.quaternion) && j.quaternion.length === 4, 'quaternion is [w, x, y, z]');
    checks.near(Math.hypot(...j.quaternion), 1, 1e-9, 'quaternion is unit');
    const g = j.imu.gyro, a = j.imu.accel_body;
    const altitude = -j.position[2];
    const climb = -j.velocity[2];
    const u = ctl.update(j.quaternion, g, altitude, climb, 1 / RATE);
    if (j.timestamp > DURATION - 4) {
      holdErrors.push(altitude - TARGET);
      // Hovering: the specific force is −g along FRD z (up is −z), position and velocity NED.
      checks.near(a[2], -9.8, 0.5, 'accel_body z while hovering is −g (FRD)');
      checks.near(j.position[2], -TARGET, 0.3, 'position down ≈ −5 m while hovering (NED)');
    }
    pwm = u.map((v) => Math.round(1000 + 1000 * v));
    if (frame === 300) sock.send(Buffer.from('not a servo packet'), port, '127.0.0.1');
    sendFrame();
  });

  // Keep offering frames until Kestrel answers (it binds at configure).
  const starter = setInterval(() => { if (answers === 0) { frame = 0; sendFrame(); } }, 10);
  const t0 = process.hrtime.bigint();
  const result = await run.done;
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(starter);
  sock.close();

  checks.expect(result.code === 0, `kestrel exited 0 (got ${result.code})`);
  const span = lastTimestamp - (firstTimestamp || 0);
  checks.expect(span > DURATION / 2, `connected for most of the run (${span} s)`);
  checks.expect(Math.abs(answers - RATE * span) <= 2, `one answer per frame at ${RATE} Hz (${answers} in ${span} s)`);
  const worst = Math.max(...holdErrors.map(Math.abs));
  checks.expect(holdErrors.length > 0 && worst < 0.25, `holds 5 m ± 0.25 m for the last 4 s (worst ${worst.toFixed(3)} m)`);
  const pos = finalPosition(result.stdout, 'quad');
  checks.expect(pos !== null && Math.abs(pos[2] - TARGET) < 0.25, `Kestrel's final quad position z ≈ 5 m (${pos})`);
  console.log(`ardupilot peer: ${answers} frames in ${wall.toFixed(2)} s wall (${(answers / wall).toFixed(0)} frames/s)`);
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
