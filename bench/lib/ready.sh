# The READY line every Meshwork binary prints once its listeners are bound; sourced by the
# benchmarks and the soak, which define die().
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
