"""libaclshmem's log lines reach Python's logging (the "shmem" logger) when the program
configured logging before init, on real PEs (1 and 2).  The jobs live in jobs_logging.py."""

import os
import subprocess
import sys
import textwrap

import pytest

import jobs_logging
from shmem import testing


def _run(n, job, tmp_path, **env):
    logdir = tmp_path / "log"
    env = {"SHMEM_LOG_PATH": str(logdir), "SHMEM_LOG_LEVEL": "", "SHMEM_LOG_TO_STDOUT": "", **env}
    return testing.run_pes(n, job, init=False, env=env, mem_size=1 << 20, timeout=90)


@pytest.mark.parametrize("npes", [1, 2])
def test_basic_config_gets_the_library_lines(npes, tmp_path):
    counts = _run(npes, jobs_logging.configured_by_basic_config, tmp_path, SHMEM_LOG_LEVEL="INFO")
    assert all(c >= 3 for c in counts)


@pytest.mark.parametrize("npes", [1, 2])
def test_shmem_logger_and_both_thresholds(npes, tmp_path):
    results = _run(npes, jobs_logging.configured_on_the_shmem_logger, tmp_path)
    assert len(results) == npes


@pytest.mark.parametrize("npes", [1, 2])
def test_nothing_installed_without_configuration(npes, tmp_path):
    assert _run(npes, jobs_logging.not_configured, tmp_path) == [True] * npes
    assert len(os.listdir(tmp_path / "log")) == npes  # one log file per PE, as before


def test_a_logger_of_the_user_is_kept(tmp_path):
    assert _run(2, jobs_logging.user_logger_kept, tmp_path) == [True, True]


def test_set_extern_logger_none_gives_the_output_back(tmp_path):
    assert _run(1, jobs_logging.handed_back_with_set_extern_logger_none, tmp_path) == [True]


EXIT_SCRIPT = textwrap.dedent("""
    import logging, sys, threading, time
    from shmem import _native, _pyshmem, core

    logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(name)s %(levelname)s %(message)s")
    core.init(uid=core.get_unique_id(), rank=0, nranks=1, mem_size=1 << 20)
    assert core._logbridge.installed()
    ffi, lib = _native.load()

    def keep_logging(*_):
        while True:
            lib.aclshmemx_set_log_level(99)  # fails: one ERROR line per call

    threading.Thread(target=keep_logging, daemon=True).start()   # a Python thread
    kernel = ffi.callback("aclshmemx_kernel_fn", keep_logging)   # and a library-made one
    stream = core.Stream()
    assert lib.aclshmemx_kernel_launch(ffi.cast("aclrtStream", stream.handle), kernel, 1, ffi.NULL) == 0
    time.sleep(0.05)
    print("leaving without finalize", flush=True)
""")


def test_interpreter_exit_while_lines_arrive(tmp_path):
    """A program that exits without finalize while two threads (a Python thread and a
    stream's worker) keep the library logging into Python ends normally: no hang, no
    fatal error of the interpreter."""
    env = dict(os.environ, SHMEM_LOG_PATH=str(tmp_path), SHMEM_LOG_LEVEL="", SHMEM_JOB_SECRET="e" * 64,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "leaving without finalize" in proc.stdout
    assert "shmem ERROR aclshmemx_set_log_level: level 99" in proc.stdout
    assert "Fatal Python error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
