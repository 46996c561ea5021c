#!/bin/bash
# Runs every test: unit tests, fuzz smoke, man page sync, bench smoke and
# the end-to-end suite (real daemon as root, real clients), first in a
# normal build and then in an ASan/UBSan build. Run as root from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
etc/install-deps.sh

if [ "$(id -u)" != 0 ]; then
	echo "tests/run.sh: the end-to-end tests start the daemon as root; run as root" >&2
	exit 1
fi

total_ok=0
total_fail=0
# run_suite DIR [SETUP ARGS...]; meson test gets $test_args as well.
test_args=""
run_suite() {
	local dir=$1; shift
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
	meson compile -C "$dir"
	local rc=0
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs --no-rebuild $test_args || rc=$?
	local ok fail
	ok=$(grep -c '"result": "OK"' "$dir/meson-logs/testlog.json" 2>/dev/null || true)
	fail=$(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$dir/meson-logs/testlog.json" 2>/dev/null || true)
	# No log (the build directory vanished): the counts are unknown, so
	# a failing meson test must still count as a failure below.
	ok=${ok:-0}
	fail=${fail:-0}
	total_ok=$((total_ok + ok))
	total_fail=$((total_fail + fail))
	[ "$rc" = 0 ] || [ "$fail" != 0 ] || total_fail=$((total_fail + 1))
}

# Per-test PAM services go to /etc/pam.d, not through pam_wrapper, whose
# per-process directories collide when logins run at once (see
# tests/e2e/twhelpers.py).
export TW_E2E_PAM=etc
run_suite build-test -Dtest_hooks=true
# LeakSanitizer needs ptrace, which the sandbox forbids; ASan and UBSan
# still check every access. Findings abort the process (and fail tests).
# verify_asan_link_order=0: the e2e tests preload nss_wrapper before the
# runtime.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The package test builds its own binary from the sources: once is enough.
test_args="--no-suite deb"
run_suite build-asan -Dtest_hooks=true -Db_sanitize=address,undefined -Db_lundef=false

echo "tests: $total_ok passed, $total_fail failed"
[ "$total_fail" = 0 ]
