#!/usr/bin/env bash
# P-17: what viewer access costs. One origin streamer holds two published streams with the same
# objects — `open` (no policy) and `prot` (`access: {"mode": "token"}`, HS256 key k1) — and
# each case is measured on both, side by side in one run, with nginx serving the same bytes
# from files beside them for reference:
#
#   media playlist (~1 KiB, 13 segments)   open  GET /open/v1/index.m3u8
#                                          sid   GET /prot/v1/index.m3u8?sid=S, the URI the
#                                                master given ?token=T names (what a player
#                                                reloads): S stands for T on this node (A-3),
#                                                and the node writes it into every URI
#                                          token GET /prot/v1/index.m3u8?token=T (T verified
#                                                — cached after the first request —, S written)
#                                          bearer the same with Authorization: Bearer T (no
#                                                rewriting)
#   1 MiB segment                          open / sid / token (?token=T) / bearer
#
# Load: wrk -t${WRK_THREADS:-1} -c${CONNECTIONS:-100} -dDURATION (default 10 s) per case and
# server, keep-alive, ROUNDS (default 5) times each in turn, the median reported; THREADS (default 2) streamer HTTP threads / nginx workers. Bar: every
# protected case ≥ 0.95 × the same case open (req/s), no non-2xx answer. Beside each figure, the
# streamer's own CPU per answer (µs, user + system from /proc), which does not depend on how
# the load generator shares the two cores. PERF_MODE="token …" records a perf profile of the
# streamer during those modes' playlist case (kept with KEEP_WORK=1).
# Loopback only; everything it starts is stopped on exit; ~5 min with the defaults. Uses the
# binaries in BUILD_DIR (default <repo>/build), /usr/sbin/nginx, wrk and python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
window=13
source "$root/bench/lib/origin.sh"
www="$work/www"

start_central
start_streamer origin origin-1
secret=$(python3 -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode())')
curl -fsS -X PUT "http://$central_http/central/api-v4/access-keys/k1" \
  -d "{\"alg\": \"HS256\", \"secret\": \"$secret\"}" >/dev/null || die "PUT access key failed"
start_published_stream open "$window"
start_published_stream prot "$window"
curl -fsS -X PATCH "http://$central_http/central/api-v4/streams/prot" \
  -d '{"access": {"mode": "token"}}' >/dev/null || die "PATCH prot failed"
token=$(SECRET="$secret" python3 - <<'PY'
import base64, hashlib, hmac, json, os, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
secret = os.environ["SECRET"]
key = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
body = b64(json.dumps({"sub": "bench", "streams": ["prot"], "exp": int(time.time()) + 3600}).encode())
print(head + "." + body + "." + b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()))
PY
)

producing=$(( ($(now_ms) - start) / 2000 ))
head -c $((1 << 20)) /dev/urandom >"$work/seg1.ts"
head -c 1500 /dev/urandom >"$work/small.ts"
for name in open prot; do
  for msn in $(seq $((producing - window - 1)) $((producing - 1))); do
    file="$work/small.ts"
    [ "$msn" = $((producing - 2)) ] && file="$work/seg1.ts"
    code=$(put "/$name/v1/$msn.ts" "$file")
    [ "$code" = 201 ] || die "PUT /$name/v1/$msn.ts answered $code"
  done
done
seg="v1/$((producing - 2)).ts"
# The policy reaches the node through central: wait until the protected stream refuses.
for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/prot/v1/index.m3u8")" = 401 ] && break
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/prot/v1/index.m3u8")" = 401 ] ||
  die "the protected stream is not refused without a token"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/prot/v1/index.m3u8?token=$token")" = 200 ] ||
  die "the protected stream refuses the token"
# What a player does: the master given ?token= names the media playlist with the node's id.
sid=$(curl -fsS "http://$viewer/prot/index.m3u8?token=$token" | grep -o 'sid=[A-Za-z0-9_-]*' | head -1)
[ -n "$sid" ] || die "the protected master playlist carries no session id"
curl -fsS "http://$viewer/prot/v1/index.m3u8?$sid" >"$work/prot.m3u8"
[ "$(grep -c "[?&]$sid" "$work/prot.m3u8")" -ge "$window" ] ||
  die "the protected playlist does not carry the id into every URI: $(head -c 600 "$work/prot.m3u8")"

mkdir -p "$www/open/v1"
curl -fsS -o "$www/open/v1/index.m3u8" "http://$viewer/open/v1/index.m3u8"
curl -fsS -o "$www/open/$seg" "http://$viewer/open/$seg"
start_nginx_files "$www"

bearer=(-H "Authorization: Bearer $token")
# case: NAME|PATH|open URL|protected URL|protected WRK_ARGS (bearer or none)
: >"$work/results"
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
measure() {  # measure NAME PATH MODE URL [WRK_ARGS...]
  local name="$1" path="$2" mode="$3" url="$4"
  shift 4
  echo "measuring: $name, $mode…" >&2
  # PERF_MODE="<mode> …": a perf profile of the streamer during those modes' playlist case
  # ($work/perf-<mode>.data, kept with KEEP_WORK).
  local perf_pid=""
  if [[ " ${PERF_MODE:-} " == *" $mode "* ]] && [ "$name" = "media playlist" ]; then
    perf record -F ${PERF_FREQ:-999} -g -o "$work/perf-$mode.data" -p "$streamer_pid" -- sleep "$duration" \
      >/dev/null 2>&1 &
    perf_pid=$!
  fi
  local ticks_before ticks_after
  ticks_before=$(cpu_ticks "$streamer_pid")
  read -r rps mbs bad < <(wrk_get "$url" "$@")
  ticks_after=$(cpu_ticks "$streamer_pid")
  [ -z "$perf_pid" ] || wait "$perf_pid" || true
  # The streamer's CPU (user + system) per answer, µs: what the server spends, apart from
  # how the load generator shares the cores (nginx: not measured, 0).
  local us_per=0
  [ "$mode" = nginx ] || us_per=$(python3 -c "print(($ticks_after - $ticks_before) * 1e6 / \
    $(getconf CLK_TCK) / max(1.0, $rps * $duration))")
  echo "$name|$mode|$rps|$mbs|$bad|$us_per" >>"$work/results"
}
# ROUNDS (default 5) rounds, every case once per round in turn, so a drift of the machine
# touches every mode alike; each mode's figure is the median of its rounds.
for round in $(seq 1 "${ROUNDS:-5}"); do
  for c in "media playlist|v1/index.m3u8" "1 MiB segment|$seg"; do
    name="${c%%|*}"; p="${c#*|}"
    measure "$name" "$p" open "http://$viewer/open/$p"
    measure "$name" "$p" sid "http://$viewer/prot/$p?$sid"
    measure "$name" "$p" token "http://$viewer/prot/$p?token=$token"
    measure "$name" "$p" bearer "http://$viewer/prot/$p" "${bearer[@]}"
    measure "$name" "$p" nginx "http://127.0.0.1:$nginx_port/open/$p"
  done
done

printf '\nP-17 viewer access, wrk -t%s -c%s -d%ss per case, %s streamer HTTP threads / nginx workers\n' \
  "${WRK_THREADS:-1}" "${CONNECTIONS:-100}" "$duration" "$threads"
python3 - "$work/results" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
runs = {}
for name, mode, rps, mbs, bad, us in rows:
    runs.setdefault(name, {}).setdefault(mode, []).append(
        (float(rps), float(mbs), int(bad), float(us)))
by = {}
for name, modes in runs.items():
    for mode, rs in modes.items():
        ordered = sorted(rs)
        mid = ordered[len(ordered) // 2]
        cpu = sorted(r[3] for r in rs)[len(rs) // 2]
        by.setdefault(name, {})[mode] = (mid[0], mid[1], sum(r[2] for r in rs), cpu)
        print(f"{name} {mode}: rounds " + ", ".join(f"{r[0]:.0f}" for r in rs) + " req/s, "
              + ", ".join(f"{r[3]:.1f}" for r in rs) + " µs CPU/answer")
fails = 0
print(f"{'case':<16} {'mode':<7} {'req/s':>9} {'MiB/s':>8} {'non-2xx':>7} {'µs CPU':>7}"
      f" {'÷ open':>7} {'bar':>6}")
for name, modes in by.items():
    base = modes["open"][0]
    for mode in ("open", "sid", "token", "bearer", "nginx"):
        rps, mbs, bad, cpu = modes[mode]
        ratio = rps / base if base else 0
        verdict = ""
        if mode in ("sid", "token", "bearer"):
            ok = ratio >= 0.95 and bad == 0
            fails += not ok
            verdict = "PASS" if ok else "FAIL"
        cpu_text = f"{cpu:.1f}" if mode != "nginx" else "-"
        print(f"{name:<16} {mode:<7} {rps:>9.0f} {mbs:>8.1f} {bad:>7} {cpu_text:>7} {ratio:>7.2f}"
              f" {'≥0.95' if verdict else '':>6} {verdict}")
print(f"{6 - fails} of 6 protected cases pass")
PY
