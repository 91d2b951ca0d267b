#!/usr/bin/env bash
# ci/wheels.sh - builds the four wheels, each on its own, installs them into a fresh venv
# from the wheel files alone and runs a 2-PE job with what got installed.
#
#   bash ci/wheels.sh
#
# 1. `pip wheel --no-deps packages/<name>` for shmem-native, shmem-core, shmem-torch and
#    shmem-tools, one at a time, each in pip's isolated build environment: a package
#    whose pyproject.toml forgets a build requirement fails here.
# 2. A new venv gets the third-party requirements that the wheels declare (cffi, ...,
#    from the package index) plus numpy, then the four packages with
#    `pip install --no-index --find-links <wheels>`: nothing of ours comes from anywhere
#    but the wheel files.
# 3. From a folder outside the repository, with no PYTHONPATH: `pip check`, the packages
#    import from the venv, `shmem-config --check` (its checks and a 2-PE self-test) and
#    `python -m shmem.run -n 2 examples/python/ring.py`.
#
# Settings (environment), besides those of ci/lib.sh:
#   WHEELS_DIR        working folder: wheels in dist/, the venv in venv/
#                     (default: a new temporary folder, removed at the end)
#   WHEELS_KEEP       a folder to copy the built wheels into (default: none)
#   WHEELS_ISOLATION  1: isolated builds (default); 0: build with the tools of the CI venv
#                     (--no-build-isolation; for machines without a package index)
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PACKAGE_NAMES=(shmem-native shmem-core shmem-torch shmem-tools)
WORK="${WHEELS_DIR:-}"
REMOVE_WORK=0
if [ -z "$WORK" ]; then
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/shmem-wheels.XXXXXX")"
    REMOVE_WORK=1
fi
DIST="$WORK/dist"
WHEEL_VENV="$WORK/venv"

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

step "build tools (venv $CI_VENV)"
ensure_system_packages
ensure_venv "${PIP_BUILD_PACKAGES[@]}" setuptools wheel

step "build the wheels into ${DIST}"
rm -rf "$DIST"
mkdir -p "$DIST"
for name in "${PACKAGE_NAMES[@]}"; do
    dir="$REPO_ROOT/packages/$name"
    before="$(ls "$DIST")"
    if [ "${WHEELS_ISOLATION:-1}" = 0 ]; then
        install_build_requirements "$dir"
        log "pip wheel $name (no build isolation)"
        "$VENV_PY" -m pip wheel -q --no-deps --no-build-isolation --wheel-dir "$DIST" "$dir"
    else
        log "pip wheel $name"
        "$VENV_PY" -m pip wheel -q --no-deps --wheel-dir "$DIST" "$dir"
    fi
    # Exactly one new wheel, named after the package.
    new="$(comm -13 <(printf '%s\n' "$before") <(ls "$DIST"))"
    if [ "$(printf '%s\n' "$new" | grep -c .)" -ne 1 ] || [[ "$new" != "${name//-/_}-"*.whl ]]; then
        echo "building $name gave: ${new:-nothing}" >&2
        exit 1
    fi
    log "  $new"
done

step "a fresh venv ($WHEEL_VENV)"
rm -rf "$WHEEL_VENV"
"$PYTHON" -m venv "$WHEEL_VENV"
WPY="$WHEEL_VENV/bin/python"

# The requirements the wheels declare (without extras), minus the four packages.
mapfile -t THIRD_PARTY < <("$WPY" - "$DIST" <<'PY'
import email, glob, re, sys, zipfile
ours = {"shmem-native", "shmem-core", "shmem-torch", "shmem-tools"}
reqs = set()
for path in glob.glob(f"{sys.argv[1]}/*.whl"):
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
step "third-party requirements: ${THIRD_PARTY[*]:-none} numpy"
"$WPY" -m pip install -q "${THIRD_PARTY[@]}" numpy

step "install the four packages from the wheels alone"
"$WPY" -m pip install -q --no-index --find-links "$DIST" "${PACKAGE_NAMES[@]}"
"$WPY" -m pip check

# Everything below runs outside the repository and without PYTHONPATH, so only what the
# wheels installed can be imported.
RUN_DIR="$WORK/run"
mkdir -p "$RUN_DIR"
wrun() { (cd "$RUN_DIR" && env -u PYTHONPATH -u ACLSHMEM_LIBRARY PATH="$WHEEL_VENV/bin:$PATH" "$@"); }

step "the packages import from the venv"
wrun "$WPY" - "$WHEEL_VENV" <<'PY'
import importlib, os, sys
venv = os.path.realpath(sys.argv[1])
for name in ("shmem_native", "shmem", "shmem.core", "shmem._pyshmem", "shmem_tools"):
    module = importlib.import_module(name)
    where = os.path.realpath(module.__file__)
    assert where.startswith(venv + os.sep), f"{name} comes from {where}, not from the venv"
import shmem_native, shmem.core
from shmem import _native
print("shmem-native", shmem_native.__version__, "shmem-core", __import__("shmem").__version__,
      "->", shmem.core.get_version(), "from", _native.library_path())
assert os.path.realpath(_native.library_path()).startswith(venv + os.sep)
PY

step "shmem-config --check (from the wheel of shmem-tools)"
wrun shmem-config --check

step "smoke test: python -m shmem.run -n 2 examples/python/ring.py"
wrun "$WPY" -m shmem.run -n 2 --timeout 120 "$REPO_ROOT/examples/python/ring.py"

if [ -n "${WHEELS_KEEP:-}" ]; then
    mkdir -p "$WHEELS_KEEP"
    cp "$DIST"/*.whl "$WHEELS_KEEP"/
    log "wheels copied to $WHEELS_KEEP"
fi
echo
echo "ci/wheels.sh: the four wheels built on their own, installed from the wheel files alone,"
echo "and ran a 2-PE job:"
ls -1 "$DIST"
