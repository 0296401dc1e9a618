#!/usr/bin/env node
// ArduPilot's servo packets carry 16 channels unless SERVO_32_ENABLE is 1. A world that maps
// SERVO21 (<channel><index>20</index>) must stop at the first 16-channel packet with an error
// naming the model, the channel, the packet's count and the <channel>'s FILE:LINE (exit 1), and
// fly on 32-channel packets (exit 0, every frame answered).
//
//   node test/sitl/ardupilot_short_packet.js KESTREL test/worlds/sitl_quad.sdf
'use strict';
const dgram = require('dgram');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { startKestrel, Checks } = require('./common');

const [kestrel, world] = process.argv.slice(2);
const RATE = 400;
const checks = new Checks();

// The test world with the quad's bridge declared: SERVO1..3 → rotors 0..2, SERVO21 → rotor 3.
function worldWithServo21() {
  const text = fs.readFileSync(world, 'utf8');
  const at = text.lastIndexOf('</model>');  // the quad is the last model
  const plugin = `<plugin filename="kestrel-ardupilot-bridge-system" name="kestrel::systems::ArduPilotBridge">
        <channel><index>0</index><rotor>0</rotor></channel>
        <channel><index>1</index><rotor>1</rotor></channel>
        <channel><index>2</index><rotor>2</rotor></channel>
        <channel><index>20</index><rotor>3</rotor></channel>
      </plugin>
    `;
  const out = text.slice(0, at) + plugin + text.slice(at);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kestrel-servo21-')), 'servo21.sdf');
  fs.writeFileSync(file, out);
  const line = out.slice(0, out.indexOf('<index>20</index>')).split('\n').length;
  return { file, line };
}

function servoPacket(frame, channels) {
  const b = Buffer.alloc(8 + 2 * channels);
  b.writeUInt16LE(channels === 32 ? 29569 : 18458, 0);
  b.writeUInt16LE(RATE, 2);
  b.writeUInt32LE(frame, 4);
  for (let i = 0; i < channels; i++) b.writeUInt16LE(1100, 8 + 2 * i);
  return b;
}

// Runs the world against a peer sending `channels`-channel packets (the next one on each
// answer); resolves with Kestrel's result, the number of answers and of distinct frames answered
// (while Kestrel starts, the peer resends frame 1, and each copy is answered with that frame's state).
async function fly(file, channels, duration) {
  const run = startKestrel(kestrel, [file, '--duration', String(duration), '--rtf', '0',
                                     '--no-transport']);
  const sock = dgram.createSocket('udp4');
  await new Promise((r) => sock.bind(0, '127.0.0.1', r));
  let frame = 0, answers = 0, closed = false;
  const stamps = new Set();
  const send = () => { if (!closed) sock.send(servoPacket(++frame, channels), 9002, '127.0.0.1'); };
  sock.on('message', (m) => { answers++; stamps.add(JSON.parse(m.toString()).timestamp); send(); });
  const starter = setInterval(() => { if (answers === 0) { frame = 0; send(); } }, 10);
  const result = await run.done;
  closed = true;
  clearInterval(starter);
  sock.close();
  return { result, answers, frames: stamps.size };
}

async function main() {
  const { file, line } = worldWithServo21();
  const short = await fly(file, 16, 5);
  checks.expect(short.result.code === 1, `16-channel packets: kestrel exited 1 (got ${short.result.code})`);
  checks.expect(short.answers === 0, `no frame answered (${short.answers})`);
  const want = `${file}:${line}: ArduPilot bridge (model 'sitl_quad::quad', instance 0): output ` +
               'channel 20 (SERVO21) drives rotor 3, but ArduPilot\'s servo packets carry 16 ' +
               'channels (magic 18458)';
  checks.expect(short.result.stderr.includes(want), `the error names the model, the channel and the count: ${want}`);
  checks.expect(short.result.stderr.includes('SERVO_32_ENABLE 1'), 'the error says how to fix it');
  const full = await fly(file, 32, 0.5);
  checks.expect(full.result.code === 0, `32-channel packets: kestrel exited 0 (got ${full.result.code})`);
  checks.expect(Math.abs(full.frames - 0.5 * RATE) <= 2, `every frame answered (${full.frames} distinct of ${full.answers} answers)`);
  checks.expect(/ 0 skipped frame counts/.test(full.result.stderr), 'no frame count skipped');
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  process.exit(checks.summary() ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
