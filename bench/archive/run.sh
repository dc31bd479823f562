#!/usr/bin/env bash
# P-14: the archive (D-2, D-3). Two measurements in one run:
#   1. index rebuild at start-up: SEGMENTS (default 100 000) archived segment files, laid out
#      as the recorder lays them out (2 s segments filed by UTC hour), are scanned by a
#      streamer starting with the stream's `dvr` configured; the time is the streamer's own
#      `dvr_index_rebuilt` log line (bar: ≤ 1 s per 100 000);
#   2. serving archived 2 MiB segments from disk (sendfile) beside nginx (`sendfile on`)
#      serving the very same files from the same directory: `wrk -t1 -c100 -dDURATION` on
#      one segment, then on the other server (bar: ≥ 0.9 × nginx, req/s and bytes/s).
# Both servers get THREADS (default 2) threads/workers. The files live under a temporary
# directory (page cache warm for both after a first read). Loopback only; everything it
# starts is stopped and the files removed on exit (KEEP_WORK=1 keeps them).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
segments="${SEGMENTS:-100000}"
# shellcheck source=../lib/origin.sh
source "$root/bench/lib/origin.sh"

dvr="$work/dvr"
echo "P-14: laying out $segments archived segment files (and 8 of 2 MiB) under $dvr"
python3 - "$dvr" "$segments" <<'PY'
import os, sys, time
root, n = sys.argv[1], int(sys.argv[2])
start = (int(time.time()) - 2 * n - 3600) * 1000
made = set()
for i in range(n):
    t = start + i * 2000
    hour = time.strftime("%Y/%m/%d/%H", time.gmtime(t // 1000))
    d = os.path.join(root, "arc/ts/v1", hour)
    if d not in made:
        os.makedirs(d, exist_ok=True)
        made.add(d)
    # The small ones: 188 bytes (one TS packet); the last 8: 2 MiB each, the serving case.
    size = 2 * 1024 * 1024 if i >= n - 8 else 188
    with open(os.path.join(d, f"{t}-2000.ts"), "wb") as f:
        f.write(os.urandom(size) if size > 188 else b"\x47" + bytes(187))
PY
big=$(find "$dvr" -name '*.ts' -size +1M | sort | tail -1)
big_rel=${big#"$dvr/"}
big_name=$(basename "$big" .ts)

start_central
start_streamer ingest ingest-1
put_stream arc "{\"placement\":{\"streamers\":[\"ingest-1\"]},\"inputs\":[\"publish://\"],\
\"dvr\":{\"root\":\"$dvr\",\"depth_s\":7776000,\"protocols\":[\"ts\"]}}"
line=""
for _ in $(seq 1 600); do
  line=$(grep -m1 'event=dvr_index_rebuilt' "$work/streamer.log" || true)
  [ -n "$line" ] && break
  sleep 0.1
done
[ -n "$line" ] || die "the streamer never rebuilt the index: $(tail -3 "$work/streamer.log")"
found=$(echo "$line" | sed -E 's/.*segments=([0-9]+).*/\1/')
ms=$(echo "$line" | sed -E 's/.* ms=([0-9]+).*/\1/')
echo "== index rebuild: $found segments in $ms ms (bar: ≤ 1000 ms per 100 000)"

url_path="/arc/v1/dvr-${big_name}.ts"
code=$(curl -s -o "$work/fetched.ts" -w '%{http_code}' "http://$viewer$url_path")
[ "$code" = 200 ] || die "the streamer answered $code for $url_path"
cmp -s "$work/fetched.ts" "$big" || die "the streamer's answer differs from the file"
start_nginx_files "$dvr"
cmp -s <(curl -s "http://127.0.0.1:$nginx_port/$big_rel") "$big" || die "nginx's answer differs"

echo "== archived 2 MiB segment, wrk -t${WRK_THREADS:-1} -c${CONNECTIONS:-100} -d${duration}s"
read -r s_rps s_mbs s_bad <<<"$(wrk_get "http://$viewer$url_path")"
read -r n_rps n_mbs n_bad <<<"$(wrk_get "http://127.0.0.1:$nginx_port/$big_rel")"
printf '  %-10s %10s req/s %10s MiB/s  non-2xx %s\n' streamer "$s_rps" "$s_mbs" "$s_bad" \
  nginx "$n_rps" "$n_mbs" "$n_bad"
python3 -c "print('  ratio streamer/nginx: %.2f req/s, %.2f MiB/s (bar: >= 0.9)' % ($s_rps / $n_rps, $s_mbs / $n_mbs))"
