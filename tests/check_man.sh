#!/bin/sh
# Keeps the OPTIONS section of twinftpd.conf(5) equal to what the binary
# generates from config_table.h, so documented defaults cannot drift from
# the code's.
#
#   check_man.sh BINARY MANPAGE           exit 1 with a diff when they differ
#   check_man.sh --update BINARY MANPAGE  rewrite the section in MANPAGE
#
# The section is everything strictly between the two marker lines.
#
# It also keeps the pages readable in an 80-column terminal: every source
# line of the generated section is shorter than 80 columns, and every page
# in MANPAGE's directory, rendered by man(1) at MANWIDTH=80, has no line
# longer than 80 columns (skipped where man(1) is not installed). Each of
# those pages carries a date (YYYY-MM-DD) in its .TH line.
set -eu

BEGIN_MARK='.\" BEGIN GENERATED OPTIONS'
END_MARK='.\" END GENERATED OPTIONS'
MAX_COLUMNS=80

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

# Source columns: the generator wraps the doc text; a line it cannot
# wrap (a word of 80 columns) is a doc string to reword.
long=$(awk -v max="$MAX_COLUMNS" 'length >= max { printf "%d: %s\n", NR, $0 }' "$tmp/generated")
if [ -n "$long" ]; then
	echo "$0: $bin --dump-man-options writes lines of $MAX_COLUMNS columns or more:" >&2
	echo "$long" >&2
	exit 1
fi

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

status=0
mandir=$(dirname "$man")
for page in "$mandir"/*.[1-8]; do
	if ! grep -q -E '^\.TH [^ ]+ [1-8] "[0-9]{4}-[0-9]{2}-[0-9]{2}"' "$page"; then
		echo "$0: $page: the .TH line needs a date, \"YYYY-MM-DD\"" >&2
		status=1
	fi
	command -v man > /dev/null 2>&1 || continue
	# The C locale renders ASCII: one byte is one column for awk.
	if ! LC_ALL=C MANWIDTH=$MAX_COLUMNS man -l "$page" > "$tmp/rendered" 2> "$tmp/man_err"; then
		echo "$0: man -l $page failed:" >&2
		cat "$tmp/man_err" >&2
		status=1
		continue
	fi
	long=$(awk -v max="$MAX_COLUMNS" 'length > max { printf "%d: %s\n", NR, $0 }' "$tmp/rendered")
	if [ -n "$long" ]; then
		echo "$0: $page rendered at MANWIDTH=$MAX_COLUMNS has longer lines:" >&2
		echo "$long" >&2
		status=1
	fi
done
command -v man > /dev/null 2>&1 ||
	echo "$0: man(1) not installed: rendered widths not checked"

if ! cmp -s "$tmp/current" "$tmp/generated"; then
	echo "$man: options section differs from '$bin --dump-man-options'" >&2
	echo "(run: $0 --update $bin $man)" >&2
	diff -u "$tmp/current" "$tmp/generated" | sed "1s|.*|--- $man|;2s|.*|+++ generated|" >&2 || true
	exit 1
fi
[ "$status" = 0 ] || exit 1
echo "$man: options section matches the binary"
