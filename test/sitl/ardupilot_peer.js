#!/usr/bin/env node
// Plays ArduPilot's SITL JSON interface against Kestrel over UDP (plain node dgram): sends
// binary servo packets (magic 18458, 16 channels, 400 Hz frames), parses every JSON answer,
// checks its fields, units and frames, and flies the quad to 5 m and holds it there with the
// same controller as the PX4 peer (PWM 1000–2000 µs).
//
//   node test/sitl/ardupilot_peer.js KESTREL WORLD [INSTANCE] [--duration S] [--truth-csv FILE]
//        [--jitter MS] [--stall-at S --stall-for S] [--model NAME --no-checks]
// --jitter, --stall-at and --stall-for delay the servo packets as px4_peer.js delays its answers
// (test/sitl/determinism_test.sh); a --duration under 12 s skips the hold checks; --model and
// --no-checks as in px4_peer.js.
'use strict';
const dgram = require('dgram');
const { startKestrel, Checks, checkHold, QuadController, parseArgs, AnswerDelay } = require('./common');

const { options, positional } = parseArgs(process.argv.slice(2), ['--no-checks', '--no-transport']);
const [kestrel, world, instanceArg] = positional;
const instance = Number(instanceArg || 0);
const DURATION = Number(options.get('--duration') || 18);  // s of sim time
const MODEL = options.get('--model') || 'quad';  // the model ArduPilot flies
const TARGET = 5;        // m
const RATE = 400;        // frames per second of sim time
const checks = new Checks();
const ctl = new QuadController(TARGET);
const delay = new AnswerDelay(options);
let closed = false;
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
  // Every step's truth (--truth-rate 0; the default is 100 Hz): the determinism test compares them.
  const extra = options.has('--truth-csv')
    ? ['--truth-csv', options.get('--truth-csv'), '--truth-rate', '0'] : [];
  if (options.has('--no-transport')) extra.push('--no-transport');
  const run = startKestrel(kestrel, [world, '--ardupilot', `${MODEL}:${instance}`, '--duration', String(DURATION), '--rtf', '0', ...extra]);
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
    // Kestrel holds its world until the first packet: the first frame ends at 1/RATE.
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
    if (DURATION >= 12 && j.timestamp > DURATION - 4) {
      holdErrors.push(altitude - TARGET);
      // Hovering: the specific force is −g along FRD z (up is −z), position and velocity NED.
      checks.near(a[2], -9.8, 0.5, 'accel_body z while hovering is −g (FRD)');
      checks.near(j.position[2], -TARGET, 0.3, 'position down ≈ −5 m while hovering (NED)');
    }
    pwm = u.map((v) => Math.round(1000 + 1000 * v));
    delay.then(j.timestamp, () => {
      if (closed) return;  // a late packet after Kestrel has finished
      if (frame === 300) sock.send(Buffer.from('not a servo packet'), port, '127.0.0.1');
      sendFrame();
    });
  });

  // Keep offering frames until Kestrel answers (it binds at configure).
  const starter = setInterval(() => { if (answers === 0) { frame = 0; sendFrame(); } }, 10);
  const t0 = process.hrtime.bigint();
  const result = await run.done;
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(starter);
  closed = true;
  sock.close();

  checks.expect(result.code === 0, `kestrel exited 0 (got ${result.code})`);
  checks.expect(firstTimestamp !== null && Math.abs(firstTimestamp) < 1e-9, `the world held until the first packet (first frame from ${firstTimestamp} s)`);
  const span = lastTimestamp - (firstTimestamp || 0);
  checks.expect(Math.abs(answers - RATE * span) <= 2, `one answer per frame at ${RATE} Hz (${answers} in ${span} s)`);
  checks.expect(!/no servo packet from ArduPilot within|never arrived/.test(result.stderr), 'no stall, no skipped frame');
  checks.expect(/step-thread CPU per lockstep exchange/.test(result.stderr), 'Kestrel reported the exchange cost');
  checkHold(checks, 'ardupilot', holdErrors, result.stdout, MODEL, TARGET, DURATION);
  console.log(`ardupilot peer: ${answers} frames in ${wall.toFixed(2)} s wall (${(answers / wall).toFixed(0)} frames/s)`);
  if (options.has('--no-checks')) process.exit(result.code === 0 ? 0 : 1);  // a benchmark
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
