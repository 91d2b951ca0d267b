#!/usr/bin/env bash
# ci/test.sh - sets everything up and runs every test of the repository.
#
#   bash ci/test.sh
#
# On a fresh Debian machine (as root, or with sudo) it installs the missing system
# packages, makes the venv .venv-ci, builds libaclshmem with its C tests in build-ci,
# runs `meson test`, installs the Python packages (shmem-native first), builds the
# documentation (`sphinx-build -W`) and runs its examples (the doctest builder), runs the
# pytest tests of every package that has a tests/ folder, then those of tests/, and
# finally ci/wheels.sh (the four wheels, installed from the wheels alone, run 2 PEs).
# Exits non-zero if any step or any test fails.  Settings: see ci/lib.sh, plus
#   CI_TIMEOUT_MULTIPLIER   passed to `meson test --timeout-multiplier` (default 1)
#   CI_DOCS_DIR             where the documentation is built (default: $CI_BUILD_DIR/docs)
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PASSED=0
FAILED=0
SKIPPED=0
FAILED_SUITES=()
RESULTS_DIR="$CI_BUILD_DIR/ci-results"

on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "${CI_DONE:-0}" != 1 ]; then
        printf '\nci/test.sh: FAILED in step "%s" (exit status %d)\n' "$CI_STEP" "$rc"
    fi
}
trap on_exit EXIT

# Adds the counts of a finished suite: count_results KIND FILE
#   KIND meson: FILE is meson's testlog.json; KIND junit: FILE is a pytest junit XML;
#   KIND doctest: FILE is the output.txt of sphinx-build -b doctest.
# Prints "P F S" (passed, failed, skipped).
count_results() {
    "$VENV_PY" - "$1" "$2" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
kind, path = sys.argv[1], sys.argv[2]
p = f = s = 0
try:
    if kind == "meson":
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                result = json.loads(line).get("result", "")
                if result in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif result == "SKIP":
                    s += 1
                else:
                    f += 1
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
except (OSError, ValueError, AttributeError, ET.ParseError):
    pass
print(p, f, s)
PY
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

# --- C tests ------------------------------------------------------------------------
step "C tests (meson test)"
status=0
meson test -C "$CI_BUILD_DIR" --print-errorlogs \
    --timeout-multiplier "${CI_TIMEOUT_MULTIPLIER:-1}" || status=$?
read -r p f s < <(count_results meson "$CI_BUILD_DIR/meson-logs/testlog.json")
record "meson test" "$status" "$p" "$f" "$s"

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
    "$VENV_PY" -m pytest -q "$tests_dir" --junitxml="$xml" || status=$?
    read -r p f s < <(count_results junit "$xml")
    record "pytest $rel" "$status" "$p" "$f" "$s"
done

# --- packaging ----------------------------------------------------------------------
step "wheels: ci/wheels.sh"
status=0
bash "$REPO_ROOT/ci/wheels.sh" || status=$?
record "ci/wheels.sh" "$status" "$((status == 0))" "$((status != 0))" 0

# --- summary ------------------------------------------------------------------------
CI_DONE=1
echo
if [ "${#FAILED_SUITES[@]}" -gt 0 ]; then
    echo "ci/test.sh: failing suites: ${FAILED_SUITES[*]}"
fi
printf 'summary: %d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"
[ "${#FAILED_SUITES[@]}" -eq 0 ]
