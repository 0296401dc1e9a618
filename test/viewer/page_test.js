// The built-in page in headless Chromium (Debian's chromium, driven by npm puppeteer-core),
// served by `kestrel run worlds/x3_mission.sdf --viewer`: the page connects, draws the scene and
// follows the X3; the Pause button pauses the world, and paused, a screenshot shows the X3 where
// its transform puts it (the same view with the X3 hidden differs there and almost nowhere else),
// the view is neither blank nor one colour; Play runs it again, and the altitude plot's last point
// and its pixels change while the X3 flies.
// Usage: node page_test.js KESTREL SOURCE_DIR [SCREENSHOT.png]
'use strict';
const fs = require('fs');
const path = require('path');
const { Checks } = require('../sitl/common.js');
const { startViewer, stop, runTest, launchChromium, pageWithErrors } = require('./common.js');

const [kestrel, source, shot] = process.argv.slice(2);
const checks = new Checks();

// Pixels of a PNG, decoded by the page itself (no image package needed): {w, h, data (RGBA)}.
async function pixels(page, png) {
  const r = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    return { w: img.width, h: img.height, data: Array.from(g.getImageData(0, 0, img.width, img.height).data) };
  }, Buffer.from(png).toString('base64'));
  return r;
}
const at = (p, x, y) => { const i = 4 * (y * p.w + x); return [p.data[i], p.data[i + 1], p.data[i + 2]]; };
const diff = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]);
function median(p, x0, y0, half) {
  const cs = [];
  for (let y = y0 - half; y <= y0 + half; y++) for (let x = x0 - half; x <= x0 + half; x++) cs.push(at(p, x, y));
  return [0, 1, 2].map((k) => cs.map((c) => c[k]).sort((a, b) => a - b)[cs.length >> 1]);
}
async function main() {
  const chrome = await launchChromium();
  if (!chrome) process.exit(77);
  const k = startViewer(kestrel, path.join(source, 'worlds/x3_mission.sdf'), ['--no-transport', '--rtf', '1']);
  const port = await k.port;
  try {
    const { page, errors } = await pageWithErrors(chrome.browser);
    await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load', timeout: 30000 });
    await page.waitForFunction(() => window.kestrel && kestrel.connected && kestrel.sceneUpdates >= 1 &&
                                 kestrel.follow && kestrel.series['plot-alt'].t.length > 5 && kestrel.rendered > 10,
                               { timeout: 30000, polling: 100 });
    checks.expect(true, 'the page connects, gets the scene and transforms, and renders');
    checks.expect(await page.evaluate(() => kestrel.follow) === 'x3::base_link', 'the page follows the X3');
    // Flying: the X3 above 1 m, so the ground is behind it on the screen.
    await page.waitForFunction(() => { const s = kestrel.series['plot-alt']; return s.y[s.y.length - 1] > 1; },
                               { timeout: 30000, polling: 100 });
    // The Pause button pauses the world (the page's status line says so); paused, nothing moves
    // between the two screenshots below.
    await page.click('#pause');
    await page.waitForFunction(() => /\[paused\]/.test(document.getElementById('status').textContent), { timeout: 10000, polling: 100 });
    checks.expect(true, 'Pause pauses the world');
    const frames = async (n) => {
      const r0 = await page.evaluate(() => kestrel.rendered);
      await page.waitForFunction((r) => kestrel.rendered >= r, { timeout: 10000, polling: 50 }, r0 + n);
    };
    await frames(3);
    const png = await page.screenshot();
    if (shot) fs.writeFileSync(shot, png);
    const where = await page.evaluate(() => kestrel.screenOf('x3::base_link'));
    const view = await page.evaluate(() => { const r = document.querySelector('#view canvas').getBoundingClientRect(); return { w: r.width, h: r.height }; });
    const p = await pixels(page, png);
    const x = Math.round(where.x), y = Math.round(where.y);
    checks.expect(x > 40 && y > 40 && x < view.w - 40 && y < view.h - 40, `the X3 is in the view (${x}, ${y})`);
    // Not blank: the sky at the top, the ground below, many colours.
    const colours = new Set();
    for (let yy = 0; yy < view.h; yy += 7) for (let xx = 0; xx < view.w; xx += 7) colours.add(at(p, xx, yy).map((c) => c >> 3).join(','));
    checks.expect(colours.size >= 6, `the 3D view is not blank (${colours.size} colours)`);
    const sky = median(p, Math.round(view.w / 2), 8, 4), ground = median(p, x, Math.min(view.h - 20, y + 120), 10);
    checks.expect(diff(sky, ground) > 60, `sky ${sky} and ground ${ground} differ`);
    // The X3 is drawn where its transform puts it: the same view with the X3's links hidden
    // differs from it at the X3's place on the screen (its body and rotors), and (almost) nowhere
    // else. Counted apart from colour, so a grey X3 on grey ground counts as much as a dark one.
    await page.evaluate(() => { for (const [n, g] of kestrel.frames) if (n.startsWith('x3::')) g.visible = false; });
    await frames(3);
    const q = await pixels(page, await page.screenshot());
    await page.evaluate(() => { for (const [n, g] of kestrel.frames) if (n.startsWith('x3::')) g.visible = true; });
    let near = 0, far = 0;
    for (let yy = 0; yy < view.h; yy++) for (let xx = 0; xx < view.w; xx++) {
      if (diff(at(p, xx, yy), at(q, xx, yy)) <= 12) continue;
      if (Math.abs(xx - x) <= 80 && Math.abs(yy - y) <= 80) near++; else far++;
    }
    console.log(`X3 hidden: ${near} pixels change at its place, ${far} elsewhere`);
    checks.expect(near >= 300 && far <= near / 20, `the X3 is drawn at its place (${near} pixels change when it is hidden, ${far} elsewhere)`);
    await page.click('#play');
    await page.waitForFunction(() => kestrel.stats && !kestrel.stats.paused, { timeout: 10000, polling: 100 });
    checks.expect(true, 'Play runs it again');

    const plot1 = await (await page.$('#plot-alt canvas')).screenshot();
    const alt1 = await page.evaluate(() => { const s = kestrel.series['plot-alt']; return [s.t[s.t.length - 1], s.y[s.y.length - 1]]; });

    // The plot goes on while the X3 flies.
    await page.waitForFunction((t) => { const s = kestrel.series['plot-alt']; return s.t[s.t.length - 1] > t + 1; },
                               { timeout: 20000, polling: 100 }, alt1[0]);
    await new Promise((r) => setTimeout(r, 250));  // one plot redraw (10 Hz) after the data moved on
    const alt2 = await page.evaluate(() => { const s = kestrel.series['plot-alt']; return [s.t[s.t.length - 1], s.y[s.y.length - 1]]; });
    checks.expect(alt2[0] > alt1[0] && alt2[1] !== alt1[1], `the altitude plot's last point changes (${alt1} -> ${alt2})`);
    const plot2 = await (await page.$('#plot-alt canvas')).screenshot();
    checks.expect(Buffer.compare(Buffer.from(plot1), Buffer.from(plot2)) !== 0, 'the altitude plot is redrawn with it');

    // The battery plot: the X3's battery percentage, falling as it flies.
    const bat = await page.evaluate(() => { const s = kestrel.series['plot-battery']; return { n: s.y.length, first: s.y[0], last: s.y[s.y.length - 1], shown: !document.getElementById('plot-battery').hidden }; });
    checks.expect(bat.shown && bat.n > 5 && bat.last < bat.first && bat.first <= 100,
                  `the battery plot shows the charge falling (${bat.n} points, ${bat.first} -> ${bat.last} %)`);

    checks.expect(errors.length === 0, `no errors on the page (${errors.join(' | ')})`);
  } finally {
    await chrome.close();
  }
  const e = await stop(k);
  checks.expect(e.signal === null && e.code !== null, `kestrel exits on SIGINT without a crash (${e.code}, ${e.signal})`);
  return checks.summary();
}

runTest(main, checks);
