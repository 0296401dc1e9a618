// Kestrel's recordings read by an independent MCAP implementation: npm @mcap/core's
// McapIndexedReader and McapStreamReader (zstd and lz4 through @mcap/support's decompressors,
// every chunk's CRC checked by them, the summary's CRC by the indexed reader, the data section's
// CRC here with @foxglove/crc). Cases:
//  - the X3 demo recorded for 6 s with its truth CSV: channels, schema names and encodings, the
//    message counts per channel equal to what kestrel printed and to the summary's statistics,
//    first and last log times, every decoded /tf pose of x3::base_link equal to the truth CSV's
//    x3 row at the same sim time; `kestrel log info` prints the same counts;
//  - lz4 and a --record-topics selection;
//  - the default rates (the viewer's in sim time, every sensor sample, a state sample a step);
//  - SIGINT: the file is complete (summary written);
//  - SIGKILL: the stream reader reads it up to its last complete chunk, every chunk spans less
//    than 0.25 s of sim time, the indexed reader and `kestrel log info` refuse it, naming why;
//  - an unwritable path and a full disk fail before the world runs.
// Usage: node mcap_core_test.js KESTREL SOURCE_DIR
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
let McapIndexedReader, McapStreamReader, loadDecompressHandlers, FileHandleReadable, crc32;
try {
  ({ McapIndexedReader, McapStreamReader } = require('@mcap/core'));
  ({ loadDecompressHandlers } = require('@mcap/support'));
  ({ FileHandleReadable } = require('@mcap/nodejs'));
  ({ crc32 } = require('@foxglove/crc'));
  require('protobufjs');
} catch (e) {
  console.log(`skipped: the recording test's node packages are missing (scripts/install-deps): ${e.message}`);
  process.exit(77);
}
const { Checks } = require('../sitl/common.js');
const { waitFor, runTest } = require('../viewer/common.js');

const [kestrel, source] = process.argv.slice(2);
const checks = new Checks();
const x3 = path.join(source, 'worlds/x3_mission.sdf');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kestrel_record_'));

function run(args, timeout = 120000) {
  const r = spawnSync(kestrel, ['run', ...args], { encoding: 'utf8', timeout });
  if (r.error) throw r.error;
  return r;
}

// The per-topic counts kestrel printed under "recording written to".
function printedCounts(stdout) {
  const counts = new Map();
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.includes('recording written to'));
  if (at < 0) return counts;
  for (const l of lines.slice(at + 1)) {
    const m = l.match(/^\s{4}(\S+)\s+(\d+)$/);
    if (!m) break;
    counts.set(m[1], Number(m[2]));
  }
  return counts;
}

function protobufType(schema) {
  const protobuf = require('protobufjs');
  require('protobufjs/ext/descriptor');
  const set = protobuf.descriptor.FileDescriptorSet.decode(schema.data);
  return protobuf.Root.fromDescriptor(set).lookupType(schema.name);
}

async function indexed(file, handlers) {
  const fh = await fs.promises.open(file, 'r');
  try {
    const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(fh), decompressHandlers: handlers });
    const messages = [];
    for await (const m of reader.readMessages()) messages.push(m);
    return { reader, messages };
  } finally {
    await fh.close();
  }
}

// Every record the stream reader gives, and whether it reached the end of a complete file.
function streamed(file, handlers) {
  const s = new McapStreamReader({ decompressHandlers: handlers, includeChunks: true });
  s.append(fs.readFileSync(file));
  const records = [];
  let r;
  while ((r = s.nextRecord())) records.push(r);
  return { records, done: s.done() };
}

const ns = (t) => BigInt(Math.round(t * 1e9));

async function demo(handlers) {
  const file = path.join(tmp, 'x3.mcap'), csv = path.join(tmp, 'x3.csv');
  const r = run([x3, '--no-transport', '--duration', '6', '--record', file, '--record-rate', '0',
                 '--truth-csv', csv]);
  checks.expect(r.status === 1 || r.status === 0, `the X3 for 6 s ran (exit ${r.status}): ${r.stderr}`);
  const printed = printedCounts(r.stdout);
  checks.expect(printed.size >= 4, `kestrel printed the recorded topics (${[...printed.keys()]})`);

  const { reader, messages } = await indexed(file, handlers);
  const channels = [...reader.channelsById.values()];
  const byTopic = new Map(channels.map((c) => [c.topic, c]));
  const schemaOf = (c) => reader.schemasById.get(c.schemaId);
  const tf = byTopic.get('/tf'), scene = byTopic.get('/scene');
  const stats = byTopic.get('/world/x3_mission/stats'), clock = byTopic.get('/world/x3_mission/clock');
  checks.expect(tf && tf.messageEncoding === 'protobuf' && schemaOf(tf).name === 'foxglove.FrameTransforms' &&
                schemaOf(tf).encoding === 'protobuf', 'channel /tf: foxglove.FrameTransforms, protobuf schema and messages');
  checks.expect(scene && schemaOf(scene).name === 'foxglove.SceneUpdate', 'channel /scene: foxglove.SceneUpdate');
  checks.expect(stats && stats.messageEncoding === 'json' && schemaOf(stats).encoding === 'jsonschema' &&
                JSON.parse(Buffer.from(schemaOf(stats).data).toString()).properties.rtf, 'channel stats: JSON with a JSON Schema');
  checks.expect(clock && schemaOf(clock).name === 'kestrel.Clock', 'channel clock: kestrel.Clock');
  checks.expect(channels.length === printed.size, `one channel per printed topic (${channels.length} vs ${printed.size})`);

  const counted = new Map();
  for (const m of messages) counted.set(m.channelId, (counted.get(m.channelId) || 0) + 1);
  for (const c of channels) {
    const n = counted.get(c.id) || 0;
    checks.expect(n === printed.get(c.topic), `${c.topic}: ${n} messages read, kestrel said ${printed.get(c.topic)}`);
    checks.expect(BigInt(n) === reader.statistics.channelMessageCounts.get(c.id), `${c.topic}: the statistics count ${n}`);
  }
  checks.expect(counted.get(clock.id) === 6000, `a clock message every 1 ms step (${counted.get(clock.id)})`);
  checks.expect(counted.get(scene.id) === 1, 'the scene once');
  const state = byTopic.get('/kestrel/state');
  checks.expect(state && state.schemaId === 0 && state.messageEncoding === 'kestrel.state' &&
                state.metadata.get('world') === path.resolve(x3) &&
                state.metadata.get('seed') === '0' && state.metadata.get('step_size_ns') === '1000000' &&
                state.metadata.get('models') === 'x3_mission::x3' &&
                state.metadata.get('links').split('\n').length === 5,
                `the state channel: no schema, kestrel.state, its metadata (${state && [...state.metadata]})`);
  checks.expect(counted.get(state.id) === 6000, `a state sample every 1 ms step (${counted.get(state.id)})`);
  // Format 2 (src/record/README.md, "The state channel"): the presence bytes first — the X3's
  // model and its 5 links each have a world pose and their relative pose given by the world
  // poses (bit 5, no pose written), the links their velocities, the model 4 rotor speeds — then
  // the 76 doubles split, their two high bytes, then their six low bytes: 617 bytes.
  const layout = (data) => {
    const bits = [];
    let at = 1, doubles = 0;
    for (let i = 0; i < 6 && at < data.length; ++i) {
      const b = data[at++];
      bits.push(b);
      doubles += ((b & 1) ? 7 : 0) + ((b & 2) ? 7 : 0) + ((b & 4) ? 3 : 0) + ((b & 8) ? 3 : 0);
      if (b & 16) {
        doubles += data[at] | (data[at + 1] << 8);
        at += 2;
      }
    }
    return { bits: bits.join(' '), header: at, doubles, end: at + 8 * doubles };
  };
  // The k-th double of a sample: its six low bytes, then its two high bytes, little-endian.
  const double = (data, l, k) => {
    const b = new Uint8Array(8);
    b.set(data.subarray(l.header + 2 * l.doubles + 6 * k, l.header + 2 * l.doubles + 6 * k + 6), 0);
    b.set(data.subarray(l.header + 2 * k, l.header + 2 * k + 2), 6);
    return new DataView(b.buffer).getFloat64(0, true);
  };
  const samples = messages.filter((m) => m.channelId === state.id);
  const odd = samples.filter((m) => {
    const l = layout(m.data);
    return m.data.length !== 617 || l.end !== 617 || l.bits !== '49 45 45 45 45 45';
  });
  checks.expect(state.metadata.get('format') === '2' && odd.length === 0,
                `format 2, every state sample 617 bytes with the relative poses left out ` +
                `(${odd.length} others; the first: ${odd.length ? JSON.stringify(layout(odd[0].data)) : '-'})`);
  // The model's world pose, its first 7 doubles, is the truth CSV's x3 row exactly.
  const truth = new Map();
  for (const line of fs.readFileSync(csv, 'utf8').split('\n').slice(1)) {
    const f = line.split(',');
    if (f[1] === 'x3') truth.set(ns(Number(f[0])), f.slice(2, 9).map(Number));
  }
  let exact = 0, differ = 0;
  for (const m of samples) {
    const want = truth.get(m.logTime);
    if (!want) continue;
    const l = layout(m.data);
    if (want.every((x, k) => x === double(m.data, l, k))) ++exact; else ++differ;
  }
  checks.expect(exact >= 550 && differ === 0,
                `the state samples' model pose, decoded here, equals the truth CSV (${exact} equal, ${differ} not)`);
  checks.expect(reader.statistics.messageStartTime === 1000000n && reader.statistics.messageEndTime === 6000000000n,
                `log times 1 ms to 6 s (${reader.statistics.messageStartTime} to ${reader.statistics.messageEndTime})`);
  checks.expect(messages[0].logTime === 1000000n && messages[messages.length - 1].logTime === 6000000000n,
                'the first and last messages read at 1 ms and 6 s');
  checks.expect(messages.every((m) => m.publishTime === m.logTime), 'publish time = log time');
  checks.expect(reader.chunkIndexes.length === 24 && reader.chunkIndexes.every((c) => c.compression === 'zstd' &&
                c.messageEndTime - c.messageStartTime < 250000000n), `24 zstd chunks, each under 0.25 s (${reader.chunkIndexes.length})`);

  // The stream reader: the same messages, and the data section's CRC.
  const st = streamed(file, handlers);
  const streamedMessages = st.records.filter((x) => x.type === 'Message');
  checks.expect(st.done && streamedMessages.length === messages.length, `stream reader: ${streamedMessages.length} messages, complete`);
  const dataEnd = st.records.find((x) => x.type === 'DataEnd');
  const bytes = fs.readFileSync(file);
  const footer = st.records.find((x) => x.type === 'Footer');
  const dataEndAt = Number(footer.summaryStart) - 13;
  checks.expect(dataEnd && dataEnd.dataSectionCrc === crc32(bytes.subarray(0, dataEndAt)),
                `the data section's CRC32 (${dataEnd && dataEnd.dataSectionCrc})`);

  // Every /tf pose of the base link equals the truth CSV's x3 row at the same sim time.
  const Tf = protobufType(schemaOf(tf));
  const poses = new Map();
  for (const m of messages) {
    if (m.channelId !== tf.id) continue;
    const t = Tf.decode(m.data).transforms.find((x) => x.child_frame_id === 'x3::base_link');
    poses.set(m.logTime, t);
  }
  let compared = 0, worst = 0;
  for (const line of fs.readFileSync(csv, 'utf8').split('\n').slice(1)) {
    const f = line.split(',');
    if (f[1] !== 'x3') continue;
    const t = poses.get(ns(Number(f[0])));
    if (!t) continue;
    const got = [t.translation.x, t.translation.y, t.translation.z, t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z];
    for (let i = 0; i < 7; ++i) worst = Math.max(worst, Math.abs(got[i] - Number(f[2 + i])));
    ++compared;
  }
  console.log(`X3 for 6 s: ${messages.length} messages in ${reader.chunkIndexes.length} chunks, ${fs.statSync(file).size} bytes; ` +
              `/tf of x3::base_link compared with the truth CSV at ${compared} times, worst difference ${worst}`);
  checks.expect(compared >= 550, `/tf compared with the truth CSV at ${compared} times`);
  checks.expect(worst <= 1e-12, `/tf equals the truth CSV (worst difference ${worst})`);
  checks.expect(poses.size > 5000, `a /tf message per step while the X3 flies (${poses.size})`);

  // kestrel log info: the same counts, from the summary.
  const info = spawnSync(kestrel, ['log', 'info', file], { encoding: 'utf8' });
  checks.expect(info.status === 0, `kestrel log info exits 0 (${info.status}: ${info.stderr})`);
  for (const c of channels) {
    const m = info.stdout.match(new RegExp(`\\s${c.topic.replace(/[/]/g, '\\/')}\\s+(\\d+)\\s`));
    checks.expect(m && Number(m[1]) === counted.get(c.id), `log info: ${c.topic} ${m && m[1]}`);
  }
  checks.expect(/duration:\s+5\.999 s/.test(info.stdout) && /compression: zstd/.test(info.stdout),
                `log info: duration and compression\n${info.stdout}`);
}

async function lz4AndTopics(handlers) {
  const file = path.join(tmp, 'lz4.mcap');
  const r = run([x3, '--no-transport', '--duration', '1.5', '--record', file, '--record-compression', 'lz4',
                 '--record-topics', '/tf', '/world/*/clock']);
  const { reader, messages } = await indexed(file, handlers);
  const topics = [...reader.channelsById.values()].map((c) => c.topic).sort();
  checks.expect(topics.join() === '/tf,/world/x3_mission/clock', `--record-topics: ${topics}`);
  checks.expect(reader.chunkIndexes.length === 6 && reader.chunkIndexes.every((c) => c.compression === 'lz4'), `6 lz4 chunks of 0.25 s (${reader.chunkIndexes.length})`);
  checks.expect(messages.length === [...printedCounts(r.stdout).values()].reduce((a, b) => a + b, 0),
                `lz4: ${messages.length} messages, as printed`);
  const bad = run([x3, '--no-transport', '--duration', '1', '--record', path.join(tmp, 'x.mcap'), '--record-topics', '/nope*']);
  checks.expect(bad.status !== 0 && bad.stderr.includes("'/nope*' matches no channel of the world; its channels are: /tf"),
                `a pattern matching nothing is refused (${bad.status}): ${bad.stderr}`);
}

// Without --record-rate: what the viewer sends, in sim time — stats and clock at 10 Hz, the
// world's state (/tf, the vehicle's JSON channels) at 60 Hz (each due 1/60 s after its last, so
// every 17 steps), every sensor sample (the IMU's 250 Hz) — and a state sample every step.
async function defaultRates(handlers) {
  const file = path.join(tmp, 'default.mcap');
  const r = run([x3, '--no-transport', '--duration', '2', '--record', file]);
  checks.expect(r.status === 1 || r.status === 0, `the X3 for 2 s ran (exit ${r.status}): ${r.stderr}`);
  const { reader, messages } = await indexed(file, handlers);
  const counted = new Map();
  for (const m of messages) counted.set(m.channelId, (counted.get(m.channelId) || 0) + 1);
  const count = (topic) => {
    const c = [...reader.channelsById.values()].find((x) => x.topic === topic);
    return c ? counted.get(c.id) || 0 : -1;
  };
  checks.expect(count('/world/x3_mission/clock') === 20 && count('/world/x3_mission/stats') === 20,
                `stats and clock at 10 Hz (${count('/world/x3_mission/stats')}, ${count('/world/x3_mission/clock')})`);
  checks.expect(count('/kestrel/state') === 2000, `a state sample every step (${count('/kestrel/state')})`);
  checks.expect(count('/tf') > 60 && count('/tf') <= 118, `/tf at most every 17 steps (${count('/tf')})`);
  checks.expect(count('/x3/command/motor_speed') <= 118, `the motor commands at 60 Hz (${count('/x3/command/motor_speed')})`);
  const imu = '/world/x3_mission/model/x3/link/base_link/sensor/imu_sensor/imu';
  checks.expect(count(imu) === 500, `every IMU sample at 250 Hz (${count(imu)})`);
}

// Starts a long X3 run recording to `file`; resolves once the file holds `chunks` chunks' worth.
async function startLong(file) {
  const child = spawn(kestrel, ['run', x3, '--no-transport', '--rtf', '1', '--duration', '600', '--record', file],
                      { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { out.stdout += d; });
  child.stderr.on('data', (d) => { out.stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, out, exited };
}

async function signals(handlers) {
  // SIGINT once the run has written a chunk (a slow start, as under sanitizers, must not leave
  // too little to read): the file is closed completely.
  const done = path.join(tmp, 'sigint.mcap');
  const a = await startLong(done);
  await waitFor(() => fs.existsSync(done) && fs.statSync(done).size > 20000, 20000, 'the recording to grow');
  await new Promise((res) => setTimeout(res, 1000));
  a.child.kill('SIGINT');
  const ea = await a.exited;
  checks.expect(a.out.stdout.includes('stopped by signal'), `SIGINT stopped the run (${ea.code}, ${ea.signal})`);
  const { reader, messages } = await indexed(done, handlers);
  checks.expect(messages.length > 1000 && BigInt(messages.length) === reader.statistics.messageCount,
                `after SIGINT the indexed reader reads all ${messages.length} messages`);

  // SIGKILL: nothing is closed; the file holds its complete chunks.
  const killed = path.join(tmp, 'sigkill.mcap');
  const b = await startLong(killed);
  await waitFor(() => fs.existsSync(killed) && fs.statSync(killed).size > 20000, 20000, 'the recording to grow');
  await new Promise((res) => setTimeout(res, 1200));
  b.child.kill('SIGKILL');
  await b.exited;
  const st = streamed(killed, handlers);
  const chunks = st.records.filter((x) => x.type === 'Chunk');
  const msgs = st.records.filter((x) => x.type === 'Message');
  checks.expect(!st.done && chunks.length >= 2 && msgs.length > 0,
                `the stream reader reads a killed run's ${chunks.length} complete chunks (${msgs.length} messages)`);
  checks.expect(chunks.every((c) => c.messageEndTime - c.messageStartTime < 250000000n), 'each chunk spans less than 0.25 s of sim time');
  console.log(`SIGKILL: ${chunks.length} complete chunks, ${msgs.length} messages, up to log time ${chunks.length ? chunks[chunks.length - 1].messageEndTime : 0} ns`);
  const lastChunkEnd = chunks.length ? chunks[chunks.length - 1].messageEndTime : 0n;
  checks.expect(msgs.length && msgs[msgs.length - 1].logTime <= lastChunkEnd, 'the last message read is in the last chunk');
  let refused = '';
  try {
    await indexed(killed, handlers);
  } catch (e) {
    refused = e.message;
  }
  checks.expect(refused !== '', `the indexed reader refuses a file without its summary (${refused})`);
  const info = spawnSync(kestrel, ['log', 'info', killed], { encoding: 'utf8' });
  checks.expect(info.status === 2 && /at byte \d+: expected the Footer record/.test(info.stderr) &&
                new RegExp(`: ${chunks.length} chunks? up to log time`).test(info.stderr),
                `log info names the truncation and the complete chunks (${info.status}): ${info.stderr}`);
}

function unwritable() {
  const r = run([x3, '--no-transport', '--duration', '1', '--record', path.join(tmp, 'no/such/dir/x.mcap')]);
  checks.expect(r.status === 2 && r.stderr.includes('does not exist') && !r.stdout.includes('finished'),
                `an unwritable path: exit 2 before the run (${r.status}): ${r.stderr}`);
  const full = run([x3, '--no-transport', '--duration', '1', '--record', '/dev/full']);
  checks.expect(full.status === 1 && full.stderr.includes('/dev/full: writing the recording (--record) failed at its header: No space left on device') &&
                !full.stdout.includes('finished'), `a full disk: exit 1 before the run (${full.status}): ${full.stderr}`);
}

async function main() {
  const handlers = await loadDecompressHandlers();
  try {
    await demo(handlers);
    await lz4AndTopics(handlers);
    await defaultRates(handlers);
    await signals(handlers);
    unwritable();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return checks.summary();
}

runTest(main, checks);
