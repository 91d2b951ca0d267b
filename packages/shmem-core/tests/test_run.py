"""The launcher (python -m shmem.run), torchrun-style initialisation and global_exit."""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import shmem

from harness import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
PKG_ROOT = os.path.dirname(os.path.dirname(shmem.__file__))


def _env(**extra):
    env = dict(os.environ)
    for var in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE", "RANK", "WORLD_SIZE",
                "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    env["PYTHONPATH"] = os.pathsep.join([PKG_ROOT, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def launch(args, timeout=120, **kwargs):
    return subprocess.run([sys.executable, "-m", "shmem.run"] + args, capture_output=True, text=True,
                          env=_env(), timeout=timeout, **kwargs)


def test_ring_example_runs_on_4_pes():
    example = os.path.join(REPO, "examples", "python", "ring.py")
    assert os.path.isfile(example), example
    r = launch(["-n", "4", example])
    assert r.returncode == 0, r.stdout + r.stderr
    for pe in range(4):
        assert f"[PE {pe}] " in r.stdout
    assert r.stdout.count("verified") >= 4, r.stdout


def test_output_prefix_streams_args_and_mem_size(tmp_path):
    prog = _script(tmp_path, "prog.py", """
        import sys
        import shmem.core as core
        core.init()                       # mem_size from --mem-size
        print("out", core.my_pe(), core.n_pes(), *sys.argv[1:])
        print("err", core.my_pe(), file=sys.stderr)
        core.finalize()
    """)
    r = launch(["-n", "3", "--mem-size", "8M", prog, "a", "--b"])
    assert r.returncode == 0, r.stdout + r.stderr
    for pe in range(3):
        assert f"[PE {pe}] out {pe} 3 a --b" in r.stdout
        assert f"[PE {pe}] err {pe}" in r.stderr
    r = launch(["-n", "2", "--no-prefix", "--mem-size", "4194304", prog])
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split("\n")[:2]) == ["out 0 2", "out 1 2"]


def test_module_mode(tmp_path):
    _script(tmp_path, "mymod.py", """
        import shmem.core as core
        core.init(mem_size=4 << 20)
        print("module", core.my_pe())
        core.finalize()
    """)
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    r = subprocess.run([sys.executable, "-m", "shmem.run", "-n", "2", "-m", "mymod"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "[PE 0] module 0" in r.stdout and "[PE 1] module 1" in r.stdout


def test_first_failing_status_wins_and_the_rest_are_stopped(tmp_path):
    prog = _script(tmp_path, "fail.py", """
        import os, sys, time
        rank = int(os.environ["SHMEM_RUN_PE"])
        if rank == 1:
            sys.exit(3)
        time.sleep(60)
    """)
    t0 = time.monotonic()
    r = launch(["-n", "3", "--kill-grace", "1", prog], timeout=60)
    assert r.returncode == 3, r.stderr
    assert time.monotonic() - t0 < 20
    assert "PE 1 exited with status 3" in r.stderr


def test_a_pe_killed_by_a_signal(tmp_path):
    prog = _script(tmp_path, "kill.py", """
        import os, signal, time
        if os.environ["SHMEM_RUN_PE"] == "0":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
    """)
    r = launch(["-n", "2", "--kill-grace", "1", prog], timeout=60)
    assert r.returncode == 128 + signal.SIGKILL


def test_timeout(tmp_path):
    prog = _script(tmp_path, "hang.py", "import time\ntime.sleep(60)\n")
    r = launch(["-n", "2", "--timeout", "1", "--kill-grace", "1", prog], timeout=60)
    assert r.returncode == 124 and "timeout" in r.stderr


def test_sigint_and_sigterm_are_passed_on(tmp_path):
    prog = _script(tmp_path, "sig.py", """
        import os, signal, sys, time
        def on(sig, frame):
            print("got", signal.Signals(sig).name, flush=True)
            sys.exit(0)
        signal.signal(signal.SIGINT, on)
        signal.signal(signal.SIGTERM, on)
        print("ready", flush=True)
        time.sleep(60)
    """)
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([sys.executable, "-m", "shmem.run", "-n", "2", prog], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_env())
        seen = 0
        deadline = time.monotonic() + 30
        lines = []
        while seen < 2 and time.monotonic() < deadline:
            line = p.stdout.readline()
            lines.append(line)
            seen += "ready" in line
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        text = "".join(lines) + out
        assert text.count(f"got {sig.name}") == 2, text + err
        assert p.returncode == 128 + sig


def test_default_mode_programs_get_a_random_job_secret(tmp_path):
    # DEFAULT-mode (tcp://) init needs SHMEM_JOB_SECRET: the launcher gives every PE the same
    # fresh one, and keeps the user's own.
    prog = _script(tmp_path, "default_mode.py", """
        import hashlib, os, sys
        from shmem import _pyshmem as P
        attr = P.InitAttr()
        attr.my_rank, attr.n_ranks = int(os.environ["SHMEM_RUN_PE"]), int(os.environ["SHMEM_RUN_NPES"])
        attr.local_mem_size = 8 << 20
        attr.ip_port = "tcp://127.0.0.1:" + sys.argv[1]
        assert P.aclshmem_init(attr) == P.ACLSHMEM_SUCCESS, P.aclshmemx_get_last_error()
        print("secret", hashlib.sha256(os.environ["SHMEM_JOB_SECRET"].encode()).hexdigest())
        assert P.aclshmem_finalize() == P.ACLSHMEM_SUCCESS
    """)
    seen = []
    for own in (None, None, "my-own-job-secret"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = _env(SHMEM_JOB_SECRET=own) if own else _env()
        if not own:
            env.pop("SHMEM_JOB_SECRET", None)
        r = subprocess.run([sys.executable, "-m", "shmem.run", "-n", "2", prog, str(port)], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        digests = {line.split()[-1] for line in r.stdout.splitlines() if " secret " in line}
        assert len(digests) == 1, r.stdout
        seen.append(digests.pop())
    assert seen[0] != seen[1]  # fresh for each job
    assert seen[2] == hashlib.sha256(b"my-own-job-secret").hexdigest()


def test_bad_command_lines():
    assert launch(["-n", "0", "x.py"]).returncode == 2
    assert launch(["x.py"]).returncode == 2
    assert launch(["-n", "2"]).returncode == 2
    assert launch(["-n", "2", "--mem-size", "lots", "x.py"]).returncode == 2


_SHOW_CPUS = """
    import os
    import shmem.core as core
    core.init(mem_size=4 << 20)
    buf = core.buffer(8)
    buf[:] = bytes([core.my_pe()]) * 8
    core.barrier_all()
    got = core.buffer(8)
    core.get(got, buf, (core.my_pe() + 1) % core.n_pes())
    core.synchronize(0)
    print("cpus", *sorted(os.sched_getaffinity(0)), "peer byte", got[0], flush=True)
    core.barrier_all()
    core.finalize()
"""


def _cpus_of_pes(stdout, npes):
    """{pe: [cpus]} from the lines of _SHOW_CPUS, checking each PE's read of its peer."""
    seen = {}
    for line in stdout.splitlines():
        head, _, rest = line.partition("] cpus ")
        if rest:
            pe = int(head.split()[-1])
            cpus, _, byte = rest.partition(" peer byte ")
            assert int(byte) == (pe + 1) % npes, line
            seen[pe] = [int(c) for c in cpus.split()]
    assert sorted(seen) == list(range(npes)), stdout
    return seen


def test_bind_to_core_gives_each_pe_one_cpu_in_turn(tmp_path):
    prog = _script(tmp_path, "cpus.py", _SHOW_CPUS)
    allowed = sorted(os.sched_getaffinity(0))
    npes = len(allowed) + 1  # one more PE than CPUs: the last shares the first CPU
    r = launch(["-n", str(npes), "--bind-to", "core", prog])
    assert r.returncode == 0, r.stdout + r.stderr
    seen = _cpus_of_pes(r.stdout, npes)
    assert seen == {pe: [allowed[pe % len(allowed)]] for pe in range(npes)}


def test_bind_to_none_is_the_default_and_leaves_every_cpu(tmp_path):
    prog = _script(tmp_path, "cpus.py", _SHOW_CPUS)
    allowed = sorted(os.sched_getaffinity(0))
    for args in ([], ["--bind-to", "none"]):
        r = launch(["-n", "2", *args, prog])
        assert r.returncode == 0, r.stdout + r.stderr
        assert _cpus_of_pes(r.stdout, 2) == {0: allowed, 1: allowed}


def test_bind_to_something_else_is_refused():
    r = launch(["-n", "2", "--bind-to", "socket", "x.py"])
    assert r.returncode == 2
    assert "--bind-to" in r.stderr and "socket" in r.stderr and "core" in r.stderr, r.stderr
    from shmem.run import launch as launch_job

    try:
        launch_job(2, [sys.executable, "x.py"], bind_to="socket")
    except ValueError as exc:
        assert "bind_to" in str(exc) and "socket" in str(exc)
    else:
        raise AssertionError("launch(bind_to='socket') did not raise ValueError")


def test_global_exit_ends_every_pe(tmp_path):
    prog = _script(tmp_path, "gexit.py", """
        import time
        import shmem, shmem.core as core
        core.init(mem_size=4 << 20)
        if core.my_pe() == 0:
            shmem.aclshmem_global_exit(5)
        time.sleep(30)
        print("not reached")
    """)
    r = launch(["-n", "3", prog], timeout=60)
    assert r.returncode == 5, r.stdout + r.stderr
    assert "not reached" not in r.stdout


def test_torchrun_environment(tmp_path):
    """RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT, as torchrun sets them: rank 0 makes
    the unique ID and hands it out through torch's TCPStore on MASTER_PORT, or without torch
    over MASTER_PORT + 1 to ranks holding SHMEM_JOB_SECRET (test_bootstrap_trust.py)."""
    prog = _script(tmp_path, "tr.py", """
        import shmem.core as core
        for instance in range(2):   # a second init gets a fresh unique ID
            core.init(mem_size=4 << 20)
            src = core.buffer(8); dst = core.calloc(1, 8)
            me, n = core.my_pe(), core.n_pes()
            src.numpy("int64")[0] = me
            core.barrier_all()
            core.put(dst, src, (me + 1) % n, 0); core.synchronize(0); core.barrier_all()
            assert dst.numpy("int64")[0] == (me - 1) % n
            core.barrier_all()
            core.free(dst); core.free(src)
            core.finalize()
        print("torchrun ok", me, n)
    """)
    world = 3
    port, exchange = free_port(), free_port()
    running = []
    for rank in range(world):
        env = _env(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), SHMEM_UID_EXCHANGE_PORT=str(exchange),
                   SHMEM_JOB_SECRET="test_run secret")
        running.append(subprocess.Popen([sys.executable, prog], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True))
    for rank, p in enumerate(running):
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and f"torchrun ok {rank} {world}" in out, err


def test_init_without_any_environment_says_what_is_missing(tmp_path):
    prog = _script(tmp_path, "noenv.py", """
        import shmem.core as core
        try:
            core.init(mem_size=1 << 20)
        except core.AclshmemInvalid as e:
            print("invalid:", e)
    """)
    r = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=_env(), timeout=60)
    assert "invalid:" in r.stdout and "shmem.run" in r.stdout and "uid" in r.stdout, r.stdout + r.stderr
