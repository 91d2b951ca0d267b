#!/usr/bin/env bash
# ci/sanitize.sh - builds libaclshmem and its C tests with the sanitizers and runs them:
# the part of ci/test.sh that a C developer reruns after a change.
#
#   bash ci/sanitize.sh            # AddressSanitizer + UBSan, then ThreadSanitizer
#   bash ci/sanitize.sh asan       # only one of them
#   bash ci/sanitize.sh tsan -- signal stream   # only these meson tests
#
# Build directories, options and the sanitizers' runtime settings: see ci/lib.sh.
# Exits non-zero if any test fails.
set -euo pipefail

# shellcheck source=ci/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

which=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
    asan | tsan) which+=("$1") ;;
    *)
        echo "usage: ci/sanitize.sh [asan] [tsan] [-- MESON-TEST-NAME...]" >&2
        exit 2
        ;;
    esac
    shift
done
[ "$#" -eq 0 ] || shift # the --
[ "${#which[@]}" -gt 0 ] || which=(asan tsan)

trap 'rc=$?; [ "$rc" -eq 0 ] || [ "${CI_DONE:-0}" = 1 ] || printf "\nci/sanitize.sh: FAILED in step \"%s\" (exit status %d)\n" "$CI_STEP" "$rc"' EXIT

step "system packages"
ensure_system_packages

step "build tools (venv $CI_VENV)"
ensure_venv "${PIP_BUILD_PACKAGES[@]}"

start_failed_tests_log "$CI_BUILD_DIR-sanitizers/failed-tests.txt"
run_sanitizers "${which[*]}" "$@"

CI_DONE=1
print_summary
