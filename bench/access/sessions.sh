#!/usr/bin/env bash
# P-17 (second half): how many new viewer sessions a node admits per second through an auth
# backend (A-6), and that each session costs exactly one backend call. One origin streamer
# holds stream `prot` with `access: {"mode": "backend"}`; the backend is the tests' real one
# (tests/e2e/auth_backend.py, Python's threading HTTP server, answering at once); wrk asks for
# the media playlist with a token no request used before (`?token=allow-<thread>-<n>`), so
# every request is a new session.
#
# Load: wrk -t${WRK_THREADS:-1} -c${CONNECTIONS:-100} -d${DURATION:-10}s; THREADS (default 2)
# streamer HTTP threads. Prints the sessions admitted per second, the backend's calls and
# sessions asked more than once. Bar: ≥ 1 000 sessions/s, no session asked twice, no non-2xx.
# Loopback only; everything it starts is stopped on exit. Uses the binaries in BUILD_DIR
# (default <repo>/build), wrk and python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
window=13
source "$root/bench/lib/origin.sh"

start_central
start_streamer origin origin-1
start_published_stream prot "$window"
producing=$(( ($(now_ms) - start) / 2000 ))
head -c 1500 /dev/urandom >"$work/small.ts"
for msn in $(seq $((producing - window - 1)) $((producing - 1))); do
  code=$(put "/prot/v1/$msn.ts" "$work/small.ts")
  [ "$code" = 201 ] || die "PUT /prot/v1/$msn.ts answered $code"
done

python3 "$root/tests/e2e/auth_backend.py" --delay 0 >"$work/backend.out" 2>"$work/backend.log" &
pids+=($!)
backend_port=""
for _ in $(seq 1 50); do
  backend_port=$(sed -n 's/^READY {"port": \([0-9]*\)}$/\1/p' "$work/backend.out")
  [ -n "$backend_port" ] && break
  sleep 0.1
done
[ -n "$backend_port" ] || die "the auth backend did not start: $(tail -n3 "$work/backend.log")"
curl -fsS -X PATCH "http://$central_http/central/api-v4/streams/prot" -d "{\"access\": {\"mode\": \
\"backend\", \"backend\": {\"url\": \"http://127.0.0.1:$backend_port/auth\", \"timeout_ms\": 2000, \
\"on_error\": \"deny\"}}}" >/dev/null || die "PATCH prot failed"
for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/prot/v1/index.m3u8")" = 401 ] && break
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/prot/v1/index.m3u8?token=allow-probe")" = 200 ] ||
  die "the backend does not admit a viewer"
before=$(curl -fsS "http://127.0.0.1:$backend_port/calls" |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["calls"]))')

cat >"$work/sessions.lua" <<'LUA'
local n = 0
local id = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function request()
  n = n + 1
  return wrk.format("GET", "/prot/v1/index.m3u8?token=allow-t" .. id .. "-" .. n)
end
LUA
echo "measuring: new sessions through the backend…" >&2
wrk -t"${WRK_THREADS:-1}" -c"${CONNECTIONS:-100}" -d"${duration}s" -s "$work/sessions.lua" \
  "http://$viewer/" >"$work/wrk.txt" 2>&1 || true
sleep 1  # the calls of requests still in flight when wrk stopped
curl -fsS "http://127.0.0.1:$backend_port/calls" >"$work/calls.json"

printf '\nP-17 new sessions through an auth backend, wrk -t%s -c%s -d%ss, %s streamer HTTP threads\n' \
  "${WRK_THREADS:-1}" "${CONNECTIONS:-100}" "$duration" "$threads"
python3 - "$work/wrk.txt" "$work/calls.json" "$before" <<'PY'
import json, re, sys
wrk = open(sys.argv[1]).read()
calls = json.load(open(sys.argv[2]))["calls"]
before = int(sys.argv[3])
rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", wrk).group(1))
done = int(re.search(r"(\d+) requests in", wrk).group(1))
bad = sum(int(x) for x in re.findall(r"Non-2xx or 3xx responses:\s+(\d+)", wrk))
errors = re.search(r"Socket errors:.*", wrk)
new_sessions = len(calls) - before
twice = sum(1 for c in calls.values() if c > 1)
print(f"sessions admitted: {done} in total, {rps:.0f}/s; non-2xx {bad}"
      + (f"; {errors.group(0)}" if errors else ""))
print(f"backend: {new_sessions} sessions asked (wrk's last requests in flight included), "
      f"{twice} asked more than once")
ok = rps >= 1000 and twice == 0 and bad == 0
print(f"bar ≥ 1 000 sessions/s, one call each: {'PASS' if ok else 'FAIL'}")
PY
