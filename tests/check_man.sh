#!/bin/sh
# Keeps the OPTIONS section of twinftpd.conf(5) equal to what the binary
# generates from config_table.h, so documented defaults cannot drift from
# the code's.
#
#   check_man.sh BINARY MANPAGE           exit 1 with a diff when they differ
#   check_man.sh --update BINARY MANPAGE  rewrite the section in MANPAGE
#
# The section is everything strictly between the two marker lines.
set -eu

BEGIN_MARK='.\" BEGIN GENERATED OPTIONS'
END_MARK='.\" END GENERATED OPTIONS'

usage() {
	echo "usage: $0 [--update] TWINFTPD_BINARY MANPAGE" >&2
	exit 2
}

update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
[ $# -eq 2 ] || usage
bin=$1
man=$2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

"$bin" --dump-man-options > "$tmp/generated" || {
	echo "$0: $bin --dump-man-options failed" >&2
	exit 1
}

# Both markers exactly once, BEGIN before END; anything else is a broken
# page that no diff would explain.
begins=$(grep -c -x -F -e "$BEGIN_MARK" "$man" || true)
ends=$(grep -c -x -F -e "$END_MARK" "$man" || true)
if [ "$begins" != 1 ] || [ "$ends" != 1 ]; then
	echo "$0: $man needs exactly one '$BEGIN_MARK' and one '$END_MARK' line" >&2
	exit 1
fi
b=$(grep -n -x -F -e "$BEGIN_MARK" "$man" | cut -d: -f1)
e=$(grep -n -x -F -e "$END_MARK" "$man" | cut -d: -f1)
if [ "$b" -ge "$e" ]; then
	echo "$0: $man: '$END_MARK' comes before '$BEGIN_MARK'" >&2
	exit 1
fi

sed -n "$((b + 1)),$((e - 1))p" "$man" > "$tmp/current"

if [ "$update" = 1 ]; then
	{
		sed -n "1,${b}p" "$man"
		cat "$tmp/generated"
		sed -n "${e},\$p" "$man"
	} > "$tmp/new"
	if cmp -s "$tmp/new" "$man"; then
		echo "$man: options section already up to date"
	else
		# Overwrite in place: keeps the file's owner, mode and links.
		cat "$tmp/new" > "$man"
		echo "$man: options section regenerated"
	fi
	exit 0
fi

if ! cmp -s "$tmp/current" "$tmp/generated"; then
	echo "$man: options section differs from '$bin --dump-man-options'" >&2
	echo "(run: $0 --update $bin $man)" >&2
	diff -u "$tmp/current" "$tmp/generated" | sed "1s|.*|--- $man|;2s|.*|+++ generated|" >&2 || true
	exit 1
fi
echo "$man: options section matches the binary"
