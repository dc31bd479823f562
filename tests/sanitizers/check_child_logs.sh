#!/usr/bin/env bash
# check_child_logs.sh LOG_DIR COMMAND [ARGS…] — runs COMMAND, then fails if any *.log in
# LOG_DIR holds a sanitizer report, printing it. For tests whose children (central,
# streamer) are started by a script that keeps their stderr in log files (tools/quickstart).
set -uo pipefail
dir="$1"; shift
"$@"
status=$?
pattern='ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|WARNING: ThreadSanitizer|runtime error:'
for log in "$dir"/*.log; do
  [ -f "$log" ] || continue
  if grep -Eq "$pattern" "$log"; then
    echo "==== sanitizer report in $log:"
    sed -n -E "/$pattern/,\$p" "$log" | head -n 400
    echo "===="
    status=1
  fi
done
exit $status
