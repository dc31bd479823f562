#!/usr/bin/env node
// Browser end-to-end playback check: plays a live HLS or DASH URL in headless Chromium
// with a real player (hls.js, dash.js or Shaka Player) loaded from a page on a different origin, and
// reports whether playback advanced for the requested time.
//
//   node tests/e2e/play.mjs --url URL --seconds N [--player hls|dash|dash4|shaka|videojs] [--low-latency]
//                           [--timeout-s T] [--screenshot FILE] [--ott] [--seek-to S]
//                           [--insecure-tls]
// --insecure-tls: accept a self-signed certificate on an https:// URL (tests only). The
// result counts the stream origin's responses by protocol (`protocols`, e.g. {"h2": 40}).
// --player: hls (hls.js), dash (dash.js 5.x, package `dashjs`), dash4 (dash.js 4.x, package
// `dashjs4`, an npm alias of dashjs@4), shaka (Shaka Player 5.x, package `shaka-player`) or
// videojs (video.js 8.x and its VHS engine, package `video.js`).
// --ott: hls.js load timeouts of about one target duration (O-21); the result lists the hosts
// fragments came from, in order (frag_hosts).
//
// Prints exactly one `RESULT {json}` line on stdout; diagnostics go to stderr.
// Exit status: 0 when ok, 1 otherwise (bad usage too).

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const NODE_MODULES = path.join(REPO, 'node_modules');
const SAMPLE_MS = 250;
// P-9: latency is sampled from this long after playback started (the start-up catch-up done).
const LATENCY_SETTLE_S = 5;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function log(...a) {
  process.stderr.write('[play] ' + a.join(' ') + '\n');
}

function usage(msg) {
  process.stderr.write(
    (msg ? 'play.mjs: ' + msg + '\n' : '') +
      'usage: node tests/e2e/play.mjs --url URL --seconds N [--player hls|dash|dash4|shaka|videojs] [--low-latency]\n' +
      '                             [--timeout-s T] [--screenshot FILE] [--ott] [--seek-to S]\n' +
      '                             [--insecure-tls]\n',
  );
  if (!msg) process.exit(0);
  process.stdout.write('RESULT ' + JSON.stringify({ ok: false, reason: 'usage: ' + msg }) + '\n');
  process.exit(1);
}

let opts;
try {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      seconds: { type: 'string' },
      player: { type: 'string', default: 'hls' },
      'low-latency': { type: 'boolean', default: false },
      ott: { type: 'boolean', default: false },
      'timeout-s': { type: 'string' },
      screenshot: { type: 'string' },
      'seek-to': { type: 'string' },
      'insecure-tls': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  opts = values;
} catch (e) {
  usage(e.message);
}
if (opts.help) usage();
if (!opts.url) usage('--url is required');
const seconds = Number(opts.seconds);
if (!opts.seconds || !isFinite(seconds) || seconds <= 0) usage('--seconds must be a positive number');
const LIBS = {
  hls: 'hls.js/dist/hls.min.js',
  dash: 'dashjs/dist/modern/umd/dash.all.min.js', // dash.js 5.x
  dash4: 'dashjs4/dist/dash.all.min.js', // dash.js 4.x (npm alias dashjs4)
  shaka: 'shaka-player/dist/shaka-player.compiled.js', // Shaka Player 5.x
  videojs: 'video.js/dist/video.min.js', // video.js 8.x with VHS
};
if (!Object.hasOwn(LIBS, opts.player)) usage('--player must be hls, dash, dash4, shaka or videojs');
const timeoutS = opts['timeout-s'] !== undefined ? Number(opts['timeout-s']) : seconds + 15;
if (!isFinite(timeoutS) || timeoutS <= 0) usage('--timeout-s must be a positive number');
const lowLatency = opts['low-latency'];
// --seek-to S: after 2 s of playback the page seeks to S seconds (a viewer scrubbing in a
// recording); the result gives `seeked_to` and the position reached afterwards (`final_t`).
const seekTo = opts['seek-to'] !== undefined ? Number(opts['seek-to']) : null;
if (seekTo !== null && (!isFinite(seekTo) || seekTo < 0)) usage('--seek-to must be a number of seconds');
let sought = false;

// ---------------------------------------------------------------------------------------
// Result bookkeeping. emit() prints the single RESULT line at most once.

const result = {
  ok: false,
  player: opts.player,
  player_version: null,
  url: opts.url,
  low_latency: lowLatency,
  seconds_wanted: seconds,
  played_s: 0,
  wall_s: 0,
  startup_s: null,
  max_stall_s: 0,
  // Every gap over 0.3 s between two samples where currentTime advanced, by the page's clock:
  // {end_ms: Date.now() at the advance that ended it, s: its length}. Lets a test bound the
  // stalls after an event (a node killed at a known wall time) apart from the start-up's.
  stalls: [],
  seeks: 0,
  errors: [],
  latency_s: null,
  latency_source: null,
  hls_latency_s: null,
  // Responses from the stream's origin by the protocol Chromium used (its nextHopProtocol,
  // read from the DevTools protocol: "h2", "http/1.1", …).
  protocols: {},
  level: null,
  video_size: null,
  reason: null,
};
let emitted = false;
let t0 = null; // performance.now() when the page navigation started
function emit() {
  if (emitted) return;
  emitted = true;
  if (!result.wall_s && t0 !== null) result.wall_s = (performance.now() - t0) / 1000;
  const r = { ...result };
  for (const k of ['played_s', 'wall_s', 'startup_s', 'max_stall_s', 'latency_s', 'hls_latency_s',
    'latency_median_s', 'latency_p90_s']) {
    if (typeof r[k] === 'number') r[k] = Math.round(r[k] * 1000) / 1000;
  }
  process.stdout.write('RESULT ' + JSON.stringify(r) + '\n');
}

// ---------------------------------------------------------------------------------------
// The page server: a separate origin from the stream, serving the page and player libs.

function resolveLib(rel) {
  const p = path.join(NODE_MODULES, rel);
  if (!fs.existsSync(p)) throw new Error(`missing ${p} (run npm ci in ${REPO})`);
  return p;
}

function startPageServer() {
  // Only the library of the player asked for: the page loads it as /lib/player.js.
  const files = {
    '/lib/player.js': resolveLib(LIBS[opts.player]),
    '/page.js': path.join(HERE, 'page.js'),
  };
  const html = () => `<!doctype html>
<html><head><meta charset="utf-8"><title>meshwork e2e</title>
<style>html,body{margin:0;background:#222}video{display:block;width:640px;height:360px;background:#000}</style>
</head><body>
<video id="video" muted autoplay playsinline></video>
<script src="/lib/player.js"></script>
<script src="/page.js"></script>
</body></html>`;

  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/' || u.pathname === '/index.html') {
      const body = html();
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(body);
      return;
    }
    if (u.pathname === '/time') {
      // Fallback UTC timing source for dash.js (see page.js).
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' });
      res.end(new Date().toISOString());
      return;
    }
    if (u.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    const f = files[u.pathname];
    if (f) {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
      fs.createReadStream(f).pipe(res);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// ---------------------------------------------------------------------------------------
// Cleanup and the global watchdog: whatever happens, the browser and server go away.

let browser = null;
let server = null;
async function cleanup() {
  const b = browser;
  browser = null;
  if (b) {
    await Promise.race([b.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
  }
  const s = server;
  server = null;
  if (s) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(() => r()));
  }
}

const HARD_LIMIT_MS = (timeoutS + 45) * 1000;
const watchdog = setTimeout(() => {
  log(`global timeout after ${HARD_LIMIT_MS / 1000}s; killing everything`);
  result.ok = false;
  result.reason = result.reason || 'global timeout';
  emit();
  // playwright kills its launched browser on process exit.
  setTimeout(() => process.exit(1), 3000).unref();
  cleanup().finally(() => process.exit(1));
}, HARD_LIMIT_MS);
watchdog.unref();

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    log(`got ${sig}`);
    result.ok = false;
    result.reason = result.reason || `killed by ${sig}`;
    emit();
    setTimeout(() => process.exit(1), 3000).unref();
    cleanup().finally(() => process.exit(1));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------

async function run() {
  const { chromium } = await import('playwright-core');
  server = await startPageServer();
  const pagePort = server.address().port;
  const pageOrigin = `http://127.0.0.1:${pagePort}`;
  log(`page server at ${pageOrigin}; stream ${opts.url}; player ${opts.player}${lowLatency ? ' (low latency)' : ''}`);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  // --insecure-tls: accept the self-signed certificates tests make (never for real use).
  const context = await browser.newContext({
    viewport: { width: 640, height: 360 },
    ignoreHTTPSErrors: opts['insecure-tls'],
  });
  const page = await context.newPage();
  const streamOrigin = new URL(opts.url).origin;
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.responseReceived', (e) => {
    if (!e.response.url.startsWith(streamOrigin)) return;
    const p = e.response.protocol || 'unknown';
    result.protocols[p] = (result.protocols[p] || 0) + 1;
  });
  page.on('console', (msg) => {
    const t = msg.type();
    if (t === 'error' || (t === 'warning' && msg.text().startsWith('[harness]'))) {
      process.stderr.write(`[browser ${t}] ${msg.text()}\n`);
    }
  });
  page.on('pageerror', (err) => process.stderr.write(`[browser pageerror] ${err.message}\n`));
  // Content steering (CS-2): each steering request and the answer, in the diagnostics.
  page.on('response', async (res) => {
    if (!res.url().includes('/steering/')) return;
    let body = '';
    try { body = (await res.text()).slice(0, 300); } catch (e) {}
    process.stderr.write(`[steering] ${res.url()} ${res.status()} ${body}\n`);
  });
  // PLAY_TRACE=1: the first 40 requests' start and end (wall-clock ms, as the page events print
  // theirs), to line a player's start up with its requests; diagnostics only.
  if (process.env.PLAY_TRACE === '1') {
    let traced = 0;
    page.on('request', (req) => {
      if (traced++ < 40) process.stderr.write(`[trace ${Date.now()}] > ${req.url()}\n`);
    });
    page.on('requestfinished', (req) => {
      if (traced < 41) process.stderr.write(`[trace ${Date.now()}] < ${req.url()}\n`);
    });
  }
  page.on('requestfailed', (req) => {
    const f = req.failure();
    process.stderr.write(`[browser requestfailed] ${req.url()} ${f ? f.errorText : ''}\n`);
  });
  page.on('response', (resp) => {
    if (resp.status() >= 400) process.stderr.write(`[browser http ${resp.status()}] ${resp.url()}\n`);
  });
  page.on('crash', () => {
    log('page crashed');
    result.reason = 'page crashed';
  });

  const q = new URLSearchParams({
    player: opts.player,
    ll: lowLatency ? '1' : '0',
    ott: opts.ott ? '1' : '0',
    url: opts.url,
  });
  t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  await page.goto(`${pageOrigin}/?${q}`, { waitUntil: 'load', timeout: timeoutS * 1000 });
  await page.waitForFunction(() => !!window.__harness, null, { timeout: 10000 });

  // Sampling loop. played_s only counts plausible playback progress (a forward jump larger
  // than the wall time allows is counted as a seek, not as playback); a stall is the longest
  // wall-clock gap between two samples where currentTime changed, once playback started.
  let prev = null; // {t, wall}
  let lastAdvanceWall = null;
  let lastAdvancePageMs = null;
  let last = null;
  let consecutiveEvalFailures = 0;
  const latencies = [];
  while (true) {
    const loopStart = performance.now();
    let s;
    try {
      s = await page.evaluate(() => window.__harness.sample());
      consecutiveEvalFailures = 0;
    } catch (e) {
      if (++consecutiveEvalFailures >= 8 || result.reason === 'page crashed') {
        result.reason = result.reason || `page.evaluate failed: ${e.message}`;
        break;
      }
      await sleep(SAMPLE_MS);
      continue;
    }
    const wall = elapsed();
    last = s;
    if (prev) {
      const dt = s.t - prev.t;
      const dw = wall - prev.wall;
      if (dt !== 0) {
        if (dt > 0 && dt <= dw * 2 + 0.5) {
          result.played_s += dt;
          if (result.startup_s === null) result.startup_s = wall;
        } else {
          result.seeks += 1;
          log(`currentTime jumped ${prev.t.toFixed(3)} -> ${s.t.toFixed(3)} in ${dw.toFixed(3)}s wall (seek)`);
        }
        if (lastAdvanceWall !== null && result.startup_s !== null) {
          result.max_stall_s = Math.max(result.max_stall_s, wall - lastAdvanceWall);
          const gapMs = s.wall_ms - lastAdvancePageMs;
          if (gapMs > 300) result.stalls.push({ end_ms: s.wall_ms, s: gapMs / 1000 });
        }
        lastAdvanceWall = wall;
        lastAdvancePageMs = s.wall_ms;
      }
    }
    prev = { t: s.t, wall };
    // P-9: latency samples once playback has settled (5 s after it started).
    if (result.startup_s !== null && wall - result.startup_s >= LATENCY_SETTLE_S &&
        typeof s.latency_s === 'number') {
      latencies.push(s.latency_s);
    }

    if (s.fatal) {
      result.reason = 'fatal player error';
      break;
    }
    if (seekTo !== null && !sought && result.played_s >= 2) {
      sought = true;
      await page.evaluate((t) => { document.querySelector('video').currentTime = t; }, seekTo);
      result.seeked_to = seekTo;
      log(`seek to ${seekTo}s`);
    }
    if (result.played_s >= seconds) break;
    if (s.ended) {
      result.reason = 'stream ended';
      break;
    }
    if (wall >= timeoutS) {
      result.reason = `timeout: played ${result.played_s.toFixed(2)}s of ${seconds}s in ${timeoutS}s`;
      break;
    }
    const spent = performance.now() - loopStart;
    await sleep(Math.max(0, SAMPLE_MS - spent));
  }
  result.wall_s = elapsed();
  result.final_t = last ? last.t : null;
  if (latencies.length) {
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    result.latency_median_s = at(0.5);
    result.latency_p90_s = at(0.9);
    result.latency_samples = sorted.length;
  }
  // A stall still in progress at the end counts too.
  if (lastAdvanceWall !== null && result.startup_s !== null && result.played_s < seconds) {
    result.max_stall_s = Math.max(result.max_stall_s, result.wall_s - lastAdvanceWall);
    if (last) {
      const gapMs = last.wall_ms - lastAdvancePageMs;
      if (gapMs > 300) result.stalls.push({ end_ms: last.wall_ms, s: gapMs / 1000 });
    }
  }

  try {
    result.errors = await page.evaluate(() => window.__harness.errors());
    result.frag_hosts = await page.evaluate(() => window.__harness.fragHosts());
    result.player_version = await page.evaluate(() => window.__harness.version());
    const events = await page.evaluate(() => window.__harness.events());
    const w0 = events.length ? events[0].wall_ms : 0;
    for (const e of events) process.stderr.write(`[page event +${((e.wall_ms - w0) / 1000).toFixed(3)}s ${e.wall_ms}] ${e.msg}\n`);
  } catch (e) {
    log(`could not fetch errors: ${e.message}`);
  }
  if (last) {
    result.latency_s = last.latency_s;
    result.latency_source = last.latency_source || null;
    result.hls_latency_s = last.hls_latency_s;
    result.level = last.level;
    result.video_size = last.videoWidth ? `${last.videoWidth}x${last.videoHeight}` : null;
  }
  if (opts.screenshot) {
    try {
      await page.screenshot({ path: opts.screenshot, timeout: 10000 });
      log(`screenshot saved to ${opts.screenshot}`);
    } catch (e) {
      log(`screenshot failed: ${e.message}`);
    }
  }

  const fatal = result.errors.some((e) => e.fatal) || (last && last.fatal);
  result.ok = !fatal && !result.reason && result.played_s >= seconds && result.wall_s <= timeoutS + SAMPLE_MS / 1000;
  if (result.ok) result.reason = null;
  else if (!result.reason) result.reason = fatal ? 'fatal player error' : 'not enough playback';
  // The reason carries the player's own words: the first fatal error (or, without one, the
  // first error of any kind), so a failed test says what the player refused.
  if (!result.ok) {
    const first = result.errors.find((e) => e.fatal) || result.errors[0];
    if (first) {
      const text = [first.source, first.type, first.details, first.message, first.url]
        .filter((x) => x !== undefined && x !== null && x !== '')
        .join(' / ');
      result.reason += ` (${first.fatal ? 'fatal' : 'first'} error: ${text})`;
    }
  }
}

let exitCode = 1;
try {
  await run();
  exitCode = result.ok ? 0 : 1;
} catch (e) {
  log(`error: ${e && e.stack ? e.stack : e}`);
  result.ok = false;
  result.reason = result.reason || `harness error: ${e && e.message ? e.message : e}`;
  exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
emit();
process.exit(exitCode);
