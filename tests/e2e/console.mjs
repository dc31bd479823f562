#!/usr/bin/env node
// M-7: drives central's web console in headless Chromium the way an operator would: logs in
// with the admin token, opens every screen and checks what it shows, plays a stream on the
// player page, then kills the node that serves it (SIGKILL, by the pid given for it) and
// measures how long the page takes to show that node offline.
//
//   node tests/e2e/console.mjs --central http://HOST:PORT --token T --stream NAME
//        --nodes id=pid,id=pid --zone NAME [--group OTT_GROUP] [--play-seconds N]
//        [--screenshots DIR] [--login NAME] [--revoked NAME]
//
// With --login, the Sessions screen must show that login's sessions; with --revoked, that login
// among the revoked ones.
// With --group, the Reserves screen must show that group with every node as a member and a
// problem, and the alerts screen alerts 70 (no backup) and 78 (member problem) for it.
//
// Prints exactly one `RESULT {json}` line on stdout: ok, the checks that failed, console
// errors, the serving node, played seconds and offline_after_s. Exit status 0 when ok.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const log = (...a) => process.stderr.write('[console] ' + a.join(' ') + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { values: opts } = parseArgs({
  options: {
    central: { type: 'string' },
    token: { type: 'string' },
    stream: { type: 'string' },
    nodes: { type: 'string', default: '' },
    zone: { type: 'string', default: '' },
    group: { type: 'string', default: '' },
    'play-seconds': { type: 'string', default: '10' },
    screenshots: { type: 'string', default: '' },
    login: { type: 'string', default: '' },
    revoked: { type: 'string', default: '' },
  },
});
const result = { ok: false, failures: [], console_errors: [], screens: {} };
function fail(what) {
  log('FAIL ' + what);
  result.failures.push(what);
}
function finish(code) {
  result.ok = result.failures.length === 0 && result.console_errors.length === 0;
  process.stdout.write('RESULT ' + JSON.stringify(result) + '\n');
  process.exit(code ?? (result.ok ? 0 : 1));
}
if (!opts.central || !opts.token || !opts.stream) {
  fail('usage: --central, --token and --stream are required');
  finish(1);
}
const pids = Object.fromEntries(
  opts.nodes.split(',').filter(Boolean).map((p) => p.split('=')).map(([id, pid]) => [id, Number(pid)]),
);

async function shot(page, name) {
  if (!opts.screenshots) return;
  fs.mkdirSync(opts.screenshots, { recursive: true });
  await page.screenshot({ path: path.join(opts.screenshots, name + '.png'), fullPage: true });
}

async function text(page) {
  return page.locator('#view').innerText();
}

// Waits until the view's text satisfies `test` (the screens redraw every second).
async function waitView(page, test, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < end) {
    last = await text(page).catch(() => '');
    if (test(last)) return last;
    await sleep(200);
  }
  return last;
}

async function run() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--autoplay-policy=no-user-gesture-required'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    // Once the serving node is killed, the player's failed fetches to it are expected: they are
    // left out as they come (filtering once after the kill missed those logged later: CI).
    let nodeKilled = false;
    const isNetError = (text) => /net::|Failed to load resource/.test(text);
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (nodeKilled && isNetError(m.text())) return;
      result.console_errors.push(m.text().slice(0, 300));
    });
    page.on('pageerror', (e) => result.console_errors.push('page error: ' + String(e).slice(0, 300)));

    // `/` leads to the console, which asks for the token first.
    await page.goto(opts.central + '/');
    await page.waitForSelector('#token', { timeout: 10000 });
    if (!page.url().includes('/console/')) fail('/ did not lead to /console/: ' + page.url());
    await shot(page, 'login');
    await page.fill('#token', 'not-the-token');
    await page.click('button[type=submit]');
    const refused = await waitView(page, (t) => t.includes('refused'));
    if (!refused.includes('refused')) fail('a wrong token was not refused on the login page');
    // The refused token's 401 shows in the console as a failed fetch: not an error of ours.
    result.console_errors = result.console_errors.filter((e) => !e.includes('401'));
    // A bookmarked screen asks for the token, then shows itself (no hashchange comes: the
    // hash is already that screen's).
    await page.goto(`${opts.central}/console/#/streamers`);
    await page.waitForSelector('#token', { timeout: 10000 });
    await page.fill('#token', opts.token);
    await page.click('button[type=submit]');
    const landed = await waitView(page, (t) => t.startsWith('Streamers'));
    if (!landed.startsWith('Streamers')) {
      fail('logging in on a bookmarked screen left the login form up: ' + landed.slice(0, 100));
    }

    const screens = {
      streamers: (t) => t.startsWith('Streamers') && Object.keys(pids).every((id) => t.includes(id)) &&
        t.includes('online'),
      zones: (t) => t.startsWith('Zones') && (!opts.zone || t.includes(opts.zone)) &&
        Object.keys(pids).every((id) => t.includes(id)),
      streams: (t) => t.startsWith('Streams') && t.includes(opts.stream) && t.includes('viewers'),
      ott: (t) => t.startsWith('Reserves') && (!opts.group || (t.includes(opts.group) &&
        Object.keys(pids).every((id) => t.includes(id)) && t.includes('Problems:') &&
        t.includes('Viewing key'))),
      sessions: (t) => t.startsWith('Sessions') && (!opts.login || t.includes(opts.login)) &&
        // A revocation without an end holds until cleared, and says so.
        (!opts.revoked || (t.split('Revoked logins')[1].includes(opts.revoked) &&
          t.split('Revoked logins')[1].includes('until cleared'))),
      alerts: (t) => t.startsWith('Alerts') && (!opts.group ||
        ['reserve-ott-no-backup', 'reserve-ott-member-problem'].every((n) => t.includes(n))),
    };
    for (const [name, test] of Object.entries(screens)) {
      await page.goto(`${opts.central}/console/#/${name}`);
      const shown = await waitView(page, test);
      result.screens[name] = shown.slice(0, 4000);
      if (!test(shown)) fail(`screen ${name} does not show what it should: ${shown.slice(0, 200)}`);
      await shot(page, name);
    }

    // A screen left while it is still loading draws nothing over the next one and starts no
    // player: the player page, left at once for Zones.
    {
      let media = 0;
      const count = (r) => { if (/\.(m3u8|mpd|m4s|ts)(\?|$)/.test(r.url())) media++; };
      await page.goto(`${opts.central}/console/#/play/${encodeURIComponent(opts.stream)}/ll`);
      await page.evaluate(() => { location.hash = '#/zones'; });
      await waitView(page, (t) => t.startsWith('Zones'));
      await sleep(1000);
      page.on('request', count);
      await sleep(2000);
      page.off('request', count);
      const shown = await text(page);
      if (!shown.startsWith('Zones')) fail('a player page left at once drew over Zones: ' + shown.slice(0, 100));
      if (media > 0) fail(`a player page left at once went on loading media (${media} requests)`);
    }

    // CS-4: drain the first streamer from its screen, see it draining, and undo it.
    {
      await page.goto(`${opts.central}/console/#/streamers`);
      const id = Object.keys(pids)[0];
      await page.click(`button[data-drain="${id}"][data-to="true"]`, { timeout: 10000 });
      const drained = await waitView(page, (t) => t.includes('draining') && t.includes('Undrain'));
      if (!drained.includes('draining')) fail(`streamer ${id} was not shown draining after Drain`);
      await shot(page, 'streamer-draining');
      await page.click(`button[data-drain="${id}"][data-to="false"]`, { timeout: 10000 });
      const undone = await waitView(page, (t) => !t.includes('draining'));
      if (undone.includes('draining')) fail(`streamer ${id} still draining after Undrain`);
      result.drained = id;
    }

    // The player: plays through central's redirect and names the node serving it.
    await page.goto(`${opts.central}/console/#/play/${encodeURIComponent(opts.stream)}/ll`);
    const want = Number(opts['play-seconds']);
    const start = Date.now();
    let serving = '';
    let position = 0;
    let first = null;
    while (Date.now() - start < (want + 30) * 1000) {
      position = parseFloat(await page.locator('#position').innerText().catch(() => '0')) || 0;
      serving = await page.locator('#node-state').getAttribute('data-node').catch(() => '');
      if (first === null && position > 0) first = position;
      if (first !== null && position - first >= want && serving) break;
      await sleep(250);
    }
    result.played_s = first === null ? 0 : position - first;
    result.serving = serving;
    result.latency = await page.locator('#latency').innerText().catch(() => '');
    await shot(page, 'player');
    if (result.played_s < want) fail(`the player advanced ${result.played_s} s, not ${want} s`);
    if (!serving) fail('the player page does not name the serving node');
    const state = await page.locator('#node-state').innerText();
    if (!state.includes('online')) fail('the serving node is not shown online while it plays: ' + state);

    // Kill that node: the page must say so within 5 s.
    if (serving && pids[serving]) {
      const before = result.console_errors.length;
      nodeKilled = true;
      process.kill(pids[serving], 'SIGKILL');
      const killed = Date.now();
      let shown = '';
      while (Date.now() - killed < 15000) {
        shown = await page.locator('#node-state').innerText().catch(() => '');
        if (shown.includes('offline')) break;
        await sleep(100);
      }
      result.offline_after_s = (Date.now() - killed) / 1000;
      await shot(page, 'player-node-killed');
      if (!shown.includes('offline')) fail('the killed node was never shown offline');
      else if (result.offline_after_s > 5) fail(`the killed node was shown offline after ${result.offline_after_s} s`);
      // Playback errors after the kill are the point of this step, not a console fault.
      result.console_errors = result.console_errors.filter(
        (e, i) => i < before || !isNetError(e));
    } else if (serving) {
      fail(`no pid was given for the serving node ${serving}`);
    }
  } finally {
    await browser.close();
  }
}

run().then(() => finish(), (e) => {
  fail('exception: ' + (e && e.stack ? e.stack : e));
  finish(1);
});
