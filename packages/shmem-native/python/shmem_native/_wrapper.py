"""The compiler wrapper of the shmem-native wheel: the scripts ``aclshmemcc``,
``aclshmemc++``, ``oshcc``, ``oshc++``, ``oshCC``, ``shmemcc``, ``shmemc++`` and ``shmemCC``.

``oshcc prog.c -o prog`` runs ``cc -I<include_dir()> prog.c -L<library_dir()> -laclshmem
-Wl,-rpath,<library_dir()> -Wl,-z,relro -Wl,-z,now``: the headers and the library of this wheel, with the rpath that
lets the program find the library in site-packages.  It behaves as the wrapper that
``meson install`` installs (programs/aclshmemcc.in), whose documentation it follows:

* the name it is called by chooses the language (ending in ``c++``, ``CC`` or ``cxx``: C++);
* the compiler is ``$SHMEM_CC`` / ``$SHMEM_CXX``, else ``$CC`` / ``$CXX`` (unless that is a
  wrapper itself, as in ``make CC=oshcc``), else ``cc`` / ``c++``;
* ``-c``, ``-S``, ``-E``, ``-M`` and ``-MM`` leave the link flags out;
* ``-showme`` (also ``--showme``, ``-show``) prints the command instead of running it, and
  ``-showme:compile``, ``:link``, ``:command``, ``:incdirs``, ``:libdirs``, ``:libs``,
  ``:version`` and ``:help`` print a part of it, as Open MPI's wrappers do.
"""

import os
import shlex
import sys

from . import __version__, include_dir, library_dir

WRAPPER_NAMES = ("oshcc", "oshc++", "oshCC", "oshcxx", "shmemcc", "shmemc++", "shmemCC", "shmemcxx",
                 "aclshmemcc", "aclshmemc++")
_NO_LINK = {"-c", "-S", "-E", "-M", "-MM"}


def _is_cxx(name):
    return name.endswith(("c++", "CC", "cxx"))


def _compiler(cxx, env):
    """The compiler command, as a list of words."""
    default = "c++" if cxx else "cc"
    chosen = env.get("SHMEM_CXX" if cxx else "SHMEM_CC") or env.get("CXX" if cxx else "CC") or ""
    words = shlex.split(chosen)
    if not words or os.path.basename(words[0]) in WRAPPER_NAMES:
        return [default]
    return words


def _flags(args):
    """(compile flags, link flags) for a command line with these arguments."""
    cflags = [f"-I{include_dir()}"]
    # Full RELRO, as the installed wrapper: the lazy-binding table (.got.plt) would otherwise
    # be part of the writable data that shmem_init shares with the other PEs.
    libs = [f"-L{library_dir()}", "-laclshmem", f"-Wl,-rpath,{library_dir()}", "-Wl,-z,relro", "-Wl,-z,now"]
    if _NO_LINK.intersection(args):
        libs = []
    return cflags, libs


def _usage(name, compiler):
    return (f"usage: {name} [compiler options and files]     compile (and link) with libaclshmem\n"
            f"       {name} -showme[:what] [...]              print instead of running; what is one of\n"
            "         compile, link, command, incdirs, libdirs, libs, version, help\n"
            f"The compiler is {' '.join(compiler)} ($SHMEM_CC/$SHMEM_CXX, else $CC/$CXX, else cc/c++).\n")


def _showme(what, name, cxx, compiler, cflags, libs):
    """The text of -showme:<what>, or None when what is unknown."""
    parts = {
        "compile": cflags,
        "link": libs,
        "command": compiler,
        "incdirs": [f[2:] for f in cflags if f.startswith("-I")],
        "libdirs": [f[2:] for f in libs if f.startswith("-L")],
        "libs": [f[2:] for f in libs if f.startswith("-l")],
    }
    if what in parts:
        return " ".join(parts[what])
    if what == "version":
        return f"{name}: libaclshmem {__version__} (Language: {'C++' if cxx else 'C'})"
    if what == "help":
        return _usage(name, compiler).rstrip("\n")
    return None


def main(argv=None, env=None):
    """Runs the compiler (replacing this process), or prints what -showme asks; returns a
    status only when it prints."""
    argv = sys.argv if argv is None else argv
    env = os.environ if env is None else env
    name = os.path.basename(argv[0]) or "oshcc"
    args = list(argv[1:])
    cxx = _is_cxx(name)
    compiler = _compiler(cxx, env)
    cflags, libs = _flags(args)
    first = args[0] if args else ""
    if first in ("-showme", "--showme", "-show"):
        print(" ".join(compiler + cflags + args[1:] + libs))
        return 0
    if first.startswith(("-showme:", "--showme:")):
        text = _showme(first.split(":", 1)[1], name, cxx, compiler, cflags, libs)
        if text is None:
            sys.stderr.write(f"{name}: unknown option {first}\n" + _usage(name, compiler))
            return 2
        print(text)
        return 0
    command = compiler + cflags + args + libs
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{name}: cannot run the compiler {command[0]}: {exc.strerror}\n")
        return 127
    return 0  # not reached: execvp replaced this process
