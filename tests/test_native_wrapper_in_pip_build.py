"""The shmem-native wheel's compiler wrapper works inside pip's isolated builds.

Packages that build C code against an OpenSHMEM take its ``oshcc`` (shmem4py: ``OSHCC`` or
the ``oshcc`` on the PATH), and pip runs their build in an isolated environment whose
PYTHONPATH hides the site-packages of the interpreter that runs pip.  With shmem-native
installed in that same environment (a venv that installs shmem4py after shmem-native), the
wrapper was a console-script entry point, which could not import ``shmem_native`` there:
``ModuleNotFoundError``, and the build failed.  Here a throwaway project with an in-tree
build backend (no build requirement, so nothing is downloaded) compiles and links an
OpenSHMEM program with ``aclshmemcc`` and ``oshcc`` during ``pip wheel``, with isolation.
ci/shmem4py.sh does the same with shmem4py itself.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from integration_helpers import run

BIN = os.path.dirname(sys.executable)

pytestmark = pytest.mark.skipif(
    not os.path.isfile(os.path.join(BIN, "aclshmemcc")) or shutil.which(os.environ.get("CC", "cc")) is None,
    reason="needs the shmem-native wheel installed beside this interpreter, and a C compiler")

BACKEND = '''
import os
import subprocess
import zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    for wrapper in ("aclshmemcc", "oshcc"):
        subprocess.run([wrapper, os.path.join(here, "probe.c"), "-o", os.path.join(here, "probe-" + wrapper)],
                       check=True)
    name = "probe-0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        whl.writestr("probe-0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: probe\\nVersion: 0\\n")
        whl.writestr("probe-0.dist-info/WHEEL",
                     "Wheel-Version: 1.0\\nGenerator: probe\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        whl.writestr("probe-0.dist-info/RECORD", "")
    return name
'''

PROBE = '''
#include <shmem.h>
#if !ACLSHMEM_HAVE_TEAMS
#error "not libaclshmem's shmem.h"
#endif
int main(void) { shmem_init(); int ok = shmem_n_pes() == 1; shmem_finalize(); return ok ? 0 : 1; }
'''


def test_the_wrapper_compiles_inside_an_isolated_pip_build(tmp_path):
    project = tmp_path / "probe"
    project.mkdir()
    (project / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = []
        build-backend = "probe_backend"
        backend-path = ["."]
    '''))
    (project / "probe_backend.py").write_text(BACKEND)
    (project / "probe.c").write_text(PROBE)
    env = {"PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-w", str(tmp_path / "dist"),
         str(project)], env=env, cwd=str(tmp_path))
    for wrapper in ("aclshmemcc", "oshcc"):
        program = project / f"probe-{wrapper}"
        assert program.is_file(), f"{wrapper} built nothing"
        # Built against this wheel's library: it runs as a job of one PE (no launcher's variables).
        alone = {k: v for k, v in os.environ.items() if not k.startswith("SHMEM_RUN_")}
        proc = subprocess.run([str(program)], env=alone, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{program.name} failed: {proc.stdout}{proc.stderr}"
