#!/usr/bin/env node
// Tiny static file server for trying play.mjs against a directory of HLS/DASH files.
//   node tests/e2e/serve.mjs DIR [--port P] [--no-cors]
// Prints "LISTENING <port>" on stdout once ready. Sends Access-Control-Allow-Origin: *
// unless --no-cors is given (used to prove the harness really plays cross-origin).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const dir = path.resolve(args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--port') || '.');
const portIdx = args.indexOf('--port');
const port = portIdx >= 0 ? Number(args[portIdx + 1]) : 0;
const cors = !args.includes('--no-cors');
const types = {
  '.m3u8': 'application/vnd.apple.mpegurl', '.ts': 'video/mp2t', '.mpd': 'application/dash+xml',
  '.m4s': 'video/iso.segment', '.mp4': 'video/mp4', '.m4a': 'audio/mp4', '.m4v': 'video/mp4',
};
http.createServer((req, res) => {
  const h = { 'Cache-Control': 'no-cache' };
  if (cors) Object.assign(h, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': '*' });
  if (req.method === 'OPTIONS') { res.writeHead(204, h); res.end(); return; }
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = path.join(dir, path.normalize(rel).replace(/^(\.\.[/\\])+/, ''));
  if (!file.startsWith(dir)) { res.writeHead(403, h); res.end(); return; }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404, h); res.end(); return; }
    h['Content-Type'] = types[path.extname(file)] || 'application/octet-stream';
    res.writeHead(200, h);
    res.end(data);
  });
}).listen(port, '127.0.0.1', function () { console.log('LISTENING ' + this.address().port); });
