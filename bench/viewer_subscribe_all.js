// The benchmark's Foxglove client (bench/x3_viewer_rtf.sh): started before kestrel, it tries to
// connect to 127.0.0.1:PORT every 5 ms until kestrel's viewer accepts, subscribes to every
// channel, counts the messages and bytes it receives until kestrel closes the connection at the
// end of the run, and prints them. Usage: node viewer_subscribe_all.js PORT
// (node packages from test/package.json)
'use strict';
const { FoxgloveClient } = require('@foxglove/ws-protocol');
const WebSocket = require('ws');

const port = Number(process.argv[2]);
const t0 = Date.now();
let messages = 0, bytes = 0, channels = 0, opened = false;

function connect() {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  ws.on('open', () => { opened = true; });
  const client = new FoxgloveClient({ ws });
  client.on('error', () => {});
  client.on('advertise', (chs) => {
    for (const ch of chs) client.subscribe(ch.id);
    channels += chs.length;
  });
  client.on('message', (m) => { messages++; bytes += m.data.byteLength; });
  client.on('close', () => {
    if (!opened) {
      if (Date.now() - t0 > 60000) { console.log('client: kestrel never accepted'); process.exit(1); }
      setTimeout(connect, 5);
      return;
    }
    console.log(`client: ${channels} channels, ${messages} messages, ${(bytes / 1e6).toFixed(2)} MB`);
    process.exit(0);
  });
}
connect();
