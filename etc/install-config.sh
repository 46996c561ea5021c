#!/bin/sh
# meson install script: the example configuration goes to /etc only when
# no configuration is there yet (an operator's file is never overwritten).
# $1: the example, $2: where it goes (DESTDIR is prepended, as meson does).
set -eu
dest="${DESTDIR:-}$2"
if [ -e "$dest" ]; then
	echo "keeping the existing $dest (example not installed)"
else
	install -D -m 0644 "$1" "$dest"
	echo "installed the example configuration as $dest"
fi
