// Camera images on the built-in page, in headless Chromium (test/viewer/common.js): served by
// `kestrel run test/worlds/viewer_sensors.sdf --viewer`, whose camera sees only a red wall. The
// page draws each RawImage channel on a canvas of its own: the camera's canvas has the image's
// size, every pixel of it is the image's pixel as received (read back from the canvas), all of
// them the wall's red (not blank, not black), and it is drawn again as new frames arrive; the
// depth camera's image (32FC1) has a canvas too; no errors on the page.
// Usage: node page_camera_test.js KESTREL SOURCE_DIR
'use strict';
const path = require('path');
const { Checks } = require('../sitl/common.js');
const { startViewer, stop, runTest, launchChromium, pageWithErrors } = require('./common.js');

const [kestrel, source] = process.argv.slice(2);
const checks = new Checks();

async function main() {
  const chrome = await launchChromium();
  if (!chrome) process.exit(77);
  const k = startViewer(kestrel, path.join(source, 'test/worlds/viewer_sensors.sdf'), ['--no-transport']);
  const port = await k.port;
  try {
    const { page, errors } = await pageWithErrors(chrome.browser);
    await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load', timeout: 30000 });
    await page.waitForFunction(() => window.kestrel && kestrel.images.has('/camera') &&
                                 kestrel.images.get('/camera').frames >= 2 && kestrel.images.has('/depth'),
                               { timeout: 30000, polling: 100 });
    checks.expect(true, 'the page draws the camera and depth images');
    // The canvas against the image it drew (the newest), pixel by pixel.
    const r = await page.evaluate(() => {
      const im = kestrel.images.get('/camera');
      const c = im.canvas, last = im.last;
      const got = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let same = 0, red = 0;
      for (let i = 0; i < last.width * last.height; i++) {
        const [R, G, B] = [last.data[3 * i], last.data[3 * i + 1], last.data[3 * i + 2]];
        if (got[4 * i] === R && got[4 * i + 1] === G && got[4 * i + 2] === B && got[4 * i + 3] === 255) same++;
        if (got[4 * i] >= 50 && got[4 * i + 1] <= 10 && got[4 * i + 2] <= 10) red++;
      }
      return { w: c.width, h: c.height, encoding: last.encoding, n: last.width * last.height, same, red,
               frames: im.frames, rendered: c.getBoundingClientRect().width };
    });
    checks.expect(r.w === 64 && r.h === 48 && r.encoding === 'rgb8', `the canvas is the 64x48 rgb8 image (${r.w}x${r.h} ${r.encoding})`);
    checks.expect(r.same === r.n, `every canvas pixel is the image's (${r.same} of ${r.n})`);
    checks.expect(r.red === r.n, `every pixel is the wall's red (${r.red} of ${r.n})`);
    checks.expect(r.rendered > 0, `the canvas is on the page (${r.rendered} px wide)`);
    await page.waitForFunction((n) => kestrel.images.get('/camera').frames > n + 2, { timeout: 20000, polling: 100 }, r.frames);
    checks.expect(true, 'the canvas is drawn again with new frames');
    const d = await page.evaluate(() => {
      const c = kestrel.images.get('/depth').canvas;
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let lit = 0;
      for (let i = 0; i < px.length; i += 4) if (px[i] > 0) lit++;
      return { w: c.width, h: c.height, lit, encoding: kestrel.images.get('/depth').last.encoding };
    });
    checks.expect(d.w === 16 && d.h === 12 && d.encoding === '32FC1' && d.lit === 16 * 12,
                  `the depth image is drawn (${d.w}x${d.h} ${d.encoding}, ${d.lit} pixels with a depth)`);
    checks.expect(errors.length === 0, `no errors on the page (${errors.join(' | ')})`);
  } finally {
    await chrome.close();
  }
  const e = await stop(k);
  checks.expect(e.signal === null && e.code !== null, `kestrel exits on SIGINT without a crash (${e.code}, ${e.signal})`);
  return checks.summary();
}

runTest(main, checks);
