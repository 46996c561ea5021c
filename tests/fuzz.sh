#!/bin/bash
# Runs every fuzz target (tests/fuzz/fuzz_*.c) under libFuzzer with
# ASan and UBSan, each for the given time, one after another:
#
#   tests/fuzz.sh [seconds per target, default 60] [target ...]
#
# Needs clang (etc/install-deps.sh installs it). Builds in build-fuzz/.
# Each target's corpus grows in build-fuzz/corpus/NAME (kept between
# runs); a crash leaves its input as build-fuzz/crash-NAME-* and fails
# the run. CI does not run this: its short smoke is the deterministic
# driver (meson test --suite fuzz) in the normal and the ASan build.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
dir=build-fuzz

if ! command -v clang >/dev/null; then
	echo "tests/fuzz.sh: clang is missing (etc/install-deps.sh installs it)" >&2
	exit 1
fi
if [ -d "$dir" ]; then
	CC=clang meson setup --reconfigure "$dir" -Dfuzzing=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
else
	CC=clang meson setup "$dir" -Dfuzzing=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
targets=("$@")
if [ ${#targets[@]} = 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		f=${f##*/fuzz_}
		targets+=("${f%.c}")
	done
fi
for t in "${targets[@]}"; do
	ninja -C "$dir" "tests/fuzz_$t" >/dev/null
done

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=0
for t in "${targets[@]}"; do
	mkdir -p "$dir/corpus/$t"
	echo "== fuzz_$t: ${secs}s"
	rc=0
	"$dir/tests/fuzz_$t" -max_total_time="$secs" -max_len=8208 -print_final_stats=1 \
		-artifact_prefix="$dir/crash-$t-" "$dir/corpus/$t" \
		>"$dir/fuzz_$t.log" 2>&1 || rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)|ERROR|SUMMARY' \
		"$dir/fuzz_$t.log" || true
	if [ "$rc" != 0 ]; then
		echo "fuzz_$t FAILED (exit $rc): $dir/fuzz_$t.log" >&2
		failed=1
	fi
done
exit $failed
