#!/bin/sh
# Builds the Debian package: etc/build-deb.sh [OUTDIR]  (default: deb-out)
# A copy of the tree gets etc/debian as debian/ (the repository keeps no
# top-level debian/) and a changelog for meson.build's version; then
# dpkg-buildpackage -us -uc -b, the .deb to OUTDIR, and lintian on it:
# errors fail the build, warnings are shown. The last line printed is the
# path of the .deb. Needs the Build-Depends of etc/debian/control
# (etc/install-deps.sh installs them) and lintian.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/deb-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
[ -n "$version" ] || { echo "build-deb.sh: no version in meson.build" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/twinftpd-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/twinftpd-$version"
mkdir "$tree"
# The sources as they are in the working tree (edits included), without
# build directories, benchmark output or .git.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf -) | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude=./.git --exclude='./build*' --exclude=./bench/out \
		--exclude=./deb-out -cf - . | tar -C "$tree" -xf -
fi
cp -a "$tree/etc/debian" "$tree/debian"

# Dated by the last commit, so a rebuild of one tree is the same package.
when=$(git -C "$src" log -1 --format=%cD 2>/dev/null || true)
[ -n "$when" ] || when=$(date -R)
maint=$(sed -n 's/^Maintainer: //p' "$tree/debian/control")
cat >"$tree/debian/changelog" <<CHANGELOG
twinftpd ($version) unstable; urgency=medium

  * Built from the twinftpd tree (version $version in meson.build).

 -- $maint  $when
CHANGELOG

(cd "$tree" && dpkg-buildpackage -us -uc -b)

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb="twinftpd_${version}_${arch}.deb"
cp "$tmp/$deb" "$out/"
# --fail-on error is lintian's default, named so it is plain.
lintian --fail-on error\
	"$out/$deb"
echo "$out/$deb"
