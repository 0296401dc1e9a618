#!/usr/bin/env node
// Hostile PX4 peers against `kestrel run --px4` (issue 15, "Network"; part of the hostile
// suite, test/hostile/README.md):
//   garbage  one connection sends 1 MiB of random bytes and 1000 HEARTBEAT frames with a bad
//            CRC, then closes: Kestrel reports the bad input at once (not only after an
//            exchange) and counts every byte and every bad frame in its summary.
//   cycles   200 connect/close cycles, each waiting for Kestrel's first bytes before closing:
//            every connection is accepted promptly (the listen backlog was 4 and connections
//            were taken one per step, so clients waited for SYN retries of 1 s).
// Both end Kestrel with SIGINT while it waits for PX4 to reconnect: it must stop promptly.
//   node test/hostile/px4_hostile_peer.js KESTREL WORLD garbage|cycles
// Exit 0 when every check passed, 1 otherwise, 77 when node-mavlink is not installed.
'use strict';
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { startKestrel, Checks } = require('../sitl/common');

let mavlink;
try {
  mavlink = require(path.join(__dirname, '..', 'node_modules', 'node-mavlink'));
} catch (e) {
  console.error('SKIP: node-mavlink is not installed (run scripts/install-deps)');
  process.exit(77);
}
const { MavLinkProtocolV2, minimal } = mavlink;

const [kestrel, world, mode] = process.argv.slice(2);
const PORT = 4560;
const checks = new Checks();

function connect() {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: PORT }, () => resolve(s));
    s.once('error', reject);
  });
}
async function connectRetrying() {
  for (let i = 0; i < 1200; i++) {  // up to 60 s (see px4_peer.js)
    try { return await connect(); } catch (e) { await new Promise((r) => setTimeout(r, 50)); }
  }
  throw new Error(`could not connect to Kestrel on 127.0.0.1:${PORT}`);
}
// Resolves once `re` (global) has matched `count` times in what Kestrel wrote to stderr so far.
function stderrMatches(run, re, count = 1) {
  const g = new RegExp(re.source, 'g');
  return new Promise((resolve) => {
    const check = () => {
      if ((run.stderr().match(g) || []).length >= count) { run.child.stderr.off('data', check); resolve(); }
    };
    run.child.stderr.on('data', check);
    check();
  });
}
// Ends our side after everything written was sent (destroy() would drop unsent bytes) and
// resolves when Kestrel has closed its side too. Reading what Kestrel sent keeps the close
// orderly (unread data would turn it into a reset).
const closed = (s) => new Promise((r) => { s.resume(); s.once('close', r); s.end(); });

async function garbage(run) {
  const s = await connectRetrying();
  s.on('error', () => {});
  s.resume();  // read (and drop) what Kestrel sends
  const random = crypto.randomBytes(1 << 20);
  const protocol = new MavLinkProtocolV2(1, 1);
  const frames = [];
  for (let i = 0; i < 1000; i++) {
    const hb = new minimal.Heartbeat();
    const f = Buffer.from(protocol.serialize(hb, i & 255));
    f[f.length - 1] ^= 0xff;  // a bad CRC
    frames.push(f);
  }
  const bad = Buffer.concat(frames);
  s.write(random);
  s.write(bad);
  await stderrMatches(run, /malformed MAVLink from PX4/);
  await closed(s);
  await stderrMatches(run, /PX4 disconnected/);
  return random.length + bad.length;
}

async function cycles(run) {
  for (let i = 0; i < 200; i++) {
    const s = await connectRetrying();
    s.on('error', () => {});
    // Accepted: Kestrel sends its first HEARTBEAT on the new connection.
    await new Promise((r) => s.once('data', r));
    await closed(s);
  }
  // Each connection ends as a disconnect, or replaced by the next one when Kestrel saw that first.
  await stderrMatches(run, /PX4 disconnected|replaces the current one/, 200);
}

async function main() {
  const child = startKestrel(kestrel, [world, '--px4', 'quad', '--rtf', '0', '--no-transport']);
  let err = '';
  child.child.stderr.on('data', (d) => { err += d; });
  const run = { child: child.child, stderr: () => err };
  const t0 = process.hrtime.bigint();
  const sent = mode === 'garbage' ? await garbage(run) : await cycles(run);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  // Kestrel now holds the world waiting for a reconnect: SIGINT must end it.
  child.child.kill('SIGINT');
  const result = await child.done;
  checks.expect(result.code === 0, `kestrel stopped by SIGINT exits 0 (got ${result.code})`);
  checks.expect(/stopped by signal/.test(result.stdout), 'Kestrel says it was stopped by a signal');
  const summary = result.stderr.match(/(\d+) connections?, (\d+) bytes received, (\d+) lockstep exchanges, \d+ stalls; bad input: (\d+) frames \(bad CRC (\d+)/);
  checks.expect(summary !== null, 'Kestrel printed its summary without a single exchange');
  if (summary) {
    const [, conns, bytes, exchanges, badFrames, badCrc] = summary.map(Number);
    checks.expect(exchanges === 0, `no lockstep exchange (${exchanges})`);
    if (mode === 'garbage') {
      checks.expect(conns === 1, `one connection (${conns})`);
      checks.expect(bytes === sent, `every byte counted (${bytes} of ${sent})`);
      checks.expect(badCrc >= 1000, `the 1000 bad-CRC frames counted (${badCrc} bad CRC, ${badFrames} bad frames)`);
    } else {
      checks.expect(conns === 200, `200 connections accepted (${conns})`);
    }
  }
  console.log(`px4 hostile peer (${mode}): ${wall.toFixed(2)} s wall`);
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
