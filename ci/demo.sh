#!/usr/bin/env bash
# ci/demo.sh - sets up what is missing, builds libaclshmem and runs real 4-PE jobs:
# the C example packages/shmem-native/examples/ring.c (4 processes that join one job,
# put/get around a ring, store through peer pointers, do a strided put and a team
# barrier), then the OpenSHMEM ring examples/openshmem/ring.c built with the build
# tree's oshcc and started with its oshrun, then the same in Python:
# `python -m shmem.run -n 4 examples/python/ring.py`.
# Settings: see ci/lib.sh, plus DEMO_PES (default 4).
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

trap 'rc=$?; [ "$rc" -eq 0 ] || printf "\nci/demo.sh: FAILED in step \"%s\" (exit status %d)\n" "$CI_STEP" "$rc"' EXIT

PES="${DEMO_PES:-4}"

step "system packages"
ensure_system_packages

step "build tools (venv $CI_VENV)"
ensure_venv "${PIP_BUILD_PACKAGES[@]}"

step "configure $CI_BUILD_DIR"
meson_setup -Dexamples=true

step "build libaclshmem and the ring example"
meson_build packages/shmem-native/examples/ring

RING="$CI_BUILD_DIR/packages/shmem-native/examples/ring"
[ -x "$RING" ] || { echo "the example was not built: $RING is missing" >&2; exit 1; }

step "run: ${RING#"$REPO_ROOT"/} $PES"
echo "Starting $PES PEs (processes) on this machine; PE 0 makes the unique ID and pipes it to the others."
"$RING" "$PES"

step "build the OpenSHMEM example with the build tree's oshcc (aclshmemcc)"
meson_build packages/shmem-native/programs/aclshmemrun
PROGRAMS="$CI_BUILD_DIR/packages/shmem-native/programs"
OSH_RING="$CI_BUILD_DIR/examples-openshmem-ring"
"$PROGRAMS/aclshmemcc" examples/openshmem/ring.c -o "$OSH_RING"

step "run: oshrun -np $PES ./ring (aclshmemrun)"
echo "The same ring through the standard OpenSHMEM API (shmem.h), started by the C launcher."
"$PROGRAMS/aclshmemrun" -np "$PES" "$OSH_RING"

step "Python packages shmem-native and shmem-core (venv $CI_VENV)"
# Only what the Python ring needs (the build tools, shmem-core's own needs and NumPy), not
# ci/test.sh's whole list: torch and the documentation tools are no part of the demo.
ensure_venv "${PIP_BUILD_PACKAGES[@]}" setuptools wheel cffi numpy
install_packages "$REPO_ROOT/packages/shmem-native" "$REPO_ROOT/packages/shmem-core"

step "run: python -m shmem.run -n $PES examples/python/ring.py"
"$VENV_PY" -m shmem.run -n "$PES" examples/python/ring.py

echo
echo "demo: done. Three times, $PES processes joined one SHMEM job, each owning a symmetric"
echo "heap in shared memory, and every one checked its neighbours' writes (lines above):"
echo "in C (packages/shmem-native/examples/ring.c), in OpenSHMEM C built with oshcc and"
echo "started with oshrun (examples/openshmem/ring.c), then in Python (examples/python/ring.py)."
