#!/usr/bin/env python3
"""Pushes one MPEG-TS file to N streams of a streamer's publish listener at once, each in real
time (paced by the packets' decode times, as `ffmpeg -re` does), as chunked HTTP PUTs from one
process. Usage: feed.py HOST:PORT SOURCE.ts N PREFIX TICK_MS

Stream i is `/{PREFIX}{i}/publish`; its start is staggered by i/N s (encoders are not in step).
Every TICK_MS each stream is sent the bytes whose packets are due by then. Prints JSON: bytes
sent, how far behind its schedule the slowest send ever was (a streamer that stops reading
shows here), the HTTP status of every push, the feeder's own CPU-seconds.
"""
import json, os, resource, socket, subprocess, sys, time

addr, src, n, prefix, tick_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
host, port = addr.rsplit(":", 1)
data = open(src, "rb").read()

# Schedule: for each packet (any stream) its byte position and decode time; the bytes before
# the first packet not yet due may be sent.
probe = subprocess.run(
    ["ffprobe", "-v", "error", "-show_entries", "packet=dts_time,pos", "-of", "csv=p=0", src],
    check=True, capture_output=True, text=True).stdout
pts = []
for line in probe.splitlines():
    f = line.split(",")
    if len(f) < 2 or f[0] in ("", "N/A") or f[1] in ("", "N/A"):
        continue
    pts.append((int(f[1]), float(f[0])))
pts.sort()
t0 = pts[0][1]
due = []  # (due_s, pos): monotonic in both
latest = 0.0
for pos, t in pts:
    latest = max(latest, t - t0)
    due.append((latest, pos))
duration = due[-1][0]


def allowed(elapsed):
    """Bytes that may be sent `elapsed` s after the push started."""
    lo, hi = 0, len(due)
    while lo < hi:  # first packet due after `elapsed`
        mid = (lo + hi) // 2
        if due[mid][0] <= elapsed:
            lo = mid + 1
        else:
            hi = mid
    return len(data) if lo == len(due) else due[lo][1]


socks = []
for i in range(n):
    s = socket.create_connection((host, int(port)), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall((f"PUT /{prefix}{i}/publish HTTP/1.1\r\nHost: {addr}\r\n"
               "Content-Type: video/mp2t\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    socks.append(s)

sent = [0] * n
start = time.monotonic()
if os.environ.get("STARTED_FILE"):  # when the first stream starts (wall clock), for run.sh
    with open(os.environ["STARTED_FILE"], "w") as f:
        f.write(f"{time.time():.3f}\n")
offsets = [i / n for i in range(n)]
worst_lag = 0.0
tick = tick_ms / 1000.0
total = 0
next_tick = start
while True:
    now = time.monotonic()
    done = True
    for i, s in enumerate(socks):
        el = now - start - offsets[i]
        if el < 0:
            done = False
            continue
        want = allowed(el)
        if want > sent[i]:
            chunk = data[sent[i]:want]
            s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            total += len(chunk)
            sent[i] = want
        if sent[i] < len(data):
            done = False
    after = time.monotonic()
    worst_lag = max(worst_lag, after - now)
    if done:
        break
    next_tick += tick
    delay = next_tick - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    else:
        worst_lag = max(worst_lag, -delay)
        next_tick = time.monotonic()

statuses = []
for s in socks:
    try:
        s.sendall(b"0\r\n\r\n")
        s.settimeout(15)
        head = s.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
        statuses.append(head.split(" ")[1] if head.startswith("HTTP/1.1 ") else head or "closed")
    except OSError as e:
        statuses.append(type(e).__name__)
    s.close()
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"streams": n, "bytes": total, "source_s": round(duration, 3),
                  "wall_s": round(time.monotonic() - start, 3), "worst_lag_s": round(worst_lag, 3),
                  "statuses": {c: statuses.count(c) for c in set(statuses)},
                  "feeder_cpu_s": round(ru.ru_utime + ru.ru_stime, 3)}))
