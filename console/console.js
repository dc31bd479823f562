// Meshwork web console (M-7): a single page over central's admin API (/central/api-v4/).
// No build step and no framework. The admin token entered on the login page is kept in
// sessionStorage (gone when the tab closes) and sent as a Bearer token; every view redraws
// from the API every REFRESH_MS. All text from the API is escaped before it is shown.
'use strict';

const API = '/central/api-v4';
const REFRESH_MS = 1000;
const TOKEN_KEY = 'meshwork.token';

let timer = null;
// Counts show() calls: a screen still awaiting when the operator moved on sees a newer value
// and stops (it would draw over the new screen, or start a player nobody sees).
let generation = 0;
const stale = (mine) => mine !== generation;
let player = null; // the player page's hls.js or dash.js instance

function esc(v) {
  if (v === null || v === undefined) return '<span class="muted">–</span>';
  return String(v).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
function badge(ok, yes, no) {
  return `<span class="badge ${ok ? 'ok' : 'bad'}">${esc(ok ? yes : no)}</span>`;
}
function table(headers, rows) {
  if (!rows.length) return '<p class="muted">None.</p>';
  return `<table><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}
function cell(v) {
  if (Array.isArray(v)) return v.length ? v.map(cell).join(', ') : esc(null);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return esc(Number.isInteger(v) ? v : v.toFixed(1));
  if (v && typeof v === 'object') return esc(JSON.stringify(v));
  return esc(v);
}

class AuthError extends Error {}

async function api(path, method = 'GET', request = undefined) {
  const token = sessionStorage.getItem(TOKEN_KEY) || '';
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  if (request !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(API + path,
    { method, headers, body: request === undefined ? undefined : JSON.stringify(request) });
  if (res.status === 401) throw new AuthError('the token was refused');
  // A 403 is not about the token (the cross-site check, for one): its message says why.
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || `${res.status} ${res.statusText}`);
  return body;
}

// The view to draw in: a detached element for a screen whose show() is no longer the
// newest (`mine` given), so a late answer draws nothing over the screen now shown.
function view(mine) {
  return mine !== undefined && stale(mine) ? document.createElement('div') : document.getElementById('view');
}

// ---- screens ------------------------------------------------------------------------------

function loginScreen(message) {
  view().innerHTML = `<h1>Log in</h1>
    <form class="login" id="login">
      <label for="token">Admin API token</label>
      <input id="token" type="password" autocomplete="current-password" required>
      <button type="submit">Log in</button>
      ${message ? `<p class="error">${esc(message)}</p>` : ''}
      <p class="muted">The token is in central's <code>--api_token_file</code>
      (<code>.quickstart/api-token</code> for the quickstart). It stays in this tab's session.</p>
    </form>`;
  document.getElementById('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
    try {
      await api('/config');
      // Logging in from the screen already named (a bookmark, a token rotated out): no
      // hashchange would come, so show it here.
      if (location.hash === '#/streamers') show(); else location.hash = '#/streamers';
    } catch (err) {
      sessionStorage.removeItem(TOKEN_KEY);
      loginScreen(err instanceof AuthError ? 'That token was refused.' : err.message);
    }
  });
}

function loadCells(s) {
  const r = (s.status && s.status.report) || {};
  return [cell(r.cpu_percent), cell(r.in_kbit), cell(r.out_kbit), cell(r.play_sessions), cell((r.streams || []).length)];
}

// CS-4: a draining streamer takes no new viewers and comes last in every steering answer, so
// its viewers leave within one steering TTL; the button toggles it.
async function streamersScreen(mine) {
  const { streamers } = await api('/streamers');
  view(mine).innerHTML = '<h1>Streamers</h1>' + table(
    ['Id', 'Role', 'Zone', 'State', 'CPU %', 'In kbit/s', 'Out kbit/s', 'Viewers', 'Streams', 'Host', 'Drain'],
    streamers.map((s) => [esc(s.id), esc(s.role), esc(s.zone),
      `<span data-node="${esc(s.id)}">${badge(s.status && s.status.online, 'online', 'offline')}</span>`,
      ...loadCells(s), esc(s.hostname),
      `${s.drain ? '<span class="badge bad">draining</span> ' : ''}` +
      `<button data-drain="${esc(s.id)}" data-to="${s.drain ? 'false' : 'true'}">${s.drain ? 'Undrain' : 'Drain'}</button>`]));
  for (const b of view(mine).querySelectorAll('button[data-drain]')) {
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await api('/streamers/' + encodeURIComponent(b.dataset.drain), 'PATCH', { drain: b.dataset.to === 'true' });
        await streamersScreen();
      } catch (e) {
        b.insertAdjacentHTML('afterend', ` <span class="error">${esc(e.message)}</span>`);
      }
    });
  }
}

async function zonesScreen(mine) {
  const [{ zones }, { streamers }] = await Promise.all([api('/zones'), api('/streamers')]);
  const byName = Object.fromEntries(zones.map((z) => [z.name, z]));
  const chain = (z) => {
    const seen = [z.name];
    for (let next = z.fallback_zone; next && !seen.includes(next); next = byName[next] && byName[next].fallback_zone) seen.push(next);
    return seen.join(' → ');
  };
  view(mine).innerHTML = '<h1>Zones</h1>' + table(['Zone', 'Networks', 'Fallback chain', 'Nodes'],
    zones.map((z) => [esc(z.name), cell(z.routes), esc(chain(z)),
      streamers.filter((s) => s.zone === z.name).map((s) => `${esc(s.id)} ${badge(s.status && s.status.online, 'online', 'offline')}`).join('<br>') || esc(null)]));
}

async function streamsScreen(mine) {
  const [{ streams }, { streamers }] = await Promise.all([api('/streams'), api('/streamers')]);
  const rows = streams.map((st) => {
    const where = [];
    const renditions = new Map();
    for (const s of streamers) {
      for (const rs of ((s.status && s.status.report && s.status.report.streams) || [])) {
        if (rs.name !== st.name) continue;
        where.push(`${esc(s.id)} (${esc(s.role)}): ${esc(rs.play_sessions)} viewers${rs.working ? '' : ' <span class="badge bad">not working</span>'}`);
        for (const r of rs.renditions || []) renditions.set(r.name, `${r.name} ${r.codecs} ${r.bitrate_kbit} kbit/s`);
      }
    }
    const inputs = (st.inputs || []).map((i) => (typeof i === 'string' ? i : i.url || JSON.stringify(i)));
    return [esc(st.name), cell(inputs), cell([...renditions.values()]), cell((st.placement && st.placement.streamers) || []),
      where.join('<br>') || esc(null),
      `<a href="#/play/${encodeURIComponent(st.name)}">play</a>`];
  });
  view(mine).innerHTML = '<h1>Streams</h1>' + table(['Stream', 'Inputs', 'Renditions', 'Placement', 'Served by', ''], rows);
}

async function ottScreen(mine) {
  const [{ groups }, key] = await Promise.all([api('/ott-groups'), api('/ott-key').catch(() => null)]);
  let html = '<h1>Reserves (OTT groups)</h1>';
  for (const g of groups) {
    html += `<h2>${esc(g.name)} ${g.state ? `<span class="badge ${g.state === 'ok' ? 'ok' : 'warn'}">${esc(g.state)}</span>` : ''}</h2>`;
    const members = g.members || [];
    const columns = [...new Set(members.flatMap((m) => Object.keys(m)))];
    html += table(columns, members.map((m) => columns.map((c) => cell(m[c]))));
    const problems = g.problems || [];
    html += problems.length ? `<p><b>Problems:</b></p><ul>${problems.map((p) => `<li>${cell(p)}</li>`).join('')}</ul>` : '<p class="muted">No problems.</p>';
  }
  if (!groups.length) html += '<p class="muted">No OTT group is configured.</p>';
  if (key) {
    html += '<h2>Viewing key</h2><dl class="facts">' +
      Object.entries(key).map(([k, v]) => `<dt>${esc(k)}</dt><dd>${cell(v)}</dd>`).join('') + '</dl>';
  }
  view(mine).innerHTML = html;
}

// A-9: active play sessions that carry a login, grouped by stream and login, and the logins
// central has revoked.
async function sessionsScreen(mine) {
  const [{ sessions }, { revoked }] = await Promise.all([api('/sessions'), api('/sessions/revoked')]);
  const groups = new Map();
  for (const s of sessions) {
    const key = `${s.stream}\u0000${s.login}`;
    if (!groups.has(key)) groups.set(key, { stream: s.stream, login: s.login, nodes: new Map(), protocols: new Set() });
    const g = groups.get(key);
    g.nodes.set(s.node, (g.nodes.get(s.node) || 0) + 1);
    g.protocols.add(s.protocol);
  }
  const rows = [...groups.values()].sort((a, b) => (a.stream + a.login).localeCompare(b.stream + b.login))
    .map((g) => [esc(g.stream), esc(g.login), esc([...g.nodes.values()].reduce((a, b) => a + b, 0)),
      [...g.nodes].map(([node, n]) => `${esc(node)}: ${esc(n)}`).join('<br>'), cell([...g.protocols])]);
  let html = '<h1>Sessions</h1>' + (rows.length
    ? table(['Stream', 'Login', 'Sessions', 'Per node', 'Protocols'], rows)
    : '<p class="muted">No active session with a login.</p>');
  html += '<h2>Revoked logins</h2>' + (revoked.length
    ? table(['Login', 'Until', 'Active'], revoked.map((r) => [esc(r.login),
      esc(r.until_unix_s == null ? 'until cleared' : new Date(r.until_unix_s * 1000).toISOString()),
      badge(r.active, 'yes', 'ended')]))
    : '<p class="muted">None.</p>');
  view(mine).innerHTML = html;
}

async function alertsScreen(mine) {
  const { alerts } = await api('/alerts');
  view(mine).innerHTML = '<h1>Alerts</h1>' + table(['Code', 'Name', 'Subject', 'Since', 'Reason'],
    alerts.map((a) => [esc(a.code), esc(a.name), esc(a.subject), esc(a.since), esc(a.reason)]));
}

// ---- player -------------------------------------------------------------------------------

function loadScript(src) {
  return new Promise((resolve, reject) => {
    if (document.querySelector(`script[src="${src}"]`)) return resolve();
    const s = document.createElement('script');
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error('cannot load ' + src));
    document.head.appendChild(s);
  });
}

function stopPlayer() {
  if (player) {
    try { player.destroy ? player.destroy() : player.reset(); } catch (e) { /* gone already */ }
    player = null;
  }
}

// The streamer whose listener `url` points at (host and port), from /streamers.
function nodeOf(url, streamers) {
  if (!url) return null;
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  return streamers.find((s) => {
    const st = s.status || {};
    const hosts = [s.hostname, ...(st.addresses || [])];
    return hosts.includes(u.hostname.replace(/^\[|\]$/g, '')) && (st.listeners || []).some((l) => l.port === port);
  }) || null;
}

async function playerScreen(stream, format, mine) {
  const { streams } = await api('/streams');
  if (stale(mine)) return null;
  const name = stream || (streams[0] && streams[0].name) || '';
  format = format || 'll';
  const options = streams.map((s) => `<option ${s.name === name ? 'selected' : ''}>${esc(s.name)}</option>`).join('');
  const formats = [['ll', 'LL-HLS'], ['hls', 'HLS'], ['dash', 'DASH']]
    .map(([f, label]) => `<option value="${f}" ${f === format ? 'selected' : ''}>${label}</option>`).join('');
  view(mine).innerHTML = `<h1>Player</h1>
    <p><select id="stream">${options}</select> <select id="format">${formats}</select></p>
    <video id="video" muted controls playsinline></video>
    <dl class="facts">
      <dt>Source</dt><dd id="source">–</dd>
      <dt>Served by</dt><dd id="serving">–</dd>
      <dt>Node state</dt><dd id="node-state">–</dd>
      <dt>Live latency</dt><dd id="latency">–</dd>
      <dt>Position</dt><dd id="position">–</dd>
      <dt>Player</dt><dd id="player-state">starting</dd>
    </dl>`;
  const go = () => { location.hash = `#/play/${encodeURIComponent(document.getElementById('stream').value)}/${document.getElementById('format').value}`; };
  document.getElementById('stream').addEventListener('change', go);
  document.getElementById('format').addEventListener('change', go);
  if (!name) { document.getElementById('player-state').textContent = 'no stream is configured'; return null; }

  const video = document.getElementById('video');
  const file = { ll: 'index.ll.m3u8', hls: 'index.m3u8', dash: 'index.mpd' }[format];
  // A stream's name may hold '/' (news/en): each part escaped, the slashes kept.
  const path = name.split('/').map(encodeURIComponent).join('/');
  const source = `${location.origin}/${path}/${file}`;
  document.getElementById('source').textContent = source + ' (through central’s redirect)';
  const state = { url: null, error: null };
  if (format === 'dash') {
    await loadScript('vendor/dash.all.min.js');
    if (stale(mine)) return null;
    player = dashjs.MediaPlayer().create();
    player.updateSettings({ streaming: { delay: { liveDelay: 4 } } });
    player.on(dashjs.MediaPlayer.events.MANIFEST_LOADED, (e) => { state.url = (e.data && e.data.url) || state.url; });
    player.on(dashjs.MediaPlayer.events.ERROR, (e) => { state.error = JSON.stringify(e.error || e).slice(0, 200); });
    player.initialize(video, source, true);
  } else {
    await loadScript('vendor/hls.min.js');
    if (stale(mine)) return null;
    player = new Hls({ lowLatencyMode: format === 'll' });
    player.on(Hls.Events.MANIFEST_LOADED, (_, data) => {
      const xhr = data.networkDetails;
      state.url = (xhr && xhr.responseURL) || data.url;
    });
    player.on(Hls.Events.LEVEL_LOADED, (_, data) => {
      const xhr = data.networkDetails;
      if (xhr && xhr.responseURL) state.url = xhr.responseURL;
    });
    player.on(Hls.Events.ERROR, (_, data) => { if (data.fatal) state.error = `${data.type}: ${data.details}`; });
    player.loadSource(source);
    player.attachMedia(video);
  }
  video.play().catch(() => {});
  // Redrawn with the rest of the page: which node serves, whether it is online, the latency.
  return async () => {
    const { streamers } = await api('/streamers');
    const node = nodeOf(state.url, streamers);
    document.getElementById('serving').textContent = node ? `${node.id} (${node.role}) ${new URL(state.url).host}` : (state.url || '–');
    const ns = document.getElementById('node-state');
    ns.innerHTML = node ? badge(node.status && node.status.online, 'online', 'offline') : '–';
    ns.dataset.node = node ? node.id : '';
    let latency = null;
    if (player && player.latency !== undefined) latency = player.latency;
    else if (player && player.getCurrentLiveLatency) latency = player.getCurrentLiveLatency();
    document.getElementById('latency').textContent = latency ? `${latency.toFixed(1)} s` : '–';
    document.getElementById('position').textContent = `${video.currentTime.toFixed(1)} s`;
    document.getElementById('player-state').textContent = state.error ? 'error: ' + state.error : (video.paused ? 'paused' : 'playing');
  };
}

// ---- routing --------------------------------------------------------------------------------

const SCREENS = {
  streamers: streamersScreen,
  zones: zonesScreen,
  streams: streamsScreen,
  ott: ottScreen,
  sessions: sessionsScreen,
  alerts: alertsScreen,
};

async function refreshAlertCount() {
  try {
    const { alerts } = await api('/alerts');
    document.getElementById('alert-count').innerHTML = alerts.length ? `<span class="badge bad">${alerts.length}</span>` : '';
  } catch (e) { /* shown by the screen itself */ }
}

async function show() {
  clearTimeout(timer);
  stopPlayer();
  const mine = ++generation;
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  const screen = parts[0] || 'streamers';
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.getAttribute('href') === '#/' + screen);
  if (screen === 'logout') { sessionStorage.removeItem(TOKEN_KEY); location.hash = '#/login'; return; }
  if (screen === 'login' || !sessionStorage.getItem(TOKEN_KEY)) { loginScreen(); return; }
  let redraw;
  try {
    if (screen === 'play') {
      redraw = await playerScreen(decodeURIComponent(parts[1] || ''), parts[2], mine);
    } else {
      const draw = SCREENS[screen];
      if (!draw) { view().innerHTML = `<p class="error">No screen “${esc(screen)}”.</p>`; return; }
      redraw = () => draw(mine);
      await redraw();
    }
    if (stale(mine)) return;
  } catch (err) {
    if (stale(mine)) return;
    if (err instanceof AuthError) { sessionStorage.removeItem(TOKEN_KEY); loginScreen('Log in again: ' + err.message); return; }
    view().innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
  const tick = async () => {
    if (stale(mine)) return;
    await refreshAlertCount();
    if (stale(mine)) return;
    try { if (redraw) await redraw(); } catch (err) {
      if (stale(mine)) return;
      if (err instanceof AuthError) { loginScreen('Log in again: ' + err.message); return; }
    }
    if (stale(mine)) return;
    timer = setTimeout(tick, REFRESH_MS);
  };
  tick();
}

window.addEventListener('hashchange', show);
show();
