# Shared set-up of the live-origin benchmarks (P-3, P-5, P-6), sourced by their run.sh after
# they set `build` and `threads`: a work directory cleaned on exit with every process the
# script started, helpers, and `start_origin WINDOW`, which brings up central and one origin
# streamer on loopback port 0 with stream "live" (pipeline "a", availability start 60 s plus
# WINDOW segments ago) and waits until the streamer takes publishes.
# SHED (default off): CPU shedding (L-16) samples the whole host's CPU, which includes wrk's
# own core here, so by default its thresholds are set out of reach (101 %); SHED=on keeps the
# node's defaults.
shed_flags=()
[ "${SHED:-off}" = on ] || shed_flags=(--shed-dvr-cpu=101 --shed-live-cpu=101)
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

die() { echo "error: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
ready() {  # ready FILE KEY — waits (≤ 20 s) for the READY line in FILE; prints KEY's value
  local line=""
  for _ in $(seq 1 200); do
    line=$(grep -m1 '^READY ' "$1" 2>/dev/null || true)
    [ -n "$line" ] && break
    sleep 0.1
  done
  [ -n "$line" ] || die "no READY line in $1; its log ends: $(tail -n5 "${1%.out}.log")"
  echo "${line#READY }" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
put() {  # put PATH FILE → HTTP status of the PUT on the publish listener
  curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'X-Pipeline: a' \
    --data-binary @"$2" "http://$publish$1"
}

# Sets central_http, central_grpc, viewer, publish and start (the availability start, ms).
start_origin() {
  local window="$1"
  "$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 \
    --grpc-listen=127.0.0.1:0 >"$work/central.out" 2>"$work/central.log" &
  pids+=($!)
  central_http=$(ready "$work/central.out" http)
  central_grpc=$(ready "$work/central.out" grpc)

  "$build/streamer/streamer" --central="$central_grpc" \
    --cluster-token-file="$work/db/cluster-token" --node-id=origin-1 --role=origin \
    --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
    --http-threads="$threads" --publish-threads=1 "${shed_flags[@]}" \
    >"$work/streamer.out" 2>"$work/streamer.log" &
  pids+=($!)
  viewer=$(ready "$work/streamer.out" http)
  publish=$(ready "$work/streamer.out" publish)

  start=$(($(now_ms) - 60000 - 2000 * window))
  local stream_json="{\"placement\":{\"streamers\":[\"origin-1\"]},\"segment_ms\":2000,\
\"live_window\":$window,\"pipelines\":[\"a\"],\"template\":{\"availability_start\":$start}}"
  local placed=""
  for _ in $(seq 1 50); do
    if curl -fsS -X PUT "http://$central_http/central/api-v4/streams/live" -d "$stream_json" \
      >/dev/null 2>>"$work/put.err"; then placed=yes; break; fi
    sleep 0.2
  done
  [ -n "$placed" ] || die "could not create the stream: $(tail -n2 "$work/put.err")"

  printf 'init' >"$work/init.mp4"
  local code=""
  for _ in $(seq 1 100); do
    code=$(put /live/v1/init.mp4 "$work/init.mp4")
    [ "$code" = 201 ] && break
    sleep 0.1
  done
  [ "$code" = 201 ] || die "the streamer never accepted the stream (last PUT: $code)"
}
