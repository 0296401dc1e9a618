// Shared by the SITL test peers: start Kestrel, frame conversions, checks and the quad
// controller. The peers talk to Kestrel with implementations Kestrel did not write
// (node-mavlink for MAVLink, plain JSON for ArduPilot), so they check the wire formats too.
'use strict';
const { spawn } = require('child_process');

// Starts `kestrel run WORLD ARGS...`; resolves with {code, stdout, stderr} when it exits.
function startKestrel(kestrel, args) {
  const child = spawn(kestrel, ['run', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; process.stderr.write(d); });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

// The final world position Kestrel prints for a model ("  w::quad  at (x, y, z) m").
function finalPosition(stdout, model) {
  const re = new RegExp(`::${model}\\s+at \\(([-\\d.]+), ([-\\d.]+), ([-\\d.]+)\\) m`);
  const m = stdout.match(re);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

class Checks {
  constructor() { this.passed = 0; this.failed = 0; this.seen = new Map(); }
  // Counts every check; prints the first few failures of each kind.
  expect(ok, what) {
    if (ok) { this.passed++; return true; }
    this.failed++;
    const key = what.split(':')[0];
    const n = (this.seen.get(key) || 0) + 1;
    this.seen.set(key, n);
    if (n <= 3) console.error(`FAILED: ${what}`);
    return false;
  }
  near(a, b, tol, what) {
    return this.expect(Number.isFinite(a) && Math.abs(a - b) <= tol, `${what}: ${a} vs ${b} (tol ${tol})`);
  }
  summary() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    return this.failed === 0;
  }
}

// The flight checks of a run long enough to climb (12 s of sim time or more): the altitude held
// within 0.25 m of the target over the last 4 s, and Kestrel's final position of the model.
function checkHold(checks, peer, holdErrors, stdout, model, target, duration) {
  if (duration < 12) {
    console.log(`${peer} peer: a ${duration} s run: hold checks skipped`);
    return;
  }
  const worst = Math.max(...holdErrors.map(Math.abs));
  checks.expect(holdErrors.length > 0 && worst < 0.25, `holds ${target} m ± 0.25 m for the last 4 s (worst ${worst.toFixed(3)} m)`);
  const pos = finalPosition(stdout, model);
  checks.expect(pos !== null && Math.abs(pos[2] - target) < 0.25, `Kestrel's final ${model} position z ≈ ${target} m (${pos})`);
}

// Rotates vector v (3) by the inverse of unit quaternion q = [w, x, y, z] (world → body).
function rotateInverse(q, v) {
  const [w, x, y, z] = q;
  // R^T v with R from q.
  const r = [
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
  ];
  return [0, 1, 2].map((i) => r[0][i] * v[0] + r[1][i] * v[1] + r[2][i] * v[2]);
}

// Roll, pitch, yaw (rad) of q_NED_FRD.
function euler(q) {
  const [w, x, y, z] = q;
  const roll = Math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
  const pitch = Math.asin(Math.max(-1, Math.min(1, 2 * (w * y - z * x))));
  const yaw = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
  return [roll, pitch, yaw];
}

// A quad X attitude + altitude controller. Inputs in NED/FRD: attitude q, body rates [p, q, r]
// (rad/s), altitude up (m) and climb rate (m/s). Outputs rotor commands 0..1 in PX4 / ArduCopter
// order: 0 front right (ccw), 1 back left (ccw), 2 front left (cw), 3 back right (cw).
class QuadController {
  constructor(targetAltitude) {
    this.target = targetAltitude;
    this.hover = 0.66;  // ≈ sqrt(m·g / 4 / k) / ω_max for the test quad
    this.integral = 0;
  }
  update(q, rates, altitude, climb, dt) {
    const [roll, pitch] = euler(q);
    const err = this.target - altitude;
    this.integral = Math.max(-0.2, Math.min(0.2, this.integral + 0.05 * err * dt));
    const thrust = this.hover + 0.13 * err - 0.12 * climb + this.integral;
    const tRoll = -0.22 * roll - 0.042 * rates[0];   // > 0: right wing down
    const tPitch = -0.76 * pitch - 0.14 * rates[1];  // > 0: nose up
    const tYaw = -0.4 * rates[2];                    // > 0: nose right
    const u = [
      thrust - tRoll + tPitch + tYaw,
      thrust + tRoll - tPitch + tYaw,
      thrust + tRoll + tPitch - tYaw,
      thrust - tRoll - tPitch - tYaw,
    ];
    return u.map((v) => Math.max(0, Math.min(1, v)));
  }
}

// Command-line options: `--name value` pairs, and the flags listed (no value); the rest in order.
function parseArgs(argv, flags) {
  const options = new Map(), positional = [];
  for (let i = 0; i < argv.length; i++) {
    if (flags.includes(argv[i])) options.set(argv[i], true);
    else if (argv[i].startsWith('--')) options.set(argv[i], argv[++i]);
    else positional.push(argv[i]);
  }
  return { options, positional };
}

// Sends a peer's answers in order, each after a wall-clock delay: none, a random 0..--jitter MS,
// and once, for the first answer at or after sim time --stall-at S, --stall-for S (default 3).
class AnswerDelay {
  constructor(options) {
    this.jitterMs = Number(options.get('--jitter') || 0);
    this.stallAt = options.has('--stall-at') ? Number(options.get('--stall-at')) : null;
    this.stallMs = 1000 * Number(options.get('--stall-for') || 3);
    this.stalled = false;
    this.queue = Promise.resolve();
  }
  // Runs send() after the delay this answer gets, after every earlier answer was sent.
  then(simTime, send) {
    let ms = this.jitterMs > 0 ? Math.random() * this.jitterMs : 0;
    if (this.stallAt !== null && !this.stalled && simTime >= this.stallAt) {
      this.stalled = true;
      ms += this.stallMs;
      console.log(`peer: stalling ${this.stallMs} ms before answering sim time ${simTime} s`);
    }
    if (ms === 0 && this.jitterMs === 0 && this.stallAt === null) { send(); return; }
    this.queue = this.queue.then(() => new Promise((r) => setTimeout(r, ms))).then(send);
  }
}

module.exports = { startKestrel, finalPosition, Checks, checkHold, rotateInverse, euler,
                   QuadController, parseArgs, AnswerDelay };
