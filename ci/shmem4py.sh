#!/usr/bin/env bash
# ci/shmem4py.sh - shmem4py, the OpenSHMEM bindings for Python that no one here wrote, builds
# against this library and passes its own test suite at 1, 2 and 4 PEs.
#
#   bash ci/shmem4py.sh
#
# 1. A fresh venv (<CI_BUILD_DIR>/shmem4py/venv): `pip install ./packages/shmem-native
#    ./packages/shmem-core`, as docs/install.rst says; its bin/ (aclshmemcc, oshrun) first on
#    PATH, as an activated venv has it.
# 2. shmem4py from the package index, built the way docs/guides/openshmem.rst ("Python:
#    shmem4py") tells a user: OSHCC=aclshmemcc CPPFLAGS="-include aclshmem/shmem4py.h" pip
#    install --no-binary shmem4py --no-cache-dir shmem4py==<version>, after numpy<2 (shmem4py
#    1.0.0 and its tests predate numpy 2).  Its sdist is fetched again (pip download) for the
#    test/ folder that its wheel leaves out.  Nothing of it enters the repository.
# 3. Its tests, as its own coverage script runs them (python -m unittest discover -s test),
#    under oshrun at 1, 2 and 4 PEs, from the unpacked sdist.  A run passes when every PE ran
#    the same number of tests and reported OK; a test that fails or errs on any PE fails it.
#
# Exits non-zero on any failure.  Prints one line per run and, last, "shmem4py: P passed,
# F failed, S skipped" (tests counted once per run, a test failed if it failed on any PE),
# also written to <CI_BUILD_DIR>/shmem4py/counts as "P F S" for ci/test.sh.
# Settings (environment), besides those of ci/lib.sh (CI_BUILD_DIR, PYTHON):
#   SHMEM4PY_VERSION   the release to test (default 1.0.0, the one aclshmem/shmem4py.h names)
#   SHMEM4PY_PES       the job sizes (default "1 2 4")
#   SHMEM4PY_TIMEOUT   seconds for one run of the suite (default 300)
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

VERSION="${SHMEM4PY_VERSION:-1.0.0}"
PES_LIST="${SHMEM4PY_PES:-1 2 4}"
RUN_TIMEOUT="${SHMEM4PY_TIMEOUT:-300}"
WORK="$CI_BUILD_DIR/shmem4py"
VENV="$WORK/venv"
PY="$VENV/bin/python"
STARTED=$SECONDS

trap 'rc=$?; [ "$rc" -eq 0 ] || printf "\nci/shmem4py.sh: FAILED in step \"%s\" (exit status %d)\n" "$CI_STEP" "$rc"' EXIT

step "fresh venv $VENV with shmem-native and shmem-core"
rm -rf "$WORK"
mkdir -p "$WORK"
"$PYTHON" -m venv "$VENV"
export PATH="$VENV/bin:$PATH"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$PY" -m pip install -q "$REPO_ROOT/packages/shmem-native" "$REPO_ROOT/packages/shmem-core"
log "aclshmemcc: $(command -v aclshmemcc); oshrun: $(command -v oshrun)"

step "pip install shmem4py==$VERSION against aclshmemcc"
"$PY" -m pip install -q "numpy<2"
OSHCC=aclshmemcc CPPFLAGS="-include aclshmem/shmem4py.h" \
    "$PY" -m pip install -q --no-binary shmem4py --no-cache-dir "shmem4py==$VERSION"
# The module must be linked with this venv's libaclshmem (not any other libshmem or oshmem).
(cd "$WORK" && "$PY" - <<'PY'
import shmem_native, shmem4py.api as api, os
maps = open("/proc/self/maps").read()
lib = os.path.realpath(shmem_native.library_path())
assert lib in maps, f"shmem4py did not load {lib}"
print("shmem4py", api.__file__, "uses", lib)
PY
)

step "the sdist's test folder"
"$PY" -m pip download -q --no-deps --no-binary :all: "shmem4py==$VERSION" -d "$WORK/sdist"
tar -xzf "$WORK/sdist/shmem4py-$VERSION.tar.gz" -C "$WORK"
SUITE_DIR="$WORK/shmem4py-$VERSION"
[ -d "$SUITE_DIR/test" ] || { echo "no test/ folder in shmem4py $VERSION's sdist" >&2; exit 1; }

# summarise LOG NPES: reads the "[PE i] ..." lines of one unittest run on NPES PEs and prints
# "P F S" (tests of PE 0 that passed everywhere, failed somewhere, were skipped), or fails
# with the reason when a PE did not report.
summarise() {
    "$PY" - "$1" "$2" <<'PY'
import re, sys
path, npes = sys.argv[1], int(sys.argv[2])
ran, verdict, failed_names = {}, {}, set()
for line in open(path, encoding="utf-8", errors="replace"):
    m = re.match(r"\[PE (\d+)\] (.*)", line.rstrip("\n"))
    if not m:
        continue
    pe, text = int(m.group(1)), m.group(2)
    if r := re.match(r"Ran (\d+) tests?", text):
        ran[pe] = int(r.group(1))
    elif re.match(r"(OK|FAILED)\b", text):
        verdict[pe] = text
    elif f := re.match(r"(FAIL|ERROR): (\S+ \([^)]*\))", text):
        failed_names.add(f.group(2))
missing = [pe for pe in range(npes) if pe not in ran or pe not in verdict]
if missing:
    sys.exit(f"PEs {missing} did not finish the suite")
if len(set(ran.values())) != 1:
    sys.exit(f"the PEs ran different numbers of tests: {ran}")
def count(key, text):
    m = re.search(key + r"=(\d+)", text)
    return int(m.group(1)) if m else 0
total = ran[0]
bad = max(count("failures", v) + count("errors", v) for v in verdict.values())
bad = max(bad, len(failed_names))
skipped = count("skipped", verdict[0])
print(total - bad - skipped, bad, skipped)
PY
}

passed=0 failed=0 skipped=0 bad_runs=()
for npes in $PES_LIST; do
    step "shmem4py's tests on $npes PE(s): oshrun -np $npes python -m unittest discover -s test"
    log_file="$WORK/test-$npes.log"
    status=0
    (cd "$SUITE_DIR" && timeout "$RUN_TIMEOUT" oshrun -np "$npes" "$PY" -m unittest discover -s test) \
        >"$log_file" 2>&1 || status=$?
    # What each PE reported, without the lines of progress dots.
    grep -v -E '^\[PE [0-9]+\] [.sxEF]*$' "$log_file" | tail -n 40 || true
    # A run whose PEs did not all report counts as one failed test.
    if ! counts="$(summarise "$log_file" "$npes")"; then
        counts="0 1 0"
        [ "$status" -ne 0 ] || status=1
    fi
    read -r p f s <<<"$counts"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    printf 'shmem4py on %d PE(s): %d passed, %d failed, %d skipped (exit status %d)\n' "$npes" "$p" "$f" "$s" "$status"
    if [ "$status" -ne 0 ] || [ "$f" -ne 0 ]; then
        bad_runs+=("$npes")
    fi
done

echo "$passed $failed $skipped" >"$WORK/counts"
printf '\nshmem4py: %d passed, %d failed, %d skipped (%d s)\n' "$passed" "$failed" "$skipped" "$((SECONDS - STARTED))"
if [ "${#bad_runs[@]}" -gt 0 ]; then
    echo "ci/shmem4py.sh: the runs on ${bad_runs[*]} PE(s) failed (logs: $WORK/test-*.log)"
    exit 1
fi
