"""The shmem-core wheel carries the module its build generates (cffi's out-of-line ABI
module) and the committed ones made from the headers (the C declarations, the typed
functions of shmem._pyshmem), stays pure Python
(py3-none-any), and from it ``import shmem.core`` plus a first call parse no C: pycparser
is never imported.  (ci/wheels.sh installs the same wheel into a fresh venv and runs a
job with it.)"""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from integration_helpers import PACKAGES, run

# What the build generates, and the committed files made from the headers that it must carry.
GENERATED = ("shmem/_aclshmem_cffi.py", "shmem/_pyshmem_families.py", "shmem/_pyshmem_coll_families.py",
             "shmem/_abi.py", "shmem/decl/aclshmem.h", "shmem/decl/aclshmem_coll.h")

PROBE = """
import json, sys, time
t0 = time.perf_counter()
import shmem.core
shmem.core.get_version()
elapsed = time.perf_counter() - t0
from shmem import _native, _pyshmem
print(json.dumps({"shmem": shmem.__file__, "precompiled": _native.precompiled,
                  "pycparser": "pycparser" in sys.modules, "seconds": elapsed,
                  "put_code": _pyshmem.aclshmem_putmem.__code__.co_filename,
                  "coll_code": _pyshmem.aclshmem_int32_sum_reduce.__code__.co_filename}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The shmem-core wheel, built (without build isolation, by this interpreter's
    setuptools and cffi) from a copy of the package, so the checkout gets no build files."""
    tmp = tmp_path_factory.mktemp("shmem-core-wheel")
    source = tmp / "shmem-core"
    shutil.copytree(os.path.join(PACKAGES, "shmem-core"), source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "_aclshmem_cffi.py",
                                                  ".pytest_cache"))
    dist = tmp / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--wheel-dir", str(dist),
         str(source)], timeout=600)
    (built,) = dist.glob("shmem_core-*.whl")
    return built


def test_the_wheel_is_pure_python_and_carries_the_generated_modules(wheel):
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        for path in GENERATED:
            assert path in names, f"{wheel.name} lacks {path}"
        assert not [n for n in names if n.endswith((".so", ".c", ".pyd"))], sorted(names)
        ffi_module = whl.read("shmem/_aclshmem_cffi.py").decode()
    assert "import _cffi_backend" in ffi_module and "SOURCE_FINGERPRINT" in ffi_module


def test_from_the_wheel_nothing_parses_c(wheel, tmp_path):
    site = tmp_path / "site"
    # pip installs it as it would into a venv (bytecode compiled), into a folder of its own.
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        timeout=300)
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["shmem"].startswith(str(site)), f"shmem came from {out['shmem']}, not from the wheel"
    assert out["precompiled"] is True, "the wheel's generated cffi module was not used"
    assert out["pycparser"] is False, "import shmem.core and a first call imported pycparser"
    assert out["put_code"] == str(site / "shmem" / "_pyshmem_families.py"), out["put_code"]
    assert out["coll_code"] == str(site / "shmem" / "_pyshmem_coll_families.py"), out["coll_code"]
    print(f"import shmem.core + get_version(): {out['seconds'] * 1e3:.1f} ms")
