# shellcheck shell=bash
# ci/lib.sh - what ci/test.sh and ci/demo.sh share: installing the system packages and
# the Python tools, and configuring / building the meson build directory.
#
# Source it; it defines functions and variables and runs nothing by itself.
# Every function is idempotent and quick when there is nothing to do, so the scripts
# can be run again and again on the same machine.
#
# Settings (environment):
#   PYTHON          interpreter that creates the venv        (default: python3)
#   CI_VENV         the venv                                 (default: <repo>/.venv-ci)
#   CI_BUILD_DIR    the meson build directory                (default: <repo>/build-ci)
#   CI_JOBS         parallel compile jobs                    (default: 2)
#   CI_MESON_ARGS   extra arguments for `meson setup`        (default: none)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CI_VENV="${CI_VENV:-$REPO_ROOT/.venv-ci}"
CI_BUILD_DIR="${CI_BUILD_DIR:-$REPO_ROOT/build-ci}"
CI_JOBS="${CI_JOBS:-2}"

# Debian packages the build and the tests need.  Later work adds here (e.g. tshark,
# libucx-dev); a package that is already installed costs nothing.
APT_PACKAGES=(build-essential pkg-config libssl-dev)

# Python packages of the venv: the build tools, what the tests import and what builds
# the documentation (docs/requirements.txt).
PIP_BUILD_PACKAGES=(meson ninja meson-python)
PIP_PACKAGES=("${PIP_BUILD_PACKAGES[@]}" setuptools wheel cffi pytest numpy matplotlib "torch==2.13.0"
    "sphinx>=8,<10" furo sphinx-argparse)

CI_STEP=""

log() { printf '==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }

# step NAME: announces a step; the EXIT handlers of the scripts name it on failure.
step() {
    CI_STEP="$*"
    printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

# Runs a command as root (directly, or through sudo when we are not root).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "need root to run: $*" >&2
        return 1
    fi
}

# Installs the missing APT_PACKAGES (plus python3-venv when the interpreter lacks venv).
ensure_system_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        warn "not a Debian system: make sure these are installed: ${APT_PACKAGES[*]}"
        return 0
    fi
    local missing=() pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        missing+=(python3-venv)
    fi
    if [ "${#missing[@]}" -eq 0 ]; then
        log "system packages already installed: ${APT_PACKAGES[*]}"
        return 0
    fi
    log "installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q || { sleep 5; as_root apt-get update -q; }
    as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# ensure_venv [PACKAGE...]: creates the venv if needed, installs the packages into it
# (PIP_PACKAGES by default) and puts its bin/ first on PATH.  Sets VENV_PY.
ensure_venv() {
    local pkgs=("$@")
    [ "${#pkgs[@]}" -gt 0 ] || pkgs=("${PIP_PACKAGES[@]}")
    VENV_PY="$CI_VENV/bin/python"
    if ! "$VENV_PY" -c 'import sys' >/dev/null 2>&1; then
        log "creating the venv $CI_VENV"
        rm -rf "$CI_VENV"
        "$PYTHON" -m venv "$CI_VENV"
    fi
    export PATH="$CI_VENV/bin:$PATH"
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    # Already-satisfied requirements are not looked up again: quick on a second run.
    log "pip: ${pkgs[*]}"
    "$VENV_PY" -m pip install -q "${pkgs[@]}"
}

# meson_setup [ARG...]: configures CI_BUILD_DIR from the repository root (reconfigures
# an existing one; wipes and starts again if that fails).
meson_setup() {
    # shellcheck disable=SC2206
    local args=("$@" ${CI_MESON_ARGS:-})
    if [ -f "$CI_BUILD_DIR/build.ninja" ]; then
        if meson setup --reconfigure "${args[@]}" "$CI_BUILD_DIR" "$REPO_ROOT"; then
            return 0
        fi
        warn "reconfiguring $CI_BUILD_DIR failed; starting it again"
    fi
    rm -rf "$CI_BUILD_DIR"
    meson setup "${args[@]}" "$CI_BUILD_DIR" "$REPO_ROOT"
}

# meson_build [TARGET...]: builds everything, or the named targets.
meson_build() {
    meson compile -C "$CI_BUILD_DIR" -j "$CI_JOBS" "$@"
}

# A fingerprint of a folder's files (names and contents), to skip reinstalling a
# package whose sources did not change.
tree_fingerprint() {
    (
        cd "$1" &&
            find . -type f ! -path '*/__pycache__/*' ! -path '*/.mesonpy-*' ! -path '*/.pytest_cache/*' \
                ! -path '*.egg-info/*' ! -path './build/*' -print0 |
            LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
    )
}

# Installs every build requirement named in a package's pyproject.toml into the venv,
# so that the package itself can be built without build isolation (no fresh download
# of its build backend on every run).
install_build_requirements() {
    local reqs
    reqs="$("$VENV_PY" - "$1/pyproject.toml" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    data = tomllib.load(f)
print("\n".join(data.get("build-system", {}).get("requires", [])))
PY
)"
    if [ -n "$reqs" ]; then
        local list=()
        mapfile -t list <<<"$reqs"
        "$VENV_PY" -m pip install -q "${list[@]}"
    fi
}

# install_packages DIR...: pip-installs the local packages into the venv, in one go (so
# that they satisfy one another's dependencies), skipping any whose files did not change
# since the last install.
install_packages() {
    local todo=() dir name stamp fp
    for dir in "$@"; do
        name="$(basename "$dir")"
        stamp="$CI_VENV/.installed-$name"
        fp="$(tree_fingerprint "$dir")"
        if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fp" ]; then
            log "$name: unchanged since its last install, kept"
            continue
        fi
        install_build_requirements "$dir"
        todo+=("$dir")
    done
    [ "${#todo[@]}" -gt 0 ] || return 0
    log "pip install ${todo[*]#"$REPO_ROOT"/}"
    "$VENV_PY" -m pip install -q --no-build-isolation "${todo[@]}"
    for dir in "${todo[@]}"; do
        tree_fingerprint "$dir" >"$CI_VENV/.installed-$(basename "$dir")"
    done
}

# The local Python packages in install order: shmem-native, shmem-core, then the rest.
python_package_dirs() {
    local dir name
    for name in shmem-native shmem-core; do
        [ -f "$REPO_ROOT/packages/$name/pyproject.toml" ] && echo "$REPO_ROOT/packages/$name"
    done
    for dir in "$REPO_ROOT"/packages/*/; do
        dir="${dir%/}"
        name="$(basename "$dir")"
        case "$name" in shmem-native | shmem-core) continue ;; esac
        [ -f "$dir/pyproject.toml" ] && echo "$dir"
    done
    return 0
}
