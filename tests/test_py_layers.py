"""The Python packages import downward only, have no import cycle and no hand-written module
over 800 lines (check_py_layers.py, whose tables are described in docs/README.md, "Layers of
the Python packages")."""

import os
import subprocess
import sys

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_py_layers.py")


def run_check(*args):
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True, timeout=60)


def test_the_packages_import_downward_without_cycles():
    result = run_check()
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_check_catches_each_kind_of_violation():
    result = run_check("--self-test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 of" in result.stdout
