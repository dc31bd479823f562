#!/usr/bin/env python3
"""Helpers of the R-8 soak (bench/soak/run.sh); Python 3 standard library only.

  soak.py sample  --out CSV --start T0 (--until T | --once) [--interval S] --pid NAME=PID …
      Every S seconds from T0 (and once more at T), one row per process: VmRSS, open file
      descriptors (all; how many are sockets; how many are archived files under --dvr-root),
      threads, CPU seconds. A process that is gone is written with alive=0. SIGTERM ends it
      after one last sample.
  soak.py archive --out TSV --until T --every S --stream NAME --since T_REC
                  --node NAME=HOST:PORT … --central HOST:PORT --redirect STREAM …
      Periodic archive reads of one recorded stream on each node (VOD playlists of both
      protocols, their first and last segments, a Range read, the DASH MPD) and central's
      redirects of each stream, one TSV row per request.
  soak.py summary --results DIR
      The report: memory and descriptors per process, cuts, viewers' and archive readers'
      errors (apart those the cuts explain), error lines and crash reports in the logs.
      Exit status 1 if central or a streamer died.
"""
import argparse
import csv
import http.client
import json
import os
import re
import signal
import statistics
import sys
import time
import urllib.parse
from collections import Counter, defaultdict
from datetime import datetime, timezone

# --- sample -----------------------------------------------------------------------------------

FIELDS = ["epoch", "elapsed_s", "process", "pid", "alive", "rss_kib", "fds", "socket_fds",
          "archive_fds", "threads", "cpu_s", "proxy_bytes"]
# What an edge has fetched for archive requests of streams it relays: its ArchiveProxy keeps
# those answers in memory (an archived segment for a day, up to 256 MiB by design,
# streamer/relay/archive_proxy.h), so they show in its RSS; the counter bounds that share.
PROXY_METRIC = "meshwork_edge_archive_upstream_bytes_total"


def proxy_bytes(hostport):
    """The edge archive proxy's fetched bytes from /metrics ("" when unreadable)."""
    status, _, body = get(hostport, "/metrics", timeout=5)
    if status != 200:
        return ""
    total = 0.0
    for line in body.decode("utf-8", "replace").splitlines():
        if line.startswith(PROXY_METRIC):
            try:
                total += float(line.rsplit(None, 1)[1])
            except (IndexError, ValueError):
                pass
    return f"{total:.0f}"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def read_process(pid, dvr_root):
    """(rss_kib, fds, socket_fds, archive_fds, threads, cpu_s), or None when the process is
    gone. archive_fds: files under dvr_root (the streamer keeps up to 256 archived files open
    between requests, streamer/delivery/open_files.h)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        if re.search(r"^State:\s+Z", status, re.M):
            return None
        rss = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1))
        threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
        fds = sockets = archived = 0
        for name in os.listdir(f"/proc/{pid}/fd"):
            fds += 1
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue  # closed between the listing and the readlink
            if target.startswith("socket:"):
                sockets += 1
            elif dvr_root and target.startswith(dvr_root):
                archived += 1
        with open(f"/proc/{pid}/stat") as f:
            # Fields after the command name (which may hold spaces) — utime and stime are the
            # 14th and 15th of the whole line.
            rest = f.read().rsplit(")", 1)[1].split()
        cpu = (int(rest[11]) + int(rest[12])) / CLOCK_TICKS
        return rss, fds, sockets, archived, threads, cpu
    except (OSError, AttributeError, IndexError, ValueError):
        return None


def cmd_sample(a):
    procs = [p.split("=", 1) for p in a.pid]
    metrics = dict(m.split("=", 1) for m in a.metrics)
    dvr_root = os.path.realpath(a.dvr_root) + "/" if a.dvr_root else ""
    new = not os.path.exists(a.out) or os.path.getsize(a.out) == 0
    out = open(a.out, "a", newline="")
    w = csv.writer(out)
    if new:
        w.writerow(FIELDS)

    def take():
        now = time.time()
        for name, pid in procs:
            r = read_process(pid, dvr_root)
            if r is None:
                w.writerow([f"{now:.3f}", f"{now - a.start:.1f}", name, pid, 0] + [""] * 7)
            else:
                w.writerow([f"{now:.3f}", f"{now - a.start:.1f}", name, pid, 1, *r[:5],
                            f"{r[5]:.2f}", proxy_bytes(metrics[name]) if name in metrics else ""])
        out.flush()

    if a.once:
        take()
        return 0

    def on_term(*_):
        take()
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)
    k = 0
    while True:
        due = min(a.start + k * a.interval, a.until)
        time.sleep(max(0.0, due - time.time()))
        take()
        if due >= a.until:
            return 0
        k += 1


# --- archive ------------------------------------------------------------------------------------

def get(hostport, path, headers=None, timeout=15):
    """(status, bytes, body) of one GET; status 0 for a failed connection or a timeout."""
    host, port = hostport.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        res = conn.getresponse()
        body = res.read()
        return res.status, len(body), body
    except (OSError, http.client.HTTPException):
        return 0, 0, b""
    finally:
        conn.close()


def media_uris(playlist_text):
    """The init (EXT-X-MAP) and the media segment URIs of a playlist, in order."""
    init, segments = None, []
    for line in playlist_text.splitlines():
        line = line.strip()
        if line.startswith("#EXT-X-MAP:"):
            m = re.search(r'URI="([^"]+)"', line)
            if m:
                init = m.group(1)
        elif line and not line.startswith("#"):
            segments.append(line)
    return init, segments


def cmd_archive(a):
    nodes = [n.split("=", 1) for n in a.node]
    out = open(a.out, "a")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    def log(node, kind, status, size, period, path):
        out.write(f"{time.time():.3f}\t{node}\t{kind}\t{status}\t{size}\t{period[0]}\t"
                  f"{period[1]}\t{path}\n")
        out.flush()

    while time.time() < a.until:
        tick = time.time()
        now = int(tick)
        # A period inside what has been recorded: at most the last 70 s, ending 8 s ago.
        end = now - 8
        start = max(a.since + 4, now - 70)
        if end - start >= 10:
            period = (start, end)
            name = f"{start}-{end - start}"
            for node, hostport in nodes:
                base = f"/{a.stream}/v1/"
                # HLS-TS VOD playlist, its first and last segments, a Range read of the last.
                path = f"/{a.stream}/v1/index-{name}.m3u8"
                status, size, body = get(hostport, path)
                log(node, "archive_ts_playlist", status, size, period, path)
                if status == 200:
                    _, segs = media_uris(body.decode("utf-8", "replace"))
                    for i, seg in enumerate(segs[:1] + segs[-1:]):
                        p = urllib.parse.urljoin(base, seg)
                        status, size, _ = get(hostport, p)
                        log(node, "archive_ts_segment", status, size, period, p)
                    if segs:
                        p = urllib.parse.urljoin(base, segs[-1])
                        status, size, _ = get(hostport, p, {"Range": "bytes=0-1023"})
                        log(node, "archive_ts_range", status, size, period, p)
                # CMAF VOD playlist, its init and last segment.
                path = f"/{a.stream}/v1/index-{name}.ll.m3u8"
                status, size, body = get(hostport, path)
                log(node, "archive_cmaf_playlist", status, size, period, path)
                if status == 200:
                    init, segs = media_uris(body.decode("utf-8", "replace"))
                    for p in ([init] if init else []) + segs[-1:]:
                        p = urllib.parse.urljoin(base, p)
                        status, size, _ = get(hostport, p)
                        log(node, "archive_cmaf_object", status, size, period, p)
                path = f"/{a.stream}/archive-{name}.mpd"
                status, size, _ = get(hostport, path)
                log(node, "archive_mpd", status, size, period, path)
        for stream in a.redirect:  # central's 302 to a node (not followed)
            path = f"/{stream}/index.ll.m3u8"
            status, size, _ = get(a.central, path)
            log("central", f"redirect_{stream}", status, size, (now, now), path)
        time.sleep(max(0.0, tick + a.every - time.time()))
    return 0


# --- summary ------------------------------------------------------------------------------------

NODES = ["central", "ingest-1", "ingest-2", "edge-1"]
# Which nodes a cut of a stream touches (central routes both).
CUT_TOUCHES = {"s1": {"ingest-1", "edge-1", "central"}, "s2": {"ingest-2", "central"}}
CRASH = re.compile(
    r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|"
    r"runtime error:|terminate called|Segmentation fault|core dumped|\*\*\* SIG[A-Z]+|"
    r"Check failed|Assertion .* failed|stack-buffer|heap-use-after-free|double free")
LEVEL = re.compile(r"\blevel=(\w+)\b")
EVENT = re.compile(r"\bevent=(\S+)")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z")
GLOG = re.compile(r"^[EF]\d{4} \d\d:\d\d:\d\d")  # gRPC / absl error and fatal lines


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def mib(kib):
    return f"{kib / 1024:.1f}"


def overlaps(a0, a1, b0, b1):
    return a0 <= b1 and b0 <= a1


def cmd_summary(a):
    d = a.results
    run = json.load(open(os.path.join(d, "run.json")))
    t0, end_at, warmup, grace = run["t0"], run["end_at"], run["warmup_s"], run["cut_grace_s"]
    lines = []
    say = lines.append

    events = read_tsv(os.path.join(d, "events.tsv"))
    died = [e[2] for e in events if e[1] == "died"]
    interrupted = [e[2] for e in events if e[1] == "interrupted"]
    teardown = next((float(e[0]) for e in events if e[1] == "teardown"), float("inf"))
    ran = min(end_at, teardown) - run.get("started", t0)
    why = " (interrupted)" if interrupted else " (stopped: a process died)" if died else ""
    say(f"== R-8 soak summary: {ran:.0f} s of {run['soak_s']} s{why},"
        f" warm-up {warmup} s, {run['viewers']} viewers,"
        f" seed {run['seed']}")
    say(f"   results: {d}")

    cuts = [(c[0], c[1], float(c[2]), float(c[3])) for c in read_tsv(os.path.join(d, "cuts.tsv"))]
    windows = defaultdict(list)  # stream → [(from, to)] including the grace after the restart
    for s, _, c0, c1 in cuts:
        windows[s].append((c0, c1 + grace))

    # Memory and descriptors.
    rows = defaultdict(list)
    with open(os.path.join(d, "samples.csv")) as f:
        for r in csv.DictReader(f):
            rows[r["process"]].append(r)
    say("")
    say(f"Memory and descriptors (a sample every 10 s; 'warm-up' is the first sample at or after"
        f" +{warmup} s and not in a cut, taken at +'at' s; 'end' the last; 'archive' the archived"
        f" files held open, 'other' the fds that are neither those nor sockets):")
    say(f"  {'process':<9} {'at':>5} {'RSS MiB: warm-up':>16} {'end':>6} {'growth':>7} {'max':>6}"
        f"   {'fds: warm-up':>12} {'end':>4} {'growth':>6} {'max':>4}"
        f"   {'archive':>9}   {'other':>9}   {'threads':>7}   {'CPU':>5}")
    verdict_rss, verdict_fd, fd_notes = [], [], []
    for name in NODES:
        live = [r for r in rows.get(name, []) if r["alive"] == "1"]
        if not live:
            say(f"  {name:<9} no samples")
            continue
        for r in live:
            r["t"] = float(r["elapsed_s"])
            for k in ("rss_kib", "fds", "socket_fds", "archive_fds", "threads"):
                r[k] = int(r[k])
            r["cpu_s"] = float(r["cpu_s"])
            r["other_fds"] = r["fds"] - r["socket_fds"] - r["archive_fds"]
        in_cut = lambda r: any(c0 - 1 <= float(r["epoch"]) <= c1 + 5 for _, _, c0, c1 in cuts)
        w = next((r for r in live if r["t"] >= warmup and not in_cut(r)),
                 next((r for r in live if r["t"] >= warmup), live[-1]))
        e = live[-1]
        rss_growth = (e["rss_kib"] - w["rss_kib"]) / w["rss_kib"] * 100
        fd_growth = e["fds"] - w["fds"]
        cpu = ((e["cpu_s"] - live[0]["cpu_s"]) / max(1.0, e["t"] - live[0]["t"]) * 100)
        say(f"  {name:<9} {w['t']:>5.0f} {mib(w['rss_kib']):>16} {mib(e['rss_kib']):>6} {rss_growth:>+6.1f}%"
            f" {mib(max(r['rss_kib'] for r in live)):>6}   {w['fds']:>12} {e['fds']:>4}"
            f" {fd_growth:>+6} {max(r['fds'] for r in live):>4}"
            f"   {w['archive_fds']:>3} → {e['archive_fds']:<3}   {w['other_fds']:>3} → {e['other_fds']:<3}"
            f"   {w['threads']:>3}→{e['threads']:<3}   {cpu:>4.1f}%")
        if rss_growth > 5:
            note = ""
            if w.get("proxy_bytes") and e.get("proxy_bytes"):
                fetched = (float(e["proxy_bytes"]) - float(w["proxy_bytes"])) / 1024
                if fetched > 0:
                    rest = (e["rss_kib"] - w["rss_kib"] - fetched) / w["rss_kib"] * 100
                    note = (f" (the archive proxy fetched {mib(fetched)} MiB meanwhile, cached up"
                            f" to 256 MiB by design; without it {rest:+.1f} %)")
            verdict_rss.append(f"{name} {rss_growth:+.1f} %{note}")
        if fd_growth > 0:
            # The archive's open-file cache fills up to 256 files by design; growth beyond
            # those files is what counts as a leak.
            rest = fd_growth - (e["archive_fds"] - w["archive_fds"])
            if rest <= 0 and e["archive_fds"] <= 256:
                fd_notes.append(f"{name} {fd_growth:+d}, all archived files held open"
                                f" ({e['archive_fds']} of at most 256)")
            else:
                verdict_fd.append(f"{name} {fd_growth:+d} ({rest:+d} not archived files;"
                                  f" sockets {w['socket_fds']} → {e['socket_fds']},"
                                  f" other {w['other_fds']} → {e['other_fds']})")
        # Medians of the first and last tenth after the warm-up, as a help in reading the two
        # single samples (viewer connections come and go with the rounds and the cuts).
        after = [r for r in live if r["t"] >= warmup]
        if len(after) >= 6:
            k = max(3, len(after) // 10)
            first, last = after[:k], after[-k:]
            m0 = statistics.median(r["rss_kib"] for r in first)
            m1 = statistics.median(r["rss_kib"] for r in last)
            f0 = statistics.median(r["fds"] for r in first)
            f1 = statistics.median(r["fds"] for r in last)
            say(f"  {'':<15} medians of the first / last {k} samples after warm-up:"
                f" RSS {mib(m0)} → {mib(m1)} MiB ({(m1 - m0) / m0 * 100:+.1f} %),"
                f" fds {f0:g} → {f1:g}")

    # Cuts.
    say("")
    per = Counter(c[0] for c in cuts)
    say(f"Source cuts: {len(cuts)} ({', '.join(f'{s}: {n}' for s, n in sorted(per.items())) or 'none'});"
        f" an error from the kill to {grace} s after the restart is counted as explained")
    for s, sig, c0, c1 in cuts:
        say(f"  +{c0 - t0:6.0f} s  {s}  SIG{sig:<4}  {c1 - c0:4.1f} s down")

    def explained(stream, f, t):
        return any(overlaps(f, t, w0, w1) for w0, w1 in windows.get(stream, []))

    # Viewers.
    unexpected = 0
    say("")
    say("Viewers (viewer_sim, one result per round; an error is any answer but 200, status 0 a"
        " broken connection or timeout):")
    by_group = defaultdict(lambda: {"rounds": 0, "cut_rounds": 0, "requests": 0, "ok": 0,
                                    "parts": 0, "segments": 0, "err": Counter(),
                                    "cut_err": Counter(), "first": [], "failed": 0})
    for g, stream, f, t, rc, result in read_tsv(os.path.join(d, "viewers.tsv")):
        b = by_group[g]
        b["rounds"] += 1
        cut = explained(stream, float(f), float(t))
        b["cut_rounds"] += cut
        if result == "null" or rc != "0":
            b["failed"] += 1
            continue
        r = json.loads(result)
        b["requests"] += r["requests"]
        b["ok"] += r["ok"]
        b["parts"] += r["parts"]
        b["segments"] += r["segments"]
        statuses = Counter(r["statuses"])
        if r.get("connect_errors"):  # errors too, but not in "statuses"
            statuses["connect"] += r["connect_errors"]
        (b["cut_err"] if cut else b["err"]).update(statuses)
        if not cut and r["errors"]:
            seen = Counter(r.get("first_errors", []))
            b["first"].append(f"+{float(f) - t0:.0f} s, first errors: " + "; ".join(
                f"{e}{f' ×{n}' if n > 1 else ''}" for e, n in seen.items()))
    for g, b in sorted(by_group.items()):
        n_err, n_cut = sum(b["err"].values()), sum(b["cut_err"].values())
        unexpected += n_err + b["failed"]
        say(f"  {g:<12} {run['groups'].get(g, '?'):>4} viewers, {b['rounds']} rounds"
            f" ({b['cut_rounds']} during cuts): {b['requests']} requests, {b['ok']} ok"
            f" ({b['parts']} parts, {b['segments']} segments);"
            f" errors outside cuts {n_err}{fmt_counter(b['err'])},"
            f" during cuts {n_cut}{fmt_counter(b['cut_err'])}"
            + (f", {b['failed']} rounds without a result" if b["failed"] else ""))
        for line in b["first"][:5]:
            say(f"      {line}")

    # Archive reads and redirects.
    say("")
    arch = read_tsv(os.path.join(d, "archive.tsv"))
    kinds = defaultdict(lambda: [0, Counter(), Counter()])  # n, unexpected, explained
    bad_examples = []
    for t, node, kind, status, size, p0, p1, path in arch:
        t, status = float(t), int(status)
        good = (status == 302) if kind.startswith("redirect_") else (
            status == 206 if kind.endswith("_range") else status == 200)
        k = kinds[(node, kind)]
        k[0] += 1
        if good:
            continue
        stream = kind.split("_", 1)[1] if kind.startswith("redirect_") else "s1"
        if explained(stream, float(p1) if not kind.startswith("redirect_") else t, t):
            k[2][status] += 1
        else:
            k[1][status] += 1
            unexpected += 1
            if len(bad_examples) < 8:
                bad_examples.append(f"+{t - t0:.0f} s {node} {status} {path}")
    say(f"Archive reads of s1 and central's redirects: {len(arch)} requests"
        " (answers other than 200 / 206 for a Range read / 302 for a redirect):")
    for (node, kind), (n, bad, cut) in sorted(kinds.items()):
        say(f"  {node:<9} {kind:<22} {n:>5}   unexpected {sum(bad.values())}{fmt_counter(bad)},"
            f" during cuts {sum(cut.values())}{fmt_counter(cut)}")
    for line in bad_examples:
        say(f"      {line}")

    # Logs. Each line is placed by its time stamp: inside a cut window of a stream the process
    # serves ("cut"), after the run when everything is being stopped ("shutdown"), or neither.
    say("")
    errors, crashes = [], []
    warns = defaultdict(Counter)  # (name, event) → phase → count
    error_events = Counter()
    for name in NODES:
        path = os.path.join(d, f"{name}.log")
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                lv = LEVEL.search(line)
                level = lv.group(1) if lv else ""
                phase = ""
                m = STAMP.match(line)
                if m:
                    at = datetime.fromisoformat(m.group(1)).replace(tzinfo=timezone.utc).timestamp()
                    if at < run.get("started", t0):
                        phase = "setup"
                    elif at >= teardown:
                        phase = "shutdown"
                    elif any(w0 <= at <= w1 for st, ws in windows.items()
                             if name in CUT_TOUCHES.get(st, ()) for w0, w1 in ws):
                        phase = "cut"
                if CRASH.search(line):
                    crashes.append(f"{name}: {line[:300]}")
                elif level == "error" or GLOG.match(line):
                    ev = EVENT.search(line)
                    error_events[(name, ev.group(1) if ev else line[:40])] += 1
                    errors.append((phase, f"{name}: {line[:300]}"))
                elif level == "warn":
                    ev = EVENT.search(line)
                    warns[(name, ev.group(1) if ev else "?")][phase or "run"] += 1
    n_cut = sum(1 for phase, _ in errors if phase == "cut")
    n_setup = sum(1 for phase, _ in errors if phase == "setup")
    n_shutdown = sum(1 for phase, _ in errors if phase == "shutdown")
    unexpected += len(crashes) + len(errors) - n_cut
    say(f"Logs: {len(crashes)} crash or sanitizer lines, {len(errors)} error lines"
        f" ({n_cut} inside a cut window, {n_setup} while starting, {n_shutdown} while stopping)")
    for line in crashes[:20]:
        say(f"  CRASH {line}")
    for (name, ev), n in sorted(error_events.items()):
        say(f"  error {name} {ev}: {n}")
    for i, (phase, line) in enumerate(errors):
        if i == 15:
            say(f"  … {len(errors) - i} more in the logs")
            break
        say(f"  {f'({phase}) ' if phase else ''}{line}")
    if warns:
        say("  warnings, for reference (while starting / outside cuts / in cut windows /"
            " while stopping):")
        for (name, ev), c in sorted(warns.items()):
            say(f"    {name:<9} {ev:<28} {c['setup']:>5} / {c['run']:>5} / {c['cut']:>5} /"
                f" {c['shutdown']:>5}")

    # Other events: sources that stopped by themselves, viewer_sim failures, deaths.
    others = [e for e in events if e[1] not in ("interrupted", "teardown")]
    if others:
        say("")
        say("Events:")
        for t, kind, detail in others:
            say(f"  +{float(t) - t0:.0f} s {kind}: {detail}")
        unexpected += sum(1 for e in others if e[1] == "ffmpeg_exit")

    say("")
    say("R-8 bars:")
    say(f"  RSS growth ≤ 5 % after warm-up: {'pass' if not verdict_rss else 'FAIL ' + '; '.join(verdict_rss)}")
    say("  no fd growth (end ≤ warm-up): " + ("FAIL " + "; ".join(verdict_fd) if verdict_fd else "pass")
        + ("" if not fd_notes else " (" + "; ".join(fd_notes) + ")"))
    say(f"  no unexpected errors: {'pass' if unexpected == 0 else f'FAIL ({unexpected})'}")
    say(f"  every process alive: {'pass' if not died else 'FAIL: ' + '; '.join(died) + ' died'}")
    if ran < 3000:
        say(f"  (a {ran:.0f} s run: R-8 asks for 1 h)")
    print("\n".join(lines))
    return 1 if died else 0


def fmt_counter(c):
    c = {k: v for k, v in c.items() if v}
    return (" (" + ", ".join(f"{k}: {v}" for k, v in sorted(c.items(), key=str)) + ")") if c else ""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--out", required=True)
    s.add_argument("--start", type=float, required=True)
    s.add_argument("--until", type=float)
    s.add_argument("--once", action="store_true")
    s.add_argument("--interval", type=float, default=10)
    s.add_argument("--pid", action="append", default=[])
    s.add_argument("--dvr-root", default="")
    s.add_argument("--metrics", action="append", default=[], help="NAME=HOST:PORT of /metrics")
    s = sub.add_parser("archive")
    s.add_argument("--out", required=True)
    s.add_argument("--until", type=float, required=True)
    s.add_argument("--every", type=float, default=15)
    s.add_argument("--stream", required=True)
    s.add_argument("--since", type=int, required=True)
    s.add_argument("--node", action="append", default=[])
    s.add_argument("--central", required=True)
    s.add_argument("--redirect", action="append", default=[])
    s = sub.add_parser("summary")
    s.add_argument("--results", required=True)
    a = p.parse_args()
    if a.cmd == "sample" and not a.once and a.until is None:
        p.error("sample needs --until or --once")
    return {"sample": cmd_sample, "archive": cmd_archive, "summary": cmd_summary}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
