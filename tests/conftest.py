"""Shared set-up of the cross-package tests.

The tests run against the installed packages when they are installed (as ci/test.sh
does), and otherwise against this checkout: integration_helpers puts the pure-Python
packages' src/ folders on sys.path (and PYTHONPATH, for the processes the tests start).
"""

import integration_helpers  # noqa: F401
