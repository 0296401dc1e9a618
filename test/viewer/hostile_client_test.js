// Hostile and slow clients against `kestrel run --viewer` (raw WebSockets from the `ws`
// package): malformed JSON, unknown ops, bad subscriptions, binary garbage, a bad service call,
// a 4 MiB frame, a client without the subprotocol, 100 clients at once and a client that stops
// reading. Each is refused with a status message (or an HTTP error) and counted in the stats
// channel; the connection that sent it goes on working, and so does the world.
// Usage: node hostile_client_test.js KESTREL SOURCE_DIR
'use strict';
const path = require('path');
let WebSocket;
try {
  WebSocket = require('ws');
} catch (e) {
  console.log(`skipped: the viewer test's node packages are missing (scripts/install-deps): ${e.message}`);
  process.exit(77);
}
const { Checks } = require('../sitl/common.js');
const { startViewer, waitFor, stop, runTest } = require('./common.js');

const [kestrel, source] = process.argv.slice(2);
const checks = new Checks();
const SUB = 'foxglove.websocket.v1';

// A raw client that records every text message and counts binary ones.
function rawClient(port, protocols = [SUB]) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, protocols, { maxPayload: 64 << 20 });
  const c = { ws, text: [], binary: 0, closed: null, error: null, httpStatus: null };
  ws.on('message', (data, isBinary) => {
    if (isBinary) c.binary++;
    else c.text.push(JSON.parse(data.toString()));
  });
  ws.on('close', (code) => { c.closed = code; });
  ws.on('error', (e) => { c.error = e; });
  ws.on('unexpected-response', (req, res) => { c.httpStatus = res.statusCode; ws.terminate(); });
  c.open = new Promise((resolve) => ws.on('open', resolve));
  c.ops = (op) => c.text.filter((m) => m.op === op);
  return c;
}

async function main() {
  const k = startViewer(kestrel, path.join(source, 'worlds/x3_mission.sdf'),
                        ['--no-transport', '--rtf', '1']);
  const port = await k.port;
  const a = rawClient(port);
  await a.open;
  await waitFor(() => a.ops('advertise').length && a.ops('advertiseServices').length, 10000, 'advertisements');
  const channels = a.ops('advertise')[0].channels;
  const stats = channels.find((c) => c.topic === '/world/x3_mission/stats');
  a.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 7, channelId: stats.id }] }));
  await waitFor(() => a.binary >= 1, 10000, 'a stats message');

  // Each bad message gets one error status naming what was wrong.
  const cases = [
    ['malformed JSON', () => a.ws.send('{"op": "subscribe", '), /not JSON/],
    ['JSON without op', () => a.ws.send('[1, 2, 3]'), /without a string 'op'/],
    ['an unknown op', () => a.ws.send(JSON.stringify({ op: 'explode' })), /op 'explode' is not supported/],
    ['clientPublish (not offered)', () => a.ws.send(JSON.stringify({ op: 'advertise', channels: [] })), /op 'advertise' is not supported/],
    ['a subscription to no channel', () => a.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 8, channelId: 999 }] })), /no channel 999/],
    ['a subscription id in use', () => a.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 7, channelId: 1 }] })), /id 7 is in use/],
    ['a negative channel id', () => a.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 9, channelId: -1 }] })), /unsigned 32-bit/],
    ['subscribe without a list', () => a.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: 5 })), /'subscriptions' array/],
    ['binary garbage', () => a.ws.send(Buffer.from([0x55, 1, 2, 3])), /binary op 0x55/],
    ['a truncated service call', () => a.ws.send(Buffer.from([0x02, 1, 0, 0])), /shorter than 13 bytes/],
    ['an encoding past the end', () => { const b = Buffer.alloc(13); b[0] = 2; b.writeUInt32LE(1000, 9); a.ws.send(b); }, /runs past its end/],
    ['a 4 MiB frame', () => a.ws.send('x'.repeat(4 << 20)), /refused: a message of 4194304 bytes/],
  ];
  for (const [what, send, re] of cases) {
    const n = a.ops('status').length;
    send();
    try {
      await waitFor(() => a.ops('status').length > n, 10000, `a status for ${what}`);
      const s = a.ops('status')[n];
      checks.expect(s.level === 2 && re.test(s.message), `${what}: refused with an error status (${s.message})`);
    } catch (e) {
      checks.expect(false, `${what}: ${e.message}`);
    }
  }
  // A service call with an unknown encoding and one to no service fail with serviceCallFailure.
  const serviceCall = (serviceId, callId, encoding, body) => {
    const enc = Buffer.from(encoding), data = Buffer.from(body);
    const head = Buffer.alloc(13);
    head[0] = 2; head.writeUInt32LE(serviceId, 1); head.writeUInt32LE(callId, 5); head.writeUInt32LE(enc.length, 9);
    a.ws.send(Buffer.concat([head, enc, data]));
  };
  serviceCall(1, 41, 'cbor', '{}');
  serviceCall(4242, 42, 'json', '{}');
  serviceCall(3, 43, 'json', '{"n": "many"');
  await waitFor(() => a.ops('serviceCallFailure').length >= 3, 10000, 'three service call failures');
  const f = new Map(a.ops('serviceCallFailure').map((x) => [x.callId, x.message]));
  checks.expect(/encoding 'cbor'/.test(f.get(41)), `an unknown encoding fails (${f.get(41)})`);
  checks.expect(/no service 4242/.test(f.get(42)), `an unknown service fails (${f.get(42)})`);
  checks.expect(/not a JSON object/.test(f.get(43)), `a malformed request fails (${f.get(43)})`);
  // The connection still works, and the stats count what was refused.
  const b0 = a.binary;
  await waitFor(() => a.binary > b0 + 2, 10000, 'stats still arriving on the same connection');
  checks.expect(a.closed === null, 'the connection that sent all that is still open');

  // No subprotocol: HTTP 400 before any WebSocket.
  const noSub = rawClient(port, []);
  await waitFor(() => noSub.httpStatus !== null || noSub.closed !== null || noSub.error, 10000, 'the answer to a client without the subprotocol');
  checks.expect(noSub.httpStatus === 400, `a client without ${SUB} gets HTTP 400 (${noSub.httpStatus})`);

  // A client that subscribes to everything and stops reading: the world goes on at its rate and
  // the newest-wins queue drops (counted).
  const slow = rawClient(port);
  await slow.open;
  slow.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: channels.map((c, i) => ({ id: i, channelId: c.id })) }));
  await waitFor(() => slow.binary > 0, 10000, 'the slow client\'s first messages');
  slow.ws._socket.pause();

  // 100 clients at once: the server holds 16 (a, slow and 14 more), the rest are refused with a
  // status and closed.
  const many = [];
  for (let i = 0; i < 100; i++) many.push(rawClient(port));
  await waitFor(() => many.every((c) => c.ops('serverInfo').length || c.ops('status').length || c.closed !== null || c.error), 30000, 'every one of 100 clients answered');
  const served = many.filter((c) => c.ops('serverInfo').length).length;
  const refused = many.filter((c) => c.ops('status').some((s) => /refused: 16 clients/.test(s.message))).length;
  checks.expect(served === 14, `14 of 100 more clients are served beside 2 (${served})`);
  checks.expect(refused === 86, `86 are refused with a status (${refused})`);
  await waitFor(() => many.filter((c) => c.closed !== null).length >= 86, 10000, 'the refused clients closed');
  checks.expect(true, 'refused clients are closed');
  for (const c of many) c.ws.terminate();

  // The world ran on meanwhile, and the stats show the drops and the refusals.
  const probe = rawClient(port);
  await probe.open;
  probe.ws.on('message', (data, isBinary) => {
    if (isBinary && data[0] === 1) probe.last = JSON.parse(data.subarray(13).toString());
  });
  probe.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: stats.id }] }));
  await waitFor(() => probe.last, 10000, 'stats on a new client after the 100');
  const t1 = probe.last.sim_time;
  await waitFor(() => probe.last.sim_time > t1 + 1, 20000, 'sim time going on with a stalled client connected');
  checks.expect(true, 'the world runs on with a client that does not read');
  await waitFor(() => probe.last.dropped > 0, 20000, 'drops counted for the stalled client');
  checks.expect(probe.last.dropped > 0, `drops counted (${probe.last.dropped})`);
  checks.expect(probe.last.refused >= cases.length + 3 + 86, `refusals counted (${probe.last.refused})`);
  checks.expect(probe.last.rtf > 0.5, `RTF stays near 1 with a stalled client (${probe.last.rtf})`);

  slow.ws.terminate();
  a.ws.close();
  probe.ws.close();
  const e = await stop(k);
  checks.expect(e.signal === null && e.code !== null, `kestrel exits on SIGINT without a crash (${e.code}, ${e.signal})`);
  return checks.summary();
}

runTest(main, checks);
