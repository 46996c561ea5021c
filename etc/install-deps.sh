#!/bin/sh
# Installs what building, running and testing twinftpd needs (Debian 12).
# Safe to run again: apt-get only installs what is missing.
set -eu
PKGS="meson ninja-build gcc pkg-config libcap-dev libseccomp-dev libpam0g-dev \
libssl-dev libpam-modules python3 python3-pytest lftp curl \
libpam-wrapper libnss-wrapper iproute2 procps openssl python3-cryptography \
vsftpd fail2ban"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi
