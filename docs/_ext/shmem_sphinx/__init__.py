"""Sphinx extension of the SHMEM documentation.

* ``.. c-api-header:: aclshmem/<file>.h`` - the C API reference, read from the public
  headers' comments (capi.py, cheaders.py);
* ``.. pyshmem-families::`` - the generated families of ``shmem._pyshmem`` as one table
  per family (pyfamilies.py);
* ``.. module-extras:: MODULE`` - a module's constants and re-exported names, which
  automodule then skips (pymodule.py);
* ``.. meson-options:: FILE`` - the build options of libaclshmem (mesonopts.py);
* ``.. changelog:: FILE`` - a package's CHANGELOG.md (changelog.py);
* ``manpages`` - the manual pages (docs/man/build.py): one source per page, from the
  same directives and pages as the site, for Sphinx's man builder (not loaded here);
* ``cli.launcher_parser`` - the parser of ``python -m shmem.run`` for sphinx-argparse;
* ``doctest_helpers`` - what the runnable examples use to start real PEs.
"""

from . import capi, changelog, mesonopts, pyfamilies, pymodule


def setup(app):
    capi.setup(app)
    pyfamilies.setup(app)
    pymodule.setup(app)
    mesonopts.setup(app)
    changelog.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
