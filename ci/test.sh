#!/usr/bin/env bash
# ci/test.sh - sets everything up and runs every test of the repository.
#
#   bash ci/test.sh
#
# On a fresh Debian machine (as root, or with sudo) it installs the missing system
# packages, makes the venv .venv-ci, builds libaclshmem with its C tests in build-ci,
# runs `meson test`, builds the C tests twice more and runs them with AddressSanitizer +
# UndefinedBehaviorSanitizer (build-ci-asan) and with ThreadSanitizer (build-ci-tsan),
# installs the Python packages (shmem-native first), builds the
# documentation (`sphinx-build -W`) and runs its examples (the doctest builder), runs the
# pytest tests of every package that has a tests/ folder, then those of tests/, and
# ci/wheels.sh (the four wheels, shmem-native repaired by auditwheel, installed
# with plain pip into fresh venvs, a 2-PE job from each), ci/debian.sh (the Debian packages
# of the C library: dpkg-buildpackage, lintian, dpkg --root, a 2-PE job), and finally ci/shmem4py.sh
# (shmem4py from the package index, built against this library in a fresh venv, its own
# tests at 1, 2 and 4 PEs).
# Exits non-zero if any step or any test fails.  Settings: see ci/lib.sh, plus
#   CI_TIMEOUT_MULTIPLIER   passed to `meson test --timeout-multiplier` (default 1)
#   CI_DOCS_DIR             where the documentation is built (default: $CI_BUILD_DIR/docs)
#   CI_SANITIZERS           which sanitizer runs to do: "asan tsan" (default), "asan", ""
#   CI_SANITIZER_TIMEOUT_MULTIPLIER  the same as CI_TIMEOUT_MULTIPLIER for them (default 3)
# The opt-in soak test (meson suite 'soak') is never run here: see docs/reliability.rst.
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

RESULTS_DIR="$CI_BUILD_DIR/ci-results"

on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "${CI_DONE:-0}" != 1 ]; then
        printf '\nci/test.sh: FAILED in step "%s" (exit status %d)\n' "$CI_STEP" "$rc"
    fi
}
trap on_exit EXIT

# --- set up -------------------------------------------------------------------------
step "system packages"
ensure_system_packages

step "Python venv ($CI_VENV)"
ensure_venv
"$VENV_PY" --version
meson --version | sed 's/^/meson /'

step "configure $CI_BUILD_DIR"
meson_setup -Dtests=true -Dexamples=true

step "build"
meson_build
start_failed_tests_log "$RESULTS_DIR/failed-tests.txt"

# --- C tests ------------------------------------------------------------------------
step "C tests (meson test)"
status=0
meson test -C "$CI_BUILD_DIR" --print-errorlogs --no-suite soak \
    --timeout-multiplier "${CI_TIMEOUT_MULTIPLIER:-1}" || status=$?
read -r p f s < <(count_results meson "$CI_BUILD_DIR/meson-logs/testlog.json")
record "meson test" "$status" "$p" "$f" "$s"

# --- C tests under the sanitizers ---------------------------------------------------
run_sanitizers "${CI_SANITIZERS-asan tsan}"

# --- Python packages ----------------------------------------------------------------
step "install the Python packages"
mapfile -t PACKAGE_DIRS < <(python_package_dirs)
install_packages "${PACKAGE_DIRS[@]}"

step "check the shmem-native installation"
(cd / && "$VENV_PY" -c '
import os, shmem_native as n
lib, inc = n.library_path(), n.include_dir()
assert os.path.isfile(lib), lib
assert os.path.isfile(os.path.join(inc, "aclshmem.h")), inc
assert os.path.isfile(os.path.join(n.pkgconfig_dir(), "aclshmem.pc")), n.pkgconfig_dir()
print("shmem_native", n.__version__, lib)
')

# --- documentation ----------------------------------------------------------------
# The site must build without a single warning; tests/test_docs.py then reads this HTML
# (SHMEM_DOCS_HTML) instead of building it again.  -E: always from scratch, so that a
# change of docs/_ext or of a docstring is never hidden by a cached page.
DOCS_DIR="${CI_DOCS_DIR:-$CI_BUILD_DIR/docs}"
step "documentation: sphinx-build -W -b html"
status=0
"$VENV_PY" -m sphinx -E -W --keep-going -q -b html docs "$DOCS_DIR/html" || status=$?
record "sphinx-build html" "$status" "$((status == 0))" "$((status != 0))" 0
export SHMEM_DOCS_HTML="$DOCS_DIR/html"

step "documentation: the examples (sphinx-build -b doctest)"
status=0
rm -f "$DOCS_DIR/doctest/output.txt"
"$VENV_PY" -m sphinx -E -q -b doctest docs "$DOCS_DIR/doctest" || status=$?
read -r p f s < <(count_results doctest "$DOCS_DIR/doctest/output.txt")
record "sphinx doctest" "$status" "$p" "$f" "$s"

# has_pytest_files DIR: true when DIR holds test_*.py or *_test.py files.
has_pytest_files() {
    [ -d "$1" ] && [ -n "$(find "$1" -type f \( -name 'test_*.py' -o -name '*_test.py' \) -print -quit)" ]
}

mkdir -p "$RESULTS_DIR"
TEST_DIRS=()
for dir in "${PACKAGE_DIRS[@]}"; do
    TEST_DIRS+=("$dir/tests")
done
TEST_DIRS+=("$REPO_ROOT/tests")
# tests/multinode runs mn_suite and libaclshmem (with its UCX plug-in) from this build.
export SHMEM_NATIVE_BUILD_DIR="$CI_BUILD_DIR"

for tests_dir in "${TEST_DIRS[@]}"; do
    rel="${tests_dir#"$REPO_ROOT"/}"
    if ! has_pytest_files "$tests_dir"; then
        log "$rel: no pytest files, skipped"
        continue
    fi
    step "pytest $rel"
    xml="$RESULTS_DIR/pytest-$(echo "$rel" | tr '/' '_').xml"
    rm -f "$xml"
    status=0
    "$VENV_PY" -m pytest -q -rs "$tests_dir" --junitxml="$xml" || status=$?
    read -r p f s < <(count_results junit "$xml")
    record "pytest $rel" "$status" "$p" "$f" "$s"
done

# The UCX plug-in under AddressSanitizer + UBSan: the multi-node C suite again, with the
# sanitized build's library, plug-in and mn_suite.
if [[ " ${CI_SANITIZERS-asan tsan} " == *" asan "* ]]; then
    step "pytest tests/multinode/test_multinode.py (asan+ubsan build)"
    xml="$RESULTS_DIR/pytest-multinode-asan.xml"
    rm -f "$xml"
    status=0
    SHMEM_NATIVE_BUILD_DIR="$CI_ASAN_BUILD_DIR" with_sanitizer_options \
        "$VENV_PY" -m pytest -q -rs "$REPO_ROOT/tests/multinode/test_multinode.py" --junitxml="$xml" || status=$?
    read -r p f s < <(count_results junit "$xml")
    record "pytest multinode (asan+ubsan)" "$status" "$p" "$f" "$s"
fi

# --- packaging ----------------------------------------------------------------------
step "wheels: ci/wheels.sh"
status=0
bash "$REPO_ROOT/ci/wheels.sh" || status=$?
record "ci/wheels.sh" "$status" "$((status == 0))" "$((status != 0))" 0

step "Debian packages: ci/debian.sh"
status=0
bash "$REPO_ROOT/ci/debian.sh" || status=$?
record "ci/debian.sh" "$status" "$((status == 0))" "$((status != 0))" 0

# --- a client no one here wrote -----------------------------------------------------
# shmem4py's own tests, counted once per job size (the script writes "P F S" when they ran).
step "shmem4py: ci/shmem4py.sh"
status=0
bash "$REPO_ROOT/ci/shmem4py.sh" || status=$?
p=0 f=0 s=0
[ ! -f "$CI_BUILD_DIR/shmem4py/counts" ] || read -r p f s <"$CI_BUILD_DIR/shmem4py/counts"
record "ci/shmem4py.sh" "$status" "$p" "$f" "$s"

# --- summary ------------------------------------------------------------------------
CI_DONE=1
print_summary
