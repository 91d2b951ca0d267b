#!/usr/bin/env bash
# ci/debian.sh - builds the Debian packages of the C library (packaging/debian) and tries
# them: dpkg-buildpackage -us -uc -b in a copy of the repository, lintian on the packages,
# an install into an empty root with dpkg --root, then a program built with
# `pkg-config --cflags --libs aclshmem` against that root and a 2-PE job started by its
# aclshmemrun.  Needs root (or sudo) for the Debian tools it installs (debhelper, lintian).
# About a minute (the library and its manual pages are built once more, in the package).
# Settings: see ci/lib.sh; DEBIAN_DIR, the work folder (default: $CI_BUILD_DIR/debian).
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"
trap 'rc=$?; [ "$rc" -eq 0 ] || printf "\nci/debian.sh: FAILED in step \"%s\" (exit status %d)\n" "$CI_STEP" "$rc"' EXIT

WORK="${DEBIAN_DIR:-$CI_BUILD_DIR/debian}"
VERSION="$(cat packages/shmem-native/VERSION)"

step "Debian tools"
APT_PACKAGES=(build-essential debhelper lintian pkg-config libssl-dev libucx-dev)
ensure_system_packages
MULTIARCH="$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
# Debian 12's meson is 1.0 (the build needs 1.1); the venv's meson, and its Sphinx for the
# manual pages, stand in for the Build-Depends meson and python3-sphinx (hence -d below).
ensure_venv "${PIP_BUILD_PACKAGES[@]}" "sphinx>=8,<10" sphinx-argparse

step "the source tree ($WORK)"
grep -q "^aclshmem ($VERSION-" packaging/debian/changelog ||
    { echo "packaging/debian/changelog does not start with version $VERSION" >&2; exit 1; }
rm -rf "$WORK"
SRC="$WORK/aclshmem-$VERSION"
mkdir -p "$SRC"
# The files git knows (a deleted file that is still tracked is not there).
git ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$SRC"
rm -rf "$SRC/packaging"
cp -r packaging/debian "$SRC/debian"

step "dpkg-buildpackage -us -uc -b"
(cd "$SRC" && DEB_BUILD_OPTIONS="parallel=$CI_JOBS" dpkg-buildpackage -us -uc -b -d)
ls -l "$WORK"/*.deb

step "lintian"
lintian --fail-on error,warning --suppress-tags-from-file packaging/debian/lintian-expected \
    "$WORK"/aclshmem_*.changes

step "install into an empty root (dpkg --root)"
ROOT="$WORK/root"
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
touch "$ROOT/var/lib/dpkg/status" "$ROOT/var/lib/dpkg/available"
# The root has no libc, OpenSSL or UCX packages: their dependencies are the host's.
dpkg --root="$ROOT" --force-depends --force-script-chrootless --log=/dev/null -i "$WORK"/*.deb
dpkg --root="$ROOT" -l | grep '^ii'

step "build a program with pkg-config against the root, run 2 PEs"
export PKG_CONFIG_SYSROOT_DIR="$ROOT" PKG_CONFIG_LIBDIR="$ROOT/usr/lib/$MULTIARCH/pkgconfig"
FLAGS="$(pkg-config --cflags --libs aclshmem)"
echo "pkg-config --cflags --libs aclshmem: $FLAGS"
[[ "$FLAGS" == *"-I$ROOT/usr/include"* && "$FLAGS" == *"-laclshmem"* ]] ||
    { echo "the flags do not name the root's headers and library" >&2; exit 1; }
# shellcheck disable=SC2086
cc examples/openshmem/ring.c $FLAGS -o "$WORK/ring"
# The root's library and no other (a /usr/local one, say): the system loader, told where.
export LD_LIBRARY_PATH="$ROOT/usr/lib/$MULTIARCH"
# (ldd's whole output first: with pipefail, `ldd | grep -q` fails whenever grep stops
# reading at its match before the loader has written its last line, and ldd dies of SIGPIPE.)
LOADED="$(ldd "$WORK/ring")"
[[ "$LOADED" == *"libaclshmem.so.1 => $ROOT/usr/lib/$MULTIARCH/libaclshmem.so.1"* ]] ||
    { echo "$LOADED"; echo "the program does not load the root's libaclshmem" >&2; exit 1; }
"$ROOT/usr/bin/aclshmemrun" -np 2 "$WORK/ring" | tee "$WORK/ring.out"
[ "$(grep -c "of 2: PE . sent me" "$WORK/ring.out")" = 2 ] || { echo "not every PE finished" >&2; exit 1; }
echo "debian: the packages built, passed lintian, installed into $ROOT and ran a 2-PE job"
