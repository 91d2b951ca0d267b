"""Helpers for the runnable examples of the documentation (the doctest builder).

The pages show complete programs from ``docs/examples/`` and the output they print.
Hidden ``testcode`` blocks run those programs for real, with real PEs, through these
helpers; the visible ``testoutput`` blocks are what the doctest builder compares, so a
page cannot show output the code no longer prints.
"""

import os
import shutil
import subprocess
import sys
import tempfile

EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
TIMEOUT = float(os.environ.get("SHMEM_DOCS_TIMEOUT", "180"))

try:  # torch is optional: the torch pages' examples are skipped without it
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def example(name):
    return os.path.join(EXAMPLES, name)


def run(cmd, env=None, check=True, timeout=None, cwd=None):
    """Runs a command; returns (exit status, stdout, stderr).  With check, a non-zero
    status raises with everything the command printed."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                          timeout=timeout or TIMEOUT, cwd=cwd)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with status {proc.returncode}\n"
                           f"--- stdout\n{out}--- stderr\n{err}")
    return proc.returncode, out, err


def launch(name, npes, *args, env=None, check=True, options=()):
    """``python -m shmem.run -n NPES docs/examples/NAME ARGS``; returns (status, out, err)."""
    cmd = [sys.executable, "-m", "shmem.run", "-n", str(npes), *options, example(name), *args]
    return run(cmd, env=env, check=check)


def torchrun(name, nproc, *args, env=None):
    """``torchrun --standalone --nproc-per-node=N docs/examples/NAME``."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           example(name), *args]
    extra = {"OMP_NUM_THREADS": "1"}
    extra.update(env or {})
    return run(cmd, env=extra)


def show(text):
    """Prints the lines of a job's output sorted (PEs print in any order)."""
    for line in sorted(line for line in text.splitlines() if line.strip()):
        print(line)


def build_c(name):
    """Compiles docs/examples/NAME against the installed shmem-native package with
    pkg-config, as the install page shows; returns the program's path."""
    import shmem_native

    cc = os.environ.get("CC", "cc")
    env = {"PKG_CONFIG_PATH": shmem_native.pkgconfig_dir()}
    _, flags, _ = run(["pkg-config", "--cflags", "--libs", "aclshmem"], env=env)
    out_dir = tempfile.mkdtemp(prefix="shmem-docs-c-")
    exe = os.path.join(out_dir, os.path.splitext(name)[0])
    run([cc, "-std=c11", "-O1", example(name), "-o", exe, *flags.split()])
    return exe


def remove(path):
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
