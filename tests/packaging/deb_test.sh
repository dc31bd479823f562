#!/usr/bin/env bash
# M-8: builds the two Debian packages of this build tree with `cpack -G DEB`, lists their
# contents, checks the files, the control fields and the maintainer scripts an operator
# relies on, and runs lintian, which must report nothing (the overrides in deploy/debian/ say
# why each remaining tag is accepted).
#   tests/packaging/deb_test.sh BUILD_DIR
set -euo pipefail
build="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
central=$(ls "$work"/meshwork-central_*.deb)
streamer=$(ls "$work"/meshwork-streamer_*.deb)

for deb in "$central" "$streamer"; do
  echo "== $(basename "$deb")"
  dpkg-deb -c "$deb" | awk '{print $1, $6}' | tee "$deb.list"
done
has() {  # has LIST PATH — the package lists PATH
  grep -q " \./${2#/}\$" "$1" || fail "$(basename "${1%.list}") does not contain $2"
}
for p in /usr/bin/meshwork-central /usr/bin/meshctl /usr/lib/systemd/system/meshwork-central.service \
  /etc/meshwork/central.flags /usr/share/meshwork/console/index.html \
  /usr/share/meshwork/console/vendor/hls.min.js /usr/share/meshwork/console/vendor/dash.all.min.js \
  /usr/share/meshwork/grafana/meshwork.json /usr/share/meshwork/prometheus/prometheus.yml \
  /usr/share/meshwork/prometheus/meshwork-alerts.yml /usr/share/doc/meshwork-central/copyright \
  /usr/share/man/man8/meshwork-central.8.gz /usr/share/man/man1/meshctl.1.gz; do
  has "$central.list" "$p"
done
for p in /usr/bin/meshwork-streamer /usr/lib/systemd/system/meshwork-streamer.service \
  /etc/meshwork/streamer.flags /usr/share/doc/meshwork-streamer/copyright \
  /usr/share/man/man8/meshwork-streamer.8.gz; do
  has "$streamer.list" "$p"
done

# Control fields, conffiles and scripts.
dpkg-deb -f "$central" Package Depends | tee "$work/central.control"
grep -q '^Package: meshwork-central$' "$work/central.control" || fail "package name"
grep -q 'adduser' "$work/central.control" || fail "central does not depend on adduser"
grep -q 'python3' "$work/central.control" || fail "central does not depend on python3 (meshctl)"
mkdir -p "$work/ctl" "$work/root"
dpkg-deb -e "$central" "$work/ctl"
grep -qx '/etc/meshwork/central.flags' "$work/ctl/conffiles" || fail "central.flags is not a conffile"
grep -q 'adduser --system' "$work/ctl/postinst" || fail "postinst makes no system user"
grep -q '/etc/meshwork/api-token' "$work/ctl/postinst" || fail "postinst makes no API token"
sh -n "$work/ctl/postinst" && sh -n "$work/ctl/prerm" && sh -n "$work/ctl/postrm"

# The unit: the packaged binary, the system user, the capability to bind port 80, sandboxing.
dpkg-deb -x "$central" "$work/root"
unit="$work/root/usr/lib/systemd/system/meshwork-central.service"
for line in 'ExecStart=/usr/bin/meshwork-central --flagfile=/etc/meshwork/central.flags' \
  'User=meshwork' 'StateDirectory=meshwork' 'AmbientCapabilities=CAP_NET_BIND_SERVICE' \
  'ProtectSystem=strict' 'NoNewPrivileges=yes'; do
  grep -qx "$line" "$unit" || fail "the central unit lacks $line"
done
# The packaged binaries are stripped (the build's keep their debug information).
for b in "$work/root/usr/bin/meshwork-central"; do
  file "$b" | grep -q ', stripped' || fail "$b is not stripped: $(file "$b")"
done
"$work/root/usr/bin/meshctl" --help | grep -q 'streamers' || fail "meshctl --help"

# systemd's own check of both units (syntax, directives, the binary they start: pointed at
# the extracted copy, as nothing is installed here), and its offline exposure score.
dpkg-deb -x "$streamer" "$work/root"
mkdir -p "$work/units"
for c in central streamer; do
  sed "s|/usr/bin/|$work/root/usr/bin/|g" "$work/root/usr/lib/systemd/system/meshwork-$c.service" \
    >"$work/units/meshwork-$c.service"
done
systemd-analyze verify --man=no "$work"/units/*.service || fail "systemd-analyze verify"
for c in central streamer; do
  systemd-analyze security --offline=yes "$work/units/meshwork-$c.service" | tail -1
done

echo "== lintian"
lintian --fail-on error,warning --allow-root "$central" "$streamer" | tee "$work/lintian.txt"
echo "lintian: $(grep -c '^[EW]:' "$work/lintian.txt" || true) errors or warnings"
echo PASS
