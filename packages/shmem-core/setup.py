"""shmem-core's build step beyond pyproject.toml: build_py also writes cffi's out-of-line
ABI module ``shmem._aclshmem_cffi`` from the committed declarations ``src/shmem/decl/*.h``
(see ``src/shmem/_ffi_build.py``).  It is pure Python, so the wheel stays py3-none-any and
nothing is compiled at install time.  (The typed functions of ``shmem._pyshmem`` are
committed source: ``python -m shmem._abi_build`` makes them, and the declarations, from the
public headers.)

Regular builds (wheel, sdist -> wheel) write the module into the build tree only.  An
editable install (``pip install -e``) writes it next to the sources in ``src/shmem``, where
git ignores it; run it again after the declarations change (a stale module is never used:
the package then parses the declarations at run time instead, ~0.1 s slower).
"""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(HERE, "src", "shmem")


def _load(name):
    """src/shmem/<name>.py as a stand-alone module (the package is not importable yet)."""
    spec = importlib.util.spec_from_file_location(f"_shmem_setup_{name}", os.path.join(PACKAGE_DIR, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithGenerated(build_py):
    """build_py plus the generated cffi module."""

    def _generated_dir(self):
        if getattr(self, "editable_mode", False):
            return PACKAGE_DIR
        return os.path.join(self.build_lib, "shmem")

    def run(self):
        super().run()
        builder = _load("_ffi_build")
        for path in builder.generate(self._generated_dir()):
            print(f"shmem-core: generated {os.path.relpath(path, HERE)}")

    def find_package_modules(self, package, package_dir):
        # Copies left in src/shmem by an editable install are never packaged (nor put in
        # an sdist): every build generates its own.
        builder = _load("_ffi_build")
        generated = {os.path.splitext(name)[0] for name in builder.GENERATED_FILES}
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "shmem" and m[1] in generated)]

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        builder = _load("_ffi_build")
        return outputs + [os.path.join(self.build_lib, "shmem", name) for name in builder.GENERATED_FILES]


setup(cmdclass={"build_py": BuildPyWithGenerated})
