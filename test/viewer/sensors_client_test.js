// The sensor channels through a real Foxglove client (@foxglove/ws-protocol on `ws`), decoded
// with protobufjs from the advertised FileDescriptorSets, against
// `kestrel run test/worlds/viewer_sensors.sdf --viewer` (a wall whose face is x = 3 m): the
// lidar's foxglove.LaserScan on its <topic> (the horizontal ring: range = 3 / cos(bearing)), its
// foxglove.PointCloud on <topic>/points (33 points, all on the wall, at their rays' bearings),
// the depth camera's PointCloud (a point per pixel, all on the wall) and the camera's RawImage
// (rgb8, the wall's red). Usage: node sensors_client_test.js KESTREL SOURCE_DIR
'use strict';
const path = require('path');
const { Checks } = require('../sitl/common.js');
const { foxglove, startViewer, waitFor, protobufType, stop, runTest } = require('./common.js');

const { FoxgloveClient, WebSocket } = foxglove();

const [kestrel, source] = process.argv.slice(2);
const checks = new Checks();

// Point i's float32 field `name` of a foxglove.PointCloud.
function field(pc, i, name) {
  const f = pc.fields.find((x) => x.name === name);
  const dv = new DataView(pc.data.buffer, pc.data.byteOffset, pc.data.byteLength);
  return dv.getFloat32(i * pc.point_stride + (f.offset || 0), true);
}

async function main() {
  const k = startViewer(kestrel, path.join(source, 'test/worlds/viewer_sensors.sdf'), ['--no-transport']);
  const port = await k.port;
  const client = new FoxgloveClient({
    ws: new WebSocket(`ws://127.0.0.1:${port}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  const channels = [];
  const byTopic = new Map();
  client.on('error', (e) => console.error(`client error: ${e.message}`));
  client.on('advertise', (chs) => { channels.push(...chs); });
  const subs = new Map();
  client.on('message', (m) => {
    const ch = subs.get(m.subscriptionId);
    const list = byTopic.get(ch.topic) || [];
    list.push(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
    byTopic.set(ch.topic, list);
  });
  await waitFor(() => channels.length >= 8, 20000, 'the channels advertised');
  const ch = (topic) => channels.find((c) => c.topic === topic);
  const want = { '/scan': 'foxglove.LaserScan', '/scan/points': 'foxglove.PointCloud',
                 '/depth/points': 'foxglove.PointCloud', '/camera': 'foxglove.RawImage' };
  for (const [topic, schema] of Object.entries(want)) {
    checks.expect(ch(topic) && ch(topic).schemaName === schema && ch(topic).encoding === 'protobuf',
                  `channel ${topic}: ${schema} in protobuf (${channels.map((c) => c.topic)})`);
  }
  if (checks.failed) throw new Error('channels missing');
  for (const topic of Object.keys(want)) subs.set(client.subscribe(ch(topic).id), ch(topic));
  await waitFor(() => Object.keys(want).every((t) => (byTopic.get(t) || []).length >= 2), 30000,
                'two messages on every sensor channel');
  const last = (topic) => protobufType(ch(topic)).decode(byTopic.get(topic).slice(-1)[0]);

  const scan = last('/scan');
  checks.expect(scan.frame_id === 'rig::link::lidar', `the scan's frame is the lidar's (${scan.frame_id})`);
  checks.expect(Math.abs(scan.start_angle + 0.5) < 1e-12 && Math.abs(scan.end_angle - 0.5) < 1e-12,
                `bearings -0.5 to 0.5 rad (${scan.start_angle}, ${scan.end_angle})`);
  const worst = Math.max(...scan.ranges.map((r, i) => Math.abs(r - 3 / Math.cos(-0.5 + 0.1 * i))));
  checks.expect(scan.ranges.length === 11 && worst < 1e-4,
                `11 ranges, each 3 / cos(bearing) (worst ${worst.toExponential(2)} m)`);

  const pc = last('/scan/points');
  const n = pc.data.length / pc.point_stride;
  let off = 0;
  for (let i = 0; i < n; i++) {
    const az = -0.5 + 0.1 * (i % 11), el = -0.2 + 0.2 * Math.floor(i / 11);
    off = Math.max(off, Math.abs(field(pc, i, 'x') - 3), Math.abs(field(pc, i, 'y') - 3 * Math.tan(az)),
                   Math.abs(field(pc, i, 'z') - 3 / Math.cos(az) * Math.tan(el)));
  }
  checks.expect(n === 33 && pc.fields.map((f) => f.name).join() === 'x,y,z,intensity' && off < 1e-4,
                `the lidar's 33 points lie on the wall at their rays (${n} points, worst ${off.toExponential(2)} m)`);

  const dp = last('/depth/points');
  const m = dp.data.length / dp.point_stride;
  let dx = 0;
  for (let i = 0; i < m; i++) dx = Math.max(dx, Math.abs(field(dp, i, 'x') - 3));
  checks.expect(m === 16 * 12 && dx < 1e-4, `the depth camera's ${m} points lie on the wall (worst ${dx.toExponential(2)} m)`);

  const img = last('/camera');
  let red = 0;
  for (let i = 0; i < img.width * img.height; i++) {
    if (img.data[3 * i] >= 50 && img.data[3 * i + 1] <= 10 && img.data[3 * i + 2] <= 10) red++;
  }
  checks.expect(img.encoding === 'rgb8' && img.width === 64 && red === 64 * 48,
                `the camera's image is the wall's red (${img.width}x${img.height} ${img.encoding}, ${red} red pixels)`);

  client.close();
  const e = await stop(k);
  checks.expect(e.signal === null && e.code !== null, `kestrel exits on SIGINT without a crash (${e.code}, ${e.signal})`);
  return checks.summary();
}

runTest(main, checks);
