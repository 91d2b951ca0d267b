#!python
"""aclshmemcc of the shmem-native wheel, also installed as aclshmemc++, oshcc, oshc++, oshCC,
shmemcc, shmemc++ and shmemCC: runs shmem_native._wrapper.main (which the name it is called by
tells the language).  The installer rewrites the first line to this environment's Python.

A script of its own rather than a console-script entry point, because the wrapper is called
from inside pip's builds: ``OSHCC=aclshmemcc pip install shmem4py`` runs it from an isolated
build environment, whose PYTHONPATH hides the site-packages of the interpreter that runs pip.
When that interpreter is this one (shmem-native installed in the venv that runs pip), an
entry point cannot import shmem_native and the build fails; this script looks for the package
in its own interpreter's site folders then.
"""
import sys

try:
    from shmem_native._wrapper import main
except ModuleNotFoundError:
    import site

    # This interpreter's own site folders (a venv's site-packages, or the user's), whatever a
    # build environment's PYTHONPATH removed from sys.path.
    sys.path[:0] = site.getsitepackages() + [site.getusersitepackages()]
    from shmem_native._wrapper import main

sys.exit(main())
