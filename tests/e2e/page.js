// Browser side of the e2e harness (served by play.mjs, runs inside Chromium).
// Configuration comes from the page's query string: ?player=hls|dash|dash4|shaka|videojs&ll=0|1&url=...
// dash is dash.js 5.x, dash4 dash.js 4.x (both expose the global `dashjs`), shaka Shaka
// Player 5.x (the global `shaka`), videojs video.js 8 with its VHS engine (the global `videojs`;
// HLS or DASH by the URL).
// Everything the Node side needs is exposed on window.__harness.
(function () {
  'use strict';
  var params = new URLSearchParams(location.search);
  var player = params.get('player') || 'hls';
  var lowLatency = params.get('ll') === '1';
  // ott=1: the load timeouts the OTT operator guide recommends (O-21): about one target
  // duration, one retry, so a dead or stale node is left for a backup variant in seconds.
  var ott = params.get('ott') === '1';
  var url = params.get('url');
  var video = document.getElementById('video');
  var MAX_ERRORS = 100;
  // dash.js error codes after which it keeps playing (it retries, skips or falls back); the
  // same numbers in 4.x and 5.x:
  // 16 time sync failed (falls back to the local clock), 17/27 fragment download failed,
  // 18 null fragment request, 21 buffer remove failed, 25 manifest download failed (a live
  // MPD's refresh: it plays on from the MPD it has; a first load that fails plays nothing,
  // which the harness sees as no playback), 33 timed-text parse error.
  // Every other ERROR code (manifest load/parse, init segment, append, capabilities, ...)
  // is treated as fatal.
  var DASH_NONFATAL = [16, 17, 18, 21, 25, 27, 33];

  var state = {
    player: player,
    errors: [],
    fatal: false,
    events: [],
    frag_hosts: [],
    hls: null,
    dash: null,
    shaka: null,
    version: null,
  };

  function short(v) {
    if (v === undefined || v === null) return v;
    var s = typeof v === 'string' ? v : String(v);
    return s.length > 300 ? s.slice(0, 300) + '...' : s;
  }

  function recordError(e) {
    if (e.fatal) state.fatal = true;
    e.wall_ms = Date.now();
    if (state.errors.length < MAX_ERRORS) state.errors.push(e);
    console.warn('[harness] player error: ' + JSON.stringify(e));
  }

  function note(msg) {
    if (state.events.length < 200) state.events.push({ wall_ms: Date.now(), msg: msg });
  }

  function tryPlay(why) {
    var p = video.play();
    if (p && p.catch) {
      p.catch(function (err) {
        recordError({ source: 'video.play', type: 'play', details: short(err && err.name) + ': ' + short(err && err.message), fatal: false, why: why });
      });
    }
  }

  video.addEventListener('error', function () {
    var me = video.error;
    recordError({
      source: 'video',
      type: 'mediaError',
      details: me ? 'code ' + me.code + ': ' + short(me.message) : 'unknown',
      fatal: true,
    });
  });
  ['playing', 'waiting', 'stalled', 'seeking', 'seeked', 'ended'].forEach(function (name) {
    video.addEventListener(name, function () {
      var pd = state.hls && state.hls.playingDate;
      var lag = pd && !isNaN(pd.getTime()) ? ' pdt-lag=' + ((Date.now() - pd.getTime()) / 1000).toFixed(3) : '';
      var bi = '';
      if (state.shaka && state.shaka.getBufferedInfo && (name === 'waiting' || name === 'seeking')) {
        var b = state.shaka.getBufferedInfo();
        var fmt = function (rs) { return rs.map(function (r) { return r.start.toFixed(3) + '-' + r.end.toFixed(3); }).join(','); };
        bi = ' A[' + fmt(b.audio) + '] V[' + fmt(b.video) + ']';
      }
      note('video:' + name + '@' + video.currentTime.toFixed(3) + lag + bi);
      // A seek that does not complete: what the element and dash.js hold, 2 s and 6 s on.
      if (name === 'seeking' && state.dash) {
        var seekedAt = video.currentTime;
        [2000, 6000].forEach(function (ms) {
          setTimeout(function () {
            if (!video.seeking) return;
            var ranges = [];
            for (var i = 0; i < video.buffered.length; i++) {
              ranges.push(video.buffered.start(i).toFixed(3) + '-' + video.buffered.end(i).toFixed(3));
            }
            var level = function (type) {
              try { return state.dash.getBufferLength(type).toFixed(3); } catch (e) { return '?'; }
            };
            note('video:still-seeking@' + seekedAt.toFixed(3) + ' after ' + ms + 'ms readyState=' +
                 video.readyState + ' buffered=[' + ranges.join(',') + '] dash buffer video=' +
                 level('video') + ' audio=' + level('audio'));
          }, ms);
        });
      }
    });
  });

  function startHls() {
    if (typeof Hls === 'undefined') {
      recordError({ source: 'harness', type: 'setup', details: 'hls.js not loaded', fatal: true });
      return;
    }
    if (!Hls.isSupported()) {
      recordError({ source: 'harness', type: 'setup', details: 'Hls.isSupported() is false (no MSE?)', fatal: true });
      return;
    }
    var fast = {
      default: {
        maxTimeToFirstByteMs: 2000,
        maxLoadTimeMs: 4000,
        timeoutRetry: { maxNumRetry: 0, retryDelayMs: 0, maxRetryDelayMs: 0 },
        errorRetry: { maxNumRetry: 1, retryDelayMs: 250, maxRetryDelayMs: 500 },
      },
    };
    var config = {
      lowLatencyMode: lowLatency,
      enableWorker: true,
      backBufferLength: 30,
      // Retries are kept small so a broken origin shows up as a fatal error quickly.
      manifestLoadPolicy: {
        default: {
          maxTimeToFirstByteMs: Infinity,
          maxLoadTimeMs: 10000,
          timeoutRetry: { maxNumRetry: 2, retryDelayMs: 0, maxRetryDelayMs: 0 },
          errorRetry: { maxNumRetry: 1, retryDelayMs: 1000, maxRetryDelayMs: 2000 },
        },
      },
    };
    if (ott) {
      config.playlistLoadPolicy = fast;
      config.fragLoadPolicy = fast;
    }
    var hls = new Hls(config);
    state.hls = hls;
    state.version = Hls.version || null;
    hls.on(Hls.Events.FRAG_LOADED, function (ev, data) { noteFragHost(data.frag.url); });
    hls.on(Hls.Events.ERROR, function (ev, data) {
      var e = {
        source: 'hls.js',
        type: data.type,
        details: data.details,
        fatal: !!data.fatal,
      };
      if (data.response && data.response.code !== undefined) e.http_code = data.response.code;
      if (data.frag && data.frag.url) e.url = short(data.frag.url);
      else if (data.url) e.url = short(data.url);
      else if (data.context && data.context.url) e.url = short(data.context.url);
      if (data.reason) e.reason = short(data.reason);
      if (data.error && data.error.message) e.message = short(data.error.message);
      recordError(e);
    });
    hls.on(Hls.Events.MANIFEST_PARSED, function (ev, data) {
      note('hls:manifestParsed levels=' + (data.levels ? data.levels.length : '?'));
      tryPlay('manifestParsed');
    });
    hls.on(Hls.Events.LEVEL_SWITCHED, function (ev, data) { note('hls:levelSwitched ' + data.level); });
    if (lowLatency) {
      // P-9 diagnostics: where hls.js puts the start and how its first parts arrive.
      var levelNotes = 0;
      var bufferedNotes = 0;
      hls.on(Hls.Events.LEVEL_LOADED, function (ev, data) {
        if (levelNotes++ >= 4) return;
        var d = data.details;
        note('hls:levelLoaded edge=' + d.edge.toFixed(3) + ' lastPart=' + d.lastPartSn + '.' + d.lastPartIndex +
             ' liveSync=' + (hls.liveSyncPosition === null ? '-' : hls.liveSyncPosition.toFixed(3)) +
             ' target=' + (hls.targetLatency === null ? '-' : hls.targetLatency.toFixed(3)) +
             ' startPosition=' + hls.startPosition);
      });
      hls.on(Hls.Events.FRAG_BUFFERED, function (ev, data) {
        if (bufferedNotes++ >= 12) return;
        var f = data.frag;
        var part = data.part;
        note('hls:buffered sn=' + f.sn + (part ? '.' + part.index + ' start=' + part.start.toFixed(3) : ' start=' + f.start.toFixed(3)) +
             ' currentTime=' + video.currentTime.toFixed(3));
      });
    }
    hls.attachMedia(video);
    hls.loadSource(url);
  }

  // The hosts media segments came from, in order, each change once (at most 50).
  function noteFragHost(url) {
    try {
      var host = new URL(url, location.href).host;
      var hosts = state.frag_hosts;
      if (hosts[hosts.length - 1] !== host && hosts.length < 50) hosts.push(host);
    } catch (e) {}
  }

  function startDash() {
    if (typeof dashjs === 'undefined') {
      recordError({ source: 'harness', type: 'setup', details: 'dash.js not loaded', fatal: true });
      return;
    }
    var p = dashjs.MediaPlayer().create();
    state.dash = p;
    state.version = typeof p.getVersion === 'function' ? p.getVersion() : dashjs.Version || null;
    note('dash.js ' + state.version);
    var settings = {
      debug: { logLevel: dashjs.Debug.LOG_LEVEL_WARNING },
      streaming: {
        retryAttempts: { MPD: 2 },
        retryIntervals: { MPD: 500 },
        // Used only when the MPD has no UTCTiming element: ask the page server (same
        // machine clock) instead of dash.js's default time.akamai.com.
        utcSynchronization: {
          defaultTimingSource: { scheme: 'urn:mpeg:dash:utc:http-xsdate:2014', value: location.origin + '/time' },
        },
      },
    };
    if (lowLatency) {
      settings.streaming.delay = { liveDelay: 2 };
      settings.streaming.liveCatchup = { enabled: true, maxDrift: 3, playbackRate: { min: -0.3, max: 0.3 } };
    }
    p.updateSettings(settings);
    var ev = dashjs.MediaPlayer.events;
    p.on(ev.ERROR, function (e) {
      var err = e.error || {};
      var code = typeof err.code === 'number' ? err.code : null;
      recordError({
        source: 'dash.js',
        type: 'error',
        code: code,
        details: (code !== null ? 'code ' + code + ': ' : '') + short(err.message || String(err)),
        fatal: code === null || DASH_NONFATAL.indexOf(code) < 0,
      });
    });
    p.on(ev.PLAYBACK_ERROR, function (e) {
      recordError({ source: 'dash.js', type: 'playbackError', details: short(e.error && (e.error.message || e.error.code)), fatal: true });
    });
    p.on(ev.PLAYBACK_NOT_ALLOWED, function () {
      recordError({ source: 'dash.js', type: 'playbackNotAllowed', details: 'autoplay refused', fatal: false });
      tryPlay('playbackNotAllowed');
    });
    p.on(ev.STREAM_INITIALIZED, function () { note('dash:streamInitialized'); });
    p.on(ev.FRAGMENT_LOADING_COMPLETED, function (e) {
      if (e.request && e.request.type === 'MediaSegment') noteFragHost(e.request.url);
    });
    p.on(ev.QUALITY_CHANGE_RENDERED, function (e) {
      var q = e.newRepresentation ? e.newRepresentation.id : e.newQuality;  // 5.x : 4.x
      note('dash:quality ' + e.mediaType + '=' + q);
    });
    p.initialize(video, url, true);
  }

  function startVideojs() {
    if (typeof videojs === 'undefined') {
      recordError({ source: 'harness', type: 'setup', details: 'video.js not loaded', fatal: true });
      return;
    }
    state.version = videojs.VERSION || null;
    note('video.js ' + state.version);
    // Media segments as VHS fetched them (playlists, manifests and steering left out).
    videojs.Vhs.xhr.onResponse(function (request, error, response) {
      var uri = (response && response.url) || (request && request.uri) || '';
      if (/\.(ts|m4s)(\?|$)/.test(uri)) noteFragHost(uri);
    });
    var p = videojs(video, { muted: true, autoplay: true, html5: { vhs: { overrideNative: true } } });
    state.videojs = p;
    p.on('error', function () {
      var e = p.error() || {};
      recordError({ source: 'video.js', type: 'error', code: e.code, details: short(e.message), fatal: true });
    });
    p.on('loadedmetadata', function () { note('videojs:loadedmetadata'); tryPlay('loadedmetadata'); });
    p.src({ src: url, type: /\.mpd(\?|$)/.test(url) ? 'application/dash+xml' : 'application/x-mpegURL' });
  }

  function startShaka() {
    if (typeof shaka === 'undefined') {
      recordError({ source: 'harness', type: 'setup', details: 'Shaka Player not loaded', fatal: true });
      return;
    }
    shaka.polyfill.installAll();
    if (!shaka.Player.isBrowserSupported()) {
      recordError({ source: 'harness', type: 'setup', details: 'Shaka: browser not supported', fatal: true });
      return;
    }
    var p = new shaka.Player();
    state.shaka = p;
    state.version = shaka.Player.version || null;
    note('shaka ' + state.version);
    p.configure({
      streaming: {
        lowLatencyMode: lowLatency,
        retryParameters: { maxAttempts: 3, baseDelay: 500, timeout: 10000 },
      },
    });
    // Shaka's errors carry a severity: 1 RECOVERABLE (it retries), 2 CRITICAL (playback ends).
    p.addEventListener('error', function (ev) {
      var e = ev.detail || {};
      recordError({
        source: 'shaka',
        type: 'error',
        code: typeof e.code === 'number' ? e.code : null,
        details: 'code ' + e.code + ', category ' + e.category + ': ' + short(JSON.stringify(e.data || [])),
        fatal: e.severity !== 1,
      });
    });
    p.addEventListener('variantchanged', function () { note('shaka:variantChanged'); });
    p.attach(video)
      .then(function () {
        var net = p.getNetworkingEngine();
        if (net) {
          net.registerResponseFilter(function (type, response) {
            if (type === shaka.net.NetworkingEngine.RequestType.SEGMENT) noteFragHost(response.uri);
          });
        }
        return p.load(url);
      })
      .then(function () {
        note('shaka:loaded');
        tryPlay('loaded');
      })
      .catch(function (e) {
        // A shaka.util.Error has a code; anything else thrown (a script error) its message.
        var what = e && e.code !== undefined ? 'code ' + e.code : String(e && (e.message || e));
        recordError({ source: 'shaka', type: 'load', code: e && e.code, details: 'load failed: ' + what, fatal: true });
      });
  }

  function num(v) {
    return typeof v === 'number' && isFinite(v) ? v : null;
  }

  // Returns a snapshot of the playback state; called by Node every 250 ms.
  function sample() {
    var s = {
      wall_ms: Date.now(),
      t: video.currentTime,
      paused: video.paused,
      ended: video.ended,
      readyState: video.readyState,
      videoWidth: video.videoWidth,
      videoHeight: video.videoHeight,
      playbackRate: video.playbackRate,
      fatal: state.fatal,
      nErrors: state.errors.length,
      latency_s: null,
      hls_latency_s: null,
      level: null,
    };
    try {
      if (state.hls) {
        var h = state.hls;
        s.hls_latency_s = num(h.latency) || null; // 0 means "not known yet" in hls.js
        var pd = h.playingDate;
        if (pd && !isNaN(pd.getTime())) {
          s.latency_s = (Date.now() - pd.getTime()) / 1000;
          s.latency_source = 'playingDate';
        } else if (s.hls_latency_s !== null) {
          s.latency_s = s.hls_latency_s;
          s.latency_source = 'hls.latency';
        }
        var idx = h.currentLevel;
        var lv = h.levels && idx >= 0 ? h.levels[idx] : null;
        s.level = { index: idx, height: (lv && lv.height) || video.videoHeight || null, bitrate: lv ? lv.bitrate || null : null, count: h.levels ? h.levels.length : 0 };
      } else if (state.shaka) {
        var sp = state.shaka;
        var stats = sp.getStats ? sp.getStats() : {};
        // P-9: by program date-time (the playhead's wall-clock time) when the stream has one.
        var when = sp.getPlayheadTimeAsDate ? sp.getPlayheadTimeAsDate() : null;
        if (when && !isNaN(when.getTime()) && when.getTime() > 0) {
          s.latency_s = (Date.now() - when.getTime()) / 1000;
          s.latency_source = 'playheadDate';
        } else {
          s.latency_s = num(stats.liveLatency);
          if (s.latency_s !== null) s.latency_source = 'shaka.liveLatency';
        }
        var tracks = (sp.getVariantTracks && sp.getVariantTracks()) || [];
        var active = tracks.filter(function (t) { return t.active; })[0] || null;
        s.level = { index: active ? tracks.indexOf(active) : null, height: (active && active.height) || video.videoHeight || null, bitrate: active ? active.bandwidth || null : null, count: tracks.length };
      } else if (state.dash) {
        var d = state.dash;
        s.latency_s = num(d.getCurrentLiveLatency());
        if (s.latency_s !== null) s.latency_source = 'getCurrentLiveLatency';
        var q = null, info = null, list = [];
        try {
          if (typeof d.getCurrentRepresentationForType === 'function') {
            // dash.js 5: Representation objects.
            list = d.getRepresentationsByType('video') || [];
            var rep = d.getCurrentRepresentationForType('video');
            if (rep) {
              q = typeof rep.absoluteIndex === 'number' ? rep.absoluteIndex : list.indexOf(rep);
              info = { height: rep.height, bitrate: rep.bandwidth };
            }
          } else {
            // dash.js 4: quality indices and bitrate infos.
            q = d.getQualityFor('video');
            list = d.getBitrateInfoListFor('video') || [];
            info = list[q] || null;
          }
        } catch (e) { /* not ready yet */ }
        s.level = { index: q, height: (info && info.height) || video.videoHeight || null, bitrate: info ? info.bitrate || null : null, count: list.length };
      }
    } catch (e) {
      s.sample_error = String(e);
    }
    return s;
  }

  window.__harness = {
    state: state,
    sample: sample,
    errors: function () { return state.errors.slice(); },
    fragHosts: function () { return state.frag_hosts.slice(); },
    events: function () { return state.events.slice(); },
    version: function () { return state.version || null; },
  };

  if (!url) {
    recordError({ source: 'harness', type: 'setup', details: 'no url given', fatal: true });
  } else if (player === 'dash' || player === 'dash4') {
    startDash();
  } else if (player === 'shaka') {
    startShaka();
  } else if (player === 'videojs') {
    startVideojs();
  } else {
    startHls();
  }
})();
