// A real Foxglove client (@foxglove/ws-protocol, on the `ws` WebSocket) against
// `kestrel run worlds/x3_mission.sdf --viewer`: it lists the channels and services, subscribes,
// decodes transforms and the scene with protobufjs from the advertised FileDescriptorSets, reads
// the JSON stats and clock, and flies the world through the control services (pause, step N,
// RTF, play, reset). Usage: node foxglove_client_test.js KESTREL SOURCE_DIR
'use strict';
const path = require('path');
const { Checks } = require('../sitl/common.js');
const { foxglove, startViewer, waitFor, protobufType, stop, runTest } = require('./common.js');

const { FoxgloveClient, WebSocket } = foxglove();

const [kestrel, source] = process.argv.slice(2);
const checks = new Checks();

async function main() {
  const k = startViewer(kestrel, path.join(source, 'worlds/x3_mission.sdf'),
                        ['--no-transport', '--rtf', '1']);
  const port = await k.port;
  const client = new FoxgloveClient({
    ws: new WebSocket(`ws://127.0.0.1:${port}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  const got = { info: null, channels: [], services: [], status: [], failures: [], times: [],
                responses: new Map(), byChannel: new Map() };
  client.on('error', (e) => console.error(`client error: ${e.message}`));
  client.on('serverInfo', (i) => { got.info = i; });
  client.on('advertise', (chs) => { got.channels.push(...chs); });
  client.on('advertiseServices', (s) => { got.services.push(...s); });
  client.on('status', (s) => { got.status.push(s); });
  client.on('serviceCallFailure', (f) => { got.failures.push(f); });
  client.on('time', (t) => { got.times.push(t.timestamp); });
  client.on('serviceCallResponse', (r) => {
    got.responses.set(r.callId, JSON.parse(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).toString()));
  });
  const subs = new Map();  // subscription id -> channel
  client.on('message', (m) => {
    const ch = subs.get(m.subscriptionId);
    const list = got.byChannel.get(ch.topic) || [];
    list.push({ t: m.timestamp, data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength) });
    got.byChannel.set(ch.topic, list);
  });

  await waitFor(() => got.info && got.channels.length >= 4 && got.services.length >= 5, 20000,
                'serverInfo, advertise and advertiseServices');
  checks.expect(got.info.capabilities.includes('time') && got.info.capabilities.includes('services'),
                `serverInfo capabilities time and services (${got.info.capabilities})`);
  const byTopic = new Map(got.channels.map((c) => [c.topic, c]));
  const tf = byTopic.get('/tf'), scene = byTopic.get('/scene');
  const stats = byTopic.get('/world/x3_mission/stats'), clock = byTopic.get('/world/x3_mission/clock');
  checks.expect(tf && tf.schemaName === 'foxglove.FrameTransforms' && tf.encoding === 'protobuf',
                'channel /tf: foxglove.FrameTransforms in protobuf');
  checks.expect(scene && scene.schemaName === 'foxglove.SceneUpdate', 'channel /scene: foxglove.SceneUpdate');
  checks.expect(stats && stats.encoding === 'json' && JSON.parse(stats.schema).properties.rtf,
                'channel stats: JSON with a JSON Schema');
  checks.expect(clock && clock.encoding === 'json', 'channel clock: JSON');
  if (checks.failed) throw new Error('channels missing');
  const FrameTransforms = protobufType(tf), SceneUpdate = protobufType(scene);

  // The vehicle's state and sensors as JSON channels (the battery, the IMU) on Gazebo's topics.
  const battery = got.channels.find((c) => c.schemaName === 'kestrel.Battery');
  const imu = got.channels.find((c) => c.schemaName === 'kestrel.Imu');
  checks.expect(battery && battery.topic === '/model/x3/battery/main/state' && battery.encoding === 'json' &&
                JSON.parse(battery.schema).properties.percentage, `the battery's JSON channel (${battery && battery.topic})`);
  checks.expect(imu && /\/sensor\/imu_sensor\/imu$/.test(imu.topic), `the IMU's JSON channel (${imu && imu.topic})`);
  if (checks.failed) throw new Error('channels missing');
  for (const ch of [tf, scene, stats, clock, battery, imu]) subs.set(client.subscribe(ch.id), ch);
  const msgs = (topic) => got.byChannel.get(topic) || [];
  const lastJson = (topic) => JSON.parse(msgs(topic)[msgs(topic).length - 1].data.toString());
  const x3z = () => {
    const l = msgs('/tf');
    if (!l.length) return NaN;
    const m = FrameTransforms.decode(l[l.length - 1].data);
    const t = m.transforms.find((x) => x.child_frame_id === 'x3::base_link');
    return t ? t.translation.z : NaN;
  };
  await waitFor(() => msgs('/scene').length >= 1 && msgs('/tf').length >= 10 &&
                msgs(stats.topic).length >= 2 && msgs(clock.topic).length >= 2 && got.times.length >= 1,
                20000, 'messages on every channel');

  // The scene: the ground plane and the X3's links, frame-locked to their frames.
  const sc = SceneUpdate.decode(msgs('/scene')[0].data);
  const ids = sc.entities.map((e) => e.id);
  checks.expect(sc.deletions.length === 1 && sc.deletions[0].type === 1, 'the scene replaces everything (deletion ALL)');
  const ground = sc.entities.find((e) => e.id === 'ground_plane::link');
  checks.expect(ground && ground.cubes.length === 1 && Math.abs(ground.cubes[0].size.x - 100) < 1e-9,
                `the ground plane is a 100 m box in the scene (${ids})`);
  const base = sc.entities.find((e) => e.id === 'x3::base_link');
  checks.expect(base && base.frame_locked && base.frame_id === 'x3::base_link' &&
                (base.cubes.length + base.cylinders.length + base.spheres.length + base.triangles.length) > 0,
                'the X3 base link has primitives in its own frame');
  checks.expect(sc.entities.filter((e) => e.id.startsWith('x3::rotor_')).length === 4, 'four rotors in the scene');

  // Transforms: every link, parent "world", the X3 climbing; stamps are sim time.
  const first = FrameTransforms.decode(msgs('/tf')[0].data);
  checks.expect(first.transforms.every((t) => t.parent_frame_id === 'world'), 'transforms are in the world frame');
  checks.expect(first.transforms.some((t) => t.child_frame_id === 'x3::rotor_3'), 'every link has a transform');
  await waitFor(() => x3z() > 1.0, 30000, 'the X3 climbing above 1 m');
  checks.expect(true, 'the X3 climbs in the transforms');
  const l = msgs('/tf')[msgs('/tf').length - 1];
  const m = FrameTransforms.decode(l.data);
  const ts = m.transforms[0].timestamp;
  const stampNs = BigInt(String(ts.seconds || 0)) * 1000000000n + BigInt(ts.nanos || 0);
  checks.expect(stampNs === l.t, `message timestamp = the transform's stamp = sim time (${stampNs} vs ${l.t})`);
  checks.expect(got.times.length > 0, 'time messages arrive');
  const b = lastJson(battery.topic), b0 = JSON.parse(msgs(battery.topic)[0].data.toString());
  checks.expect(b.percentage > 0 && b.percentage < b0.percentage && b.charge < b0.charge && b.voltage > 10,
                `the battery drains as the X3 climbs (${b0.percentage} -> ${b.percentage}, ${b.voltage} V)`);
  const a = lastJson(imu.topic);
  checks.expect(Number.isFinite(a.linear_acceleration.z) && a.linear_acceleration.z > 5,
                `the IMU's specific force holds the X3 up (${a.linear_acceleration.z} m/s²)`);

  // World control through the services.
  const service = (name) => got.services.find((s) => s.name === `/world/x3_mission/control/${name}`);
  let callId = 1;
  const call = async (name, req) => {
    const id = callId++;
    client.sendServiceCallRequest({ serviceId: service(name).id, callId: id, encoding: 'json',
                                    data: new Uint8Array(Buffer.from(JSON.stringify(req))) });
    await waitFor(() => got.responses.has(id) || got.failures.some((f) => f.callId === id), 10000, `${name} answered`);
    return got.responses.get(id) || { failure: got.failures.find((f) => f.callId === id).message };
  };
  checks.expect((await call('pause', {})).ok === true, 'pause answers ok');
  await waitFor(() => lastJson(stats.topic).paused === true, 10000, 'stats saying paused');
  // Paused: the clock stands still. The time paused at is the paused stats message's own: the
  // clock's channel is sent on its own timer and (one newest-wins slot per channel, sent in turn)
  // its last message may have left before the pause or arrive after the stats.
  const pausedAt = lastJson(stats.topic).sim_time;
  const res = await call('step', { n: 250 });
  checks.expect(res.ok === true, `step 250 answers ok (${JSON.stringify(res)})`);
  const want = Math.round((pausedAt + 0.25) * 1000);
  await waitFor(() => Math.round(lastJson(clock.topic).sim_time * 1000) === want, 10000,
                `the clock at ${want} ms after stepping 250 steps of 1 ms`);
  const nWant = msgs(clock.topic).length;
  await waitFor(() => msgs(clock.topic).length > nWant, 10000, 'a clock message after the steps');
  const after = Math.round(lastJson(clock.topic).sim_time * 1000);
  checks.expect(after === want, `paused again after the steps: the clock stands at ${want} ms (${after})`);
  const bad = await call('step', { n: -3 });
  checks.expect(bad.failure && /whole number/.test(bad.failure), `a bad step request fails with a reason (${bad.failure})`);
  checks.expect((await call('rtf', { rtf: 2 })).ok === true, 'rtf 2 answers ok');
  checks.expect((await call('play', {})).ok === true, 'play answers ok');
  await waitFor(() => lastJson(stats.topic).paused === false && lastJson(clock.topic).sim_time > pausedAt + 0.5,
                15000, 'time running again after play');
  checks.expect(true, 'play runs the world again');
  const before = lastJson(clock.topic).sim_time;
  const scenes = msgs('/scene').length;
  checks.expect((await call('reset', {})).ok === true, 'reset answers ok');
  await waitFor(() => lastJson(clock.topic).sim_time < before - 0.5, 15000, 'the clock going back after reset');
  checks.expect(true, 'reset sends the world back in time');
  await waitFor(() => msgs('/scene').length > scenes, 10000, 'the scene sent again after reset');
  checks.expect(true, 'the scene is sent again after reset');

  client.close();
  const e = await stop(k);
  checks.expect(e.signal === null && e.code !== null, `kestrel exits on SIGINT without a crash (${e.code}, ${e.signal})`);
  return checks.summary();
}

runTest(main, checks);
