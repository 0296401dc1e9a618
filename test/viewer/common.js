// Shared by the viewer tests: start `kestrel run --viewer` on a free port, wait for conditions
// (bounded, polled), and decode Foxglove channels with the schemas the server advertises.
'use strict';
const { spawn } = require('child_process');

// @foxglove/ws-protocol's client and the `ws` WebSocket (and protobufjs present), or exit 77
// (skipped) when the node packages are missing.
function foxglove() {
  try {
    const { FoxgloveClient } = require('@foxglove/ws-protocol');
    const WebSocket = require('ws');
    require('protobufjs');
    return { FoxgloveClient, WebSocket };
  } catch (e) {
    console.log(`skipped: the viewer test's node packages are missing (scripts/install-deps): ${e.message}`);
    process.exit(77);
  }
}

// Starts `kestrel run WORLD --viewer --viewer-port 0 ARGS...` and resolves with the child, its
// output so far (out.stdout, out.stderr) and the port it printed.
function startViewer(kestrel, world, args = []) {
  const child = spawn(kestrel, ['run', world, '--viewer', '--viewer-port', '0', ...args],
                      { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.on('data', (d) => { out.stderr += d; process.stderr.write(d); });
  const port = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out.stdout += d;
      const m = out.stdout.match(/viewer at http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) resolve(Number(m[1]));
    });
    exited.then((e) => reject(new Error(`kestrel exited (${e.code}, ${e.signal}) before printing its viewer URL:\n${out.stdout}`)));
  });
  return { child, out, exited, port };
}

// Resolves when pred() is true (polled every 20 ms); rejects after ms milliseconds.
function waitFor(pred, ms, what) {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      let v;
      try { v = pred(); } catch (e) { return reject(e); }
      if (v) return resolve(v);
      if (Date.now() - t0 > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

// A protobufjs type for a channel advertised with a FileDescriptorSet (base64) schema.
function protobufType(channel) {
  const protobuf = require('protobufjs');
  require('protobufjs/ext/descriptor');
  const set = protobuf.descriptor.FileDescriptorSet.decode(Buffer.from(channel.schema, 'base64'));
  return protobuf.Root.fromDescriptor(set).lookupType(channel.schemaName);
}

// Stops kestrel with SIGINT and resolves with its exit (SIGKILL after 20 s).
async function stop(k) {
  k.child.kill('SIGINT');
  const timer = setTimeout(() => k.child.kill('SIGKILL'), 20000);
  const e = await k.exited;
  clearTimeout(timer);
  return e;
}

// Runs the async test body and exits 0 if every check passed (1 otherwise, or on an error).
function runTest(main, checks) {
  main().then((ok) => process.exit(ok ? 0 : 1), (err) => {
    console.error(`FAILED: ${err.stack || err}`);
    checks.summary();
    process.exit(1);
  });
}

// Debian's chromium headless with WebGL on SwiftShader, a fresh profile, no network, driven by
// puppeteer-core; resolves with { browser, close() } (close also removes the profile), or null
// when puppeteer-core or chromium is missing (the caller skips).
async function launchChromium() {
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  let puppeteer;
  try {
    puppeteer = require('puppeteer-core');
  } catch (e) {
    console.log(`skipped: puppeteer-core is missing (scripts/install-deps): ${e.message}`);
    return null;
  }
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
  if (!chromium) {
    console.log('skipped: Debian\'s chromium is not installed (scripts/install-deps)');
    return null;
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kestrel-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           `--user-data-dir=${profile}`,
           // WebGL without a GPU: Chromium's software renderer
           '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
    defaultViewport: { width: 1280, height: 720 },
  });
  const close = async () => {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { browser, close };
}

// A new page of the browser that collects its errors (page errors and console errors).
async function pageWithErrors(browser) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return { page, errors };
}

module.exports = { foxglove, startViewer, waitFor, protobufType, stop, runTest, launchChromium, pageWithErrors };
