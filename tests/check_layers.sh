#!/bin/sh
# The layers of the product code and what each may include (README, "A
# short tour"). A dependency runs one way only:
#
#   src/common/   util, log, config, runtime facts: knows no role
#   src/proto/    parsers and formatters of network bytes      -> common
#   sandbox/      credentials, namespaces, seccomp policies     -> common
#   privsep/      IPC, the session monitor, authentication      -> common, sandbox
#   src/*.c       the roles: listener, session, worker, data    -> all of the above
#
# Headers are included by path ("privsep/ipc.h") from one include
# directory, so the layer of every include is visible in its line. This
# fails on an include that runs upward or sideways, or names no path.
# Usage: check_layers.sh [source-root]
cd "${1:-$(dirname "$0")/..}" || exit 2

allowed() {
	case $1 in
	src/common/*)	echo "src/common/" ;;
	src/proto/*)	echo "src/common/ src/proto/" ;;
	sandbox/*)	echo "src/common/ sandbox/" ;;
	privsep/*)	echo "src/common/ sandbox/ privsep/" ;;
	src/*)		echo "src/common/ src/proto/ sandbox/ privsep/ src/" ;;
	esac
}

bad=0
files=$(find src privsep sandbox -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "check_layers: no sources found" >&2; exit 2; }
for f in $files; do
	ok=$(allowed "$f")
	# shellcheck disable=SC2013
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		[ "$inc" = tw_build.h ] && continue	# generated build facts
		if [ ! -f "$inc" ]; then
			echo "$f: #include \"$inc\" does not name a file by its path from the top"
			bad=$((bad + 1))
			continue
		fi
		hit=0
		for dir in $ok; do
			case $inc in "$dir"*) hit=1 ;; esac
		done
		if [ "$hit" = 0 ]; then
			echo "$f: #include \"$inc\" runs against the layers (may include: $ok)"
			bad=$((bad + 1))
		fi
	done
done
if [ "$bad" != 0 ]; then
	echo "check_layers: $bad include(s) against the layers" >&2
	exit 1
fi
echo "check_layers: every include follows the layers"
