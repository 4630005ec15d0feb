#!/usr/bin/env bash
# Install the C library: the header, the static and the shared library, and a pkg-config
# file (bloomwire.pc), as `make install` would.
#
#   capi/install.sh [PREFIX]      (default /usr/local)
#
# Environment: DESTDIR (staged installs, as make's), PROFILE (release by default; debug
# for a quick check). Then: cc app.c $(pkg-config --cflags --libs bloomwire), or
# `pkg-config --static` to link libbloomwire_capi.a.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}
profile=${PROFILE:-release}
if [ "$profile" = release ]; then
    cargo build --release -p bloomwire-capi
else
    cargo build -p bloomwire-capi
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' capi/Cargo.toml | head -n 1)
dest=${DESTDIR:-}$prefix
install -d "$dest/include" "$dest/lib/pkgconfig"
install -m 644 capi/include/bloomwire.h "$dest/include/bloomwire.h"
install -m 644 "target/$profile/libbloomwire_capi.a" "$dest/lib/libbloomwire_capi.a"
install -m 755 "target/$profile/libbloomwire_capi.so" "$dest/lib/libbloomwire_capi.so"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" capi/bloomwire.pc.in \
    >"$dest/lib/pkgconfig/bloomwire.pc"
echo "installed bloomwire $version ($profile) in $dest: include/bloomwire.h," \
    "lib/libbloomwire_capi.{a,so}, lib/pkgconfig/bloomwire.pc"
