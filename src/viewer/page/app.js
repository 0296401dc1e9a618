// Kestrel's built-in page (src/viewer/README.md, "The page"): a Foxglove WebSocket client
// (subprotocol foxglove.websocket.v1) on the same port that served it. three.js draws the scene
// (/scene, foxglove.SceneUpdate) moved by the transforms (/tf, foxglove.FrameTransforms), the
// camera follows the vehicle; uPlot plots its altitude, speed and any number of a JSON channel;
// the buttons call the world-control services; each camera's image (foxglove.RawImage) is drawn
// on a canvas of its own. Every file comes from the kestrel binary.
import * as THREE from 'three';
import { OrbitControls } from '/OrbitControls.js';

const MAX_POINTS = 600;  // per plot
const state = {
  connected: false, channels: new Map(), subs: new Map(), services: new Map(), callId: 1,
  frames: new Map(), entities: new Map(), follow: null, firstPose: new Map(), messages: 0,
  rendered: 0, stats: null, plots: {}, series: {}, numeric: new Map(), images: new Map(),
};
window.kestrel = state;  // read by test/viewer/page_test.js

// ---- protobuf: Foxglove's schemas as Kestrel compiled them (the same file, from the binary) ----
const protoText = await (await fetch('/schemas.proto')).text();
const root = protobuf.parse(protoText, { keepCase: true }).root;
for (const f of ['google/protobuf/timestamp.proto', 'google/protobuf/duration.proto']) {
  root.addJSON(protobuf.common.get(f).nested);
}
const types = {
  'foxglove.FrameTransforms': root.lookupType('foxglove.FrameTransforms'),
  'foxglove.SceneUpdate': root.lookupType('foxglove.SceneUpdate'),
  'foxglove.RawImage': root.lookupType('foxglove.RawImage'),
};

// ---- three.js: world ENU, z up ----
const view = document.getElementById('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x9db4cc);
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 2000);
camera.up.set(0, 0, 1);
camera.position.set(-2.5, -2.5, 1.6);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 0.3);
const hemi = new THREE.HemisphereLight(0xffffff, 0x505050, 1.2);
hemi.position.set(0, 0, 1);
scene.add(hemi);
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(4, 2.5, 6);
scene.add(sun);

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h, true);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

function frameGroup(id) {
  let g = state.frames.get(id);
  if (!g) {
    g = new THREE.Group();
    g.name = id;
    scene.add(g);
    state.frames.set(id, g);
  }
  return g;
}

const v3 = (v) => new THREE.Vector3(v?.x ?? 0, v?.y ?? 0, v?.z ?? 0);
const quat = (q) => (q ? new THREE.Quaternion(q.x ?? 0, q.y ?? 0, q.z ?? 0, q.w ?? 0) : new THREE.Quaternion());
function place(obj, pose) {
  obj.position.copy(v3(pose?.position));
  obj.quaternion.copy(quat(pose?.orientation));
}
function material(c) {
  const a = c ? (c.a ?? 0) : 1;
  return new THREE.MeshStandardMaterial({
    color: new THREE.Color(c?.r ?? 0.7, c?.g ?? 0.7, c?.b ?? 0.7), roughness: 0.85, metalness: 0,
    transparent: a < 1, opacity: a, side: THREE.DoubleSide });
}

function buildEntity(e) {
  const g = new THREE.Group();
  for (const c of e.cubes || []) {
    const m = new THREE.Mesh(new THREE.BoxGeometry(c.size?.x ?? 0, c.size?.y ?? 0, c.size?.z ?? 0), material(c.color));
    place(m, c.pose);
    g.add(m);
  }
  for (const s of e.spheres || []) {
    const m = new THREE.Mesh(new THREE.SphereGeometry(0.5, 24, 16), material(s.color));
    place(m, s.pose);
    m.scale.copy(v3(s.size));
    g.add(m);
  }
  for (const c of e.cylinders || []) {
    const geo = new THREE.CylinderGeometry(0.5 * (c.top_scale ?? 1), 0.5 * (c.bottom_scale ?? 1), 1, 32);
    geo.rotateX(Math.PI / 2);  // three's cylinders stand on y, Foxglove's on z
    const m = new THREE.Mesh(geo, material(c.color));
    place(m, c.pose);
    m.scale.copy(v3(c.size));
    g.add(m);
  }
  for (const t of e.triangles || []) {
    const pos = new Float32Array(t.points.length * 3);
    t.points.forEach((p, i) => { pos[3 * i] = p.x ?? 0; pos[3 * i + 1] = p.y ?? 0; pos[3 * i + 2] = p.z ?? 0; });
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    if (t.indices && t.indices.length) geo.setIndex(Array.from(t.indices));
    geo.computeVertexNormals();
    const m = new THREE.Mesh(geo, material(t.color));
    place(m, t.pose);
    g.add(m);
  }
  return g;
}

function removeEntity(id) {
  const old = state.entities.get(id);
  if (!old) return;
  old.parent?.remove(old);
  old.traverse((o) => { o.geometry?.dispose(); o.material?.dispose(); });
  state.entities.delete(id);
}

function onScene(msg) {
  for (const d of msg.deletions || []) {
    if (d.type === 1) for (const id of [...state.entities.keys()]) removeEntity(id);
    else removeEntity(d.id);
  }
  for (const e of msg.entities || []) {
    removeEntity(e.id);
    const g = buildEntity(e);
    g.name = e.id;
    frameGroup(e.frame_id).add(g);
    state.entities.set(e.id, g);
  }
  state.sceneUpdates = (state.sceneUpdates || 0) + 1;
}

// ---- plots ----
function makePlot(id, label) {
  const el = document.getElementById(id);
  const series = { t: [], y: [] };
  const plot = new uPlot({
    width: 410, height: 150, legend: { show: false }, cursor: { show: false },
    // A flat series (the RTF held at 1) still gets a range.
    scales: { x: { time: false }, y: { range: (u, min, max) => (Number.isFinite(min) && Number.isFinite(max)
      ? (max - min < 1e-9 ? [min - 1, max + 1] : [min - 0.05 * (max - min), max + 0.05 * (max - min)]) : [0, 1]) } },
    axes: [{ label: 'sim time [s]', size: 30 }, { size: 50 }],
    series: [{}, { label, stroke: '#1565c0', width: 1.5 }],
  }, [[], []], el);
  state.plots[id] = plot;
  state.series[id] = series;
  return series;
}
function push(series, t, y) {
  if (series.t.length && t < series.t[series.t.length - 1]) { series.t.length = 0; series.y.length = 0; }  // reset
  series.t.push(t);
  series.y.push(y);
  if (series.t.length > MAX_POINTS) { series.t.shift(); series.y.shift(); }
}
const alt = makePlot('plot-alt', 'altitude');
const speed = makePlot('plot-speed', 'speed');
const picked = makePlot('plot-pick', 'picked');
const battery = makePlot('plot-battery', 'battery');
const pick = document.getElementById('pick');
pick.addEventListener('change', () => { picked.t.length = 0; picked.y.length = 0; });

// ---- following the vehicle ----
let lastFollow = null;
function onTransforms(msg) {
  let t = null;
  for (const tr of msg.transforms || []) {
    const g = frameGroup(tr.child_frame_id);
    g.position.copy(v3(tr.translation));
    g.quaternion.copy(quat(tr.rotation));
    if (!state.firstPose.has(tr.child_frame_id)) state.firstPose.set(tr.child_frame_id, g.position.clone());
    const ts = tr.timestamp;
    t = Number(ts?.seconds ?? 0) + (ts?.nanos ?? 0) * 1e-9;
  }
  // The vehicle: a base_link, else the first frame that moved.
  if (!state.follow) {
    const names = [...state.frames.keys()];
    state.follow = names.find((n) => /::base_link$/.test(n)) ||
      names.find((n) => state.firstPose.has(n) && state.frames.get(n).position.distanceTo(state.firstPose.get(n)) > 0.01) || null;
    if (state.follow) document.getElementById('follow').textContent = `Following: ${state.follow}`;
  }
  if (state.follow && t !== null) {
    const p = state.frames.get(state.follow).position;
    push(alt, t, p.z);
    if (lastFollow && t > lastFollow.t) push(speed, t, p.distanceTo(lastFollow.p) / (t - lastFollow.t));
    if (lastFollow && t < lastFollow.t) { speed.t.length = 0; speed.y.length = 0; }
    lastFollow = { t, p: p.clone() };
  }
}

// Every number of a JSON message by its path: "linear_acceleration.z", "velocity[2]".
function numbers(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const key = Array.isArray(obj) ? `${prefix}[${k}]` : prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'number') out.push([key, v]);
    else if (v && typeof v === 'object') numbers(v, key, out);
  }
  return out;
}

function onJson(channel, obj, t) {
  for (const [k, v] of numbers(obj, '', [])) {
    const key = `${channel.topic} ${k}`;
    if (!state.numeric.has(key)) {
      state.numeric.set(key, true);
      const o = document.createElement('option');
      o.value = o.textContent = key;
      pick.appendChild(o);
      if (key.endsWith('stats rtf')) pick.value = key;
    }
    if (pick.value === key) push(picked, t, v);
  }
  if (channel.schemaName === 'kestrel.Battery') {
    if (!state.battery) {
      state.battery = channel.topic;  // the first battery
      for (const el of document.querySelectorAll('.battery')) el.hidden = false;
    }
    if (state.battery === channel.topic) push(battery, t, 100 * obj.percentage);
  }
  if (channel.schemaName === 'kestrel.Stats') {
    state.stats = obj;
    document.getElementById('status').textContent =
      `sim ${obj.sim_time.toFixed(3)} s   RTF ${obj.rtf.toFixed(2)}${obj.paused ? '   [paused]' : ''}\n` +
      `clients ${obj.clients}   dropped ${obj.dropped}   refused ${obj.refused}`;
  }
}

// ---- camera images: one canvas per image channel, drawn with the image's own pixels ----
function onImage(channel, msg) {
  let im = state.images.get(channel.topic);
  if (!im) {
    const box = document.createElement('div');
    const title = document.createElement('h4');
    title.textContent = channel.topic;
    const canvas = document.createElement('canvas');
    canvas.dataset.topic = channel.topic;
    box.append(title, canvas);
    document.getElementById('images').appendChild(box);
    im = { canvas, frames: 0 };
    state.images.set(channel.topic, im);
  }
  const w = msg.width, h = msg.height, step = msg.step, src = msg.data;
  if (!w || !h || src.length < step * h) return;
  if (im.canvas.width !== w || im.canvas.height !== h) {
    im.canvas.width = w;
    im.canvas.height = h;
  }
  const g = im.canvas.getContext('2d');
  const out = g.createImageData(w, h);
  const px = out.data;
  const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  // Grey images: 8 bit as they are; 16 bit and depth from 55 (the least) to 255 (the most) over
  // their finite values, black where there is none.
  let lo = Infinity, hi = -Infinity;
  const value = (x, y) => {
    const o = y * step;
    if (msg.encoding === 'mono16') return dv.getUint16(o + 2 * x, true);
    return dv.getFloat32(o + 4 * x, true);
  };
  if (msg.encoding === 'mono16' || msg.encoding === '32FC1') {
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const v = value(x, y);
      if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
  }
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i = 4 * (y * w + x), o = y * step;
    if (msg.encoding === 'rgb8') {
      px[i] = src[o + 3 * x]; px[i + 1] = src[o + 3 * x + 1]; px[i + 2] = src[o + 3 * x + 2];
    } else if (msg.encoding === 'mono8') {
      px[i] = px[i + 1] = px[i + 2] = src[o + x];
    } else {
      const v = value(x, y);
      px[i] = px[i + 1] = px[i + 2] = Number.isFinite(v) ? (hi > lo ? 55 + 200 * (v - lo) / (hi - lo) : 255) : 0;
    }
    px[i + 3] = 255;
  }
  g.putImageData(out, 0, 0);
  im.frames++;
  im.last = { width: w, height: h, encoding: msg.encoding, data: src.slice() };
}

// ---- the protocol ----
const ws = new WebSocket(`ws://${location.host}/`, ['foxglove.websocket.v1']);
ws.binaryType = 'arraybuffer';
const note = (text) => { document.getElementById('msg').textContent = text; };
ws.onopen = () => { state.connected = true; };
ws.onclose = () => { state.connected = false; note('disconnected from the world'); };
ws.onmessage = (ev) => {
  if (typeof ev.data === 'string') {
    const m = JSON.parse(ev.data);
    if (m.op === 'advertise') {
      // What the page shows: transforms, the scene, JSON (plots, status) and camera images;
      // point clouds, scans and calibrations are left to Foxglove (not serialized for the page).
      const shown = (ch) => ch.encoding === 'json' || ch.schemaName in types;
      const subscriptions = [];
      for (const ch of m.channels) {
        state.channels.set(ch.id, ch);
        if (!shown(ch)) continue;
        const id = ch.id;
        state.subs.set(id, ch);
        subscriptions.push({ id, channelId: ch.id });
      }
      ws.send(JSON.stringify({ op: 'subscribe', subscriptions }));
    } else if (m.op === 'advertiseServices') {
      for (const s of m.services) state.services.set(s.name.split('/').pop(), s);
    } else if (m.op === 'status') {
      note(m.message);
    } else if (m.op === 'serviceCallFailure') {
      note(`failed: ${m.message}`);
    }
    return;
  }
  const dv = new DataView(ev.data);
  const op = dv.getUint8(0);
  if (op === 1) {
    const ch = state.subs.get(dv.getUint32(1, true));
    const t = Number(dv.getBigUint64(5, true)) * 1e-9;
    const bytes = new Uint8Array(ev.data, 13);
    state.messages++;
    if (!ch) return;
    if (ch.encoding === 'json') onJson(ch, JSON.parse(new TextDecoder().decode(bytes)), t);
    else if (ch.schemaName === 'foxglove.FrameTransforms') onTransforms(types[ch.schemaName].decode(bytes));
    else if (ch.schemaName === 'foxglove.SceneUpdate') onScene(types[ch.schemaName].decode(bytes));
    else if (ch.schemaName === 'foxglove.RawImage') onImage(ch, types[ch.schemaName].decode(bytes));
  } else if (op === 3) {
    const encLen = dv.getUint32(9, true);
    const r = JSON.parse(new TextDecoder().decode(new Uint8Array(ev.data, 13 + encLen)));
    note(r.message || 'ok');
  }
};

function call(name, request) {
  const s = state.services.get(name);
  if (!s || ws.readyState !== WebSocket.OPEN) return note(`no service ${name}`);
  const enc = new TextEncoder().encode('json'), body = new TextEncoder().encode(JSON.stringify(request));
  const buf = new Uint8Array(13 + enc.length + body.length);
  const dv = new DataView(buf.buffer);
  dv.setUint8(0, 2);
  dv.setUint32(1, s.id, true);
  dv.setUint32(5, state.callId++, true);
  dv.setUint32(9, enc.length, true);
  buf.set(enc, 13);
  buf.set(body, 13 + enc.length);
  ws.send(buf);
}
document.getElementById('play').onclick = () => call('play', {});
document.getElementById('pause').onclick = () => call('pause', {});
document.getElementById('step').onclick = () => call('step', { n: Number(document.getElementById('stepn').value) });
document.getElementById('reset').onclick = () => call('reset', {});
document.getElementById('setrtf').onclick = () => call('rtf', { rtf: Number(document.getElementById('rtf').value) });

// ---- drawing: the camera keeps its offset to the vehicle; plots at most 10 times a second ----
let lastPlot = 0;
function frame(now) {
  if (state.follow) {
    const p = state.frames.get(state.follow).getWorldPosition(new THREE.Vector3());
    camera.position.add(p.clone().sub(controls.target));
    controls.target.copy(p);
  }
  controls.update();
  renderer.render(scene, camera);
  state.rendered++;
  if (now - lastPlot > 100) {
    lastPlot = now;
    for (const id of Object.keys(state.plots)) state.plots[id].setData([state.series[id].t, state.series[id].y]);
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

// Where a frame's origin is on the page [CSS px], for the page test.
state.screenOf = (id) => {
  const g = state.frames.get(id);
  if (!g) return null;
  const p = g.getWorldPosition(new THREE.Vector3()).project(camera);
  const r = renderer.domElement.getBoundingClientRect();
  return { x: r.left + (p.x + 1) / 2 * r.width, y: r.top + (1 - p.y) / 2 * r.height };
};
