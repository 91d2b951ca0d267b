"""``python -m shmem.run --nnodes N --node-rank R --master-addr A --master-port P -n K``:
one launcher per node, node-major PE numbers, the unique ID handed from node 0's launcher
to the others over the SHMEM_JOB_SECRET exchange of shmem._bootstrap; and torchrun jobs
across nodes (LOCAL_WORLD_SIZE < WORLD_SIZE), whose unique ID must name an address the
other nodes reach.

Real processes: the "nodes" are launchers on this machine (same host and network
namespace, so the PEs share memory); tests/multinode/ runs them in separate network
namespaces."""

import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import shmem
from shmem import _bootstrap

from harness import free_port

PKG_ROOT = os.path.dirname(os.path.dirname(shmem.__file__))
SECRET = "run-nnodes-test-secret"

# Every PE: init, check its number against the launcher's node-major numbering, put its
# number to the next PE, barrier, check what the previous PE put.
RING = """
    import os, sys
    import shmem.core as core
    core.init(mem_size=4 << 20)
    me, n = core.my_pe(), core.n_pes()
    assert me == int(os.environ["SHMEM_RUN_PE"]) and n == int(os.environ["SHMEM_RUN_NPES"])
    uid = bytes.fromhex(os.environ["SHMEM_RUN_UID"])
    src = core.buffer(8); dst = core.calloc(1, 8)
    src.numpy("int64")[0] = 1000 + me
    core.barrier_all()
    core.put(dst, src, (me + 1) % n, 0); core.synchronize(0); core.barrier_all()
    got = int(dst.numpy("int64")[0])
    assert got == 1000 + (me - 1) % n, got
    core.barrier_all()
    core.free(dst); core.free(src)
    core.finalize()
    ip = sys.argv[1] if len(sys.argv) > 1 else None
    print("ring ok", me, n, got, "uid-has-ip" if ip and socket_ip(ip) in uid else "")
"""
PRELUDE = """
    import socket
    def socket_ip(ip):
        return socket.inet_aton(ip)
"""


def _env(**extra):
    env = dict(os.environ)
    for var in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE", "RANK", "WORLD_SIZE",
                "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "SHMEM_JOB_SECRET",
                "SHMEM_UID_SESSION_ID", "SHMEM_UID_SOCK_IFNAME", "SHMEM_UID_EXCHANGE_PORT",
                "SHMEM_UID_EXCHANGE_TIMEOUT", "TORCHELASTIC_USE_AGENT_STORE"):
        env.pop(var, None)
    env["PYTHONPATH"] = os.pathsep.join([PKG_ROOT, env.get("PYTHONPATH", "")])
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


def _script(tmp_path, name, *parts):
    path = tmp_path / name
    path.write_text("\n".join(textwrap.dedent(part) for part in parts))
    return str(path)


def _local_ip():
    """A non-loopback IPv4 address of this host, or None."""
    ip = _bootstrap._route_source(socket.AF_INET, "203.0.113.7")
    if ip and not _bootstrap._is_loopback(ip) and _bootstrap._is_local(socket.AF_INET, ip):
        return ip
    return None


def _node(nnodes, rank, port, npes, prog, *args, addr="127.0.0.1", secret=SECRET, extra=(), env=None):
    cmd = [sys.executable, "-m", "shmem.run", "--nnodes", str(nnodes), "--node-rank", str(rank),
           "--master-addr", addr, "--master-port", str(port), "-n", str(npes), *extra, prog, *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or _env(SHMEM_JOB_SECRET=secret))


def _finish(procs, timeout=90):
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise AssertionError(f"a launcher hung:\n{out}\n{err}")
        results.append((p.returncode, out, err))
    return results


def _run(args, secret=SECRET, timeout=60):
    return subprocess.run([sys.executable, "-m", "shmem.run", *args], capture_output=True, text=True,
                          env=_env(SHMEM_JOB_SECRET=secret), timeout=timeout)


# ---------------------------------------------------------------------------
# jobs across launchers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("nnodes,npes", [(2, 2), (3, 1)])
def test_nodes_form_one_job_with_node_major_pe_numbers(tmp_path, nnodes, npes):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    # The other nodes start first: they wait for node 0's launcher.
    procs = [_node(nnodes, r, port, npes, prog) for r in range(1, nnodes)]
    time.sleep(0.5)
    procs.insert(0, _node(nnodes, 0, port, npes, prog))
    total = nnodes * npes
    for rank, (rc, out, err) in enumerate(_finish(procs)):
        assert rc == 0, f"node {rank}: {out}\n{err}"
        mine = [line for line in out.splitlines() if "ring ok" in line]
        assert len(mine) == npes, out
        for pe in range(rank * npes, rank * npes + npes):
            width = len(str(total - 1))
            assert f"[PE {pe:>{width}}] ring ok {pe} {total} {1000 + (pe - 1) % total}" in out, out
        if rank == 0:  # loopback master address: said plainly
            assert "loopback" in err, err


def test_pe_0_listens_on_the_master_address(tmp_path):
    """With a master address that is not loopback, the unique ID carries it (PE 0 listens
    there), not the library's default, loopback."""
    ip = _local_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    procs = [_node(2, 1, port, 1, prog, ip, addr=ip), _node(2, 0, port, 1, prog, ip, addr=ip)]
    for rc, out, err in _finish(procs):
        assert rc == 0, out + err
        assert "uid-has-ip" in out, out
        assert "loopback" not in err, err


def test_the_users_uid_address_wins(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    env0 = _env(SHMEM_JOB_SECRET=SECRET, SHMEM_UID_SESSION_ID="127.0.0.1:0")
    procs = [_node(2, 1, port, 1, prog, "127.0.0.1"),
             _node(2, 0, port, 1, prog, "127.0.0.1", env=env0)]
    results = _finish(procs)
    for rc, out, err in results:
        assert rc == 0 and "uid-has-ip" in out, out + err
    assert "loopback" not in results[1][2]  # no note on node 0: the user chose the address


# ---------------------------------------------------------------------------
# refusals and timeouts: a clear error, never a hang
# ---------------------------------------------------------------------------

def test_several_nodes_need_a_job_secret(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    for rank in (0, 1):
        r = _run(["--nnodes", "2", "--node-rank", str(rank), "--master-addr", "127.0.0.1", "--master-port",
                  str(port), "-n", "1", prog], secret=None)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "SHMEM_JOB_SECRET" in r.stderr and "several nodes" in r.stderr, r.stderr
    # One node keeps making a random secret of its own.
    r = _run(["-n", "2", prog], secret=None)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_node_with_another_secret_is_refused(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    t0 = time.monotonic()
    node0 = _node(2, 0, port, 1, prog, extra=["--join-timeout", "4"])
    time.sleep(0.3)
    node1 = _node(2, 1, port, 1, prog, secret="not the job's secret")
    (rc0, out0, err0), (rc1, out1, err1) = _finish([node0, node1], timeout=60)
    assert time.monotonic() - t0 < 40
    assert rc1 == 1, out1 + err1
    assert "rejected node 1's launcher's proof of SHMEM_JOB_SECRET" in err1, err1
    assert "different SHMEM_JOB_SECRET" in err1, err1
    assert "ring ok" not in out1
    assert rc0 == 1, out0 + err0
    assert "refused a launcher at 127.0.0.1 that asked to join as node 1" in err0, err0
    assert "node(s) 1 did not join within 4 s" in err0, err0


def test_node_0_absent_times_out(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    t0 = time.monotonic()
    r = _run(["--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port", str(port),
              "-n", "2", "--join-timeout", "2", prog])
    assert time.monotonic() - t0 < 20
    assert r.returncode == 1, r.stdout + r.stderr
    assert "node 1's launcher got no unique ID from node 0's launcher at 127.0.0.1:" in r.stderr, r.stderr
    assert "within 2 s" in r.stderr and "Is node 0's launcher running" in r.stderr, r.stderr
    assert "[PE" not in r.stdout  # no PE was started


def test_a_missing_node_stops_node_0(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    t0 = time.monotonic()
    r = _run(["--nnodes", "3", "--node-rank", "0", "--master-addr", "127.0.0.1", "--master-port", str(port),
              "-n", "1", "--join-timeout", "2", "--kill-grace", "1", prog])
    assert time.monotonic() - t0 < 20
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"node(s) 1, 2 did not join within 2 s: they fetch the unique ID from this launcher on " \
           f"127.0.0.1:{port}" in r.stderr, r.stderr


def test_a_node_of_another_job_shape_is_not_served(tmp_path):
    """A node started with another -n (or --nnodes) would number its PEs wrongly: node 0
    does not serve it, and it says what to check."""
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    node0 = _node(2, 0, port, 2, prog, extra=["--join-timeout", "3", "--kill-grace", "1"])
    time.sleep(0.3)
    node1 = _node(2, 1, port, 1, prog, extra=["--join-timeout", "2"])
    (rc0, _, err0), (rc1, _, err1) = _finish([node0, node1], timeout=60)
    assert rc1 == 1 and "serves another job" in err1 and "-n 1" in err1, err1
    assert rc0 == 1 and "did not join" in err0, err0


FLOODER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flooder.py")


def _wait_listening(port, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


def test_idle_connections_do_not_keep_a_node_out(tmp_path):
    """Issue 23, item 4: a process that knows only node 0's address holds 100 idle
    connections on its unique-ID port, opening a new one whenever node 0 closes one (up to
    500 a second).  Node 1 still fetches the unique ID, well within its 4 s join timeout,
    and the job runs.  Before, the first 32 held every slot for 5 s, newcomers were
    dropped while the slots were full, and node 1's fetch failed."""
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    port = free_port()
    node0 = _node(2, 0, port, 1, prog, extra=["--join-timeout", "10", "--kill-grace", "1"])
    _wait_listening(port, node0)
    flood = subprocess.Popen([sys.executable, FLOODER, "127.0.0.1", str(port), "100", "7", "500"],
                             stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.7)  # the flood holds every slot by now
        node1 = _node(2, 1, port, 1, prog, extra=["--join-timeout", "4"])
        results = _finish([node0, node1], timeout=60)
        report = flood.communicate(timeout=30)[0]
    finally:
        if flood.poll() is None:
            flood.kill()
            flood.communicate()
    for rank, (rc, out, err) in enumerate(results):
        assert rc == 0 and "ring ok" in out, f"node {rank}: {out}\n{err}\nflood: {report}"
    opened = int(report.split()[1])
    assert opened >= 200, report  # it did flood: 100 at once, and renewals


def test_node_0_must_run_on_the_master_address(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    r = _run(["--nnodes", "2", "--master-addr", "203.0.113.7", "--master-port", str(free_port()), "-n", "1",
              prog])
    assert r.returncode == 1
    assert "not an address of this host" in r.stderr, r.stderr


def test_master_port_in_use(tmp_path):
    prog = _script(tmp_path, "ring.py", PRELUDE, RING)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = _run(["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", str(port), "-n", "1", prog])
    assert r.returncode == 1
    assert f"node 0's launcher cannot serve the unique ID on 127.0.0.1:{port}" in r.stderr, r.stderr
    assert "--master-port" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank must be in 0..1"),
    (["--nnodes", "2", "--node-rank", "-1"], "--node-rank must be in 0..1"),
    (["--node-rank", "1"], "--node-rank must be in 0..0"),
    (["--nnodes", "0"], "--nnodes must be at least 1"),
    (["--nnodes", "2", "--master-port", "5000"], "needs --master-addr"),
    (["--nnodes", "2", "--master-addr", "127.0.0.1"], "needs --master-port"),
    (["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "0"], "port 0 is not in 1..65535"),
    (["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "65536"], "not in 1..65535"),
    (["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "x"], "not a port number"),
    (["--nnodes", "2", "--master-addr", "", "--master-port", "5000"], "the master address is empty"),
    (["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "5000", "--join-timeout", "0"],
     "--join-timeout must be a positive"),
])
def test_bad_multi_node_arguments(args, message):
    r = _run(args + ["-n", "1", "prog.py"], timeout=30)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# PE 0's address (shmem._bootstrap.uid_address)
# ---------------------------------------------------------------------------

def test_uid_address(monkeypatch):
    monkeypatch.delenv("SHMEM_UID_SESSION_ID", raising=False)
    monkeypatch.delenv("SHMEM_UID_SOCK_IFNAME", raising=False)
    assert _bootstrap.uid_address("127.0.0.1", multi_node=False) == ("127.0.0.1:0", None)
    session, note = _bootstrap.uid_address("127.0.0.1", multi_node=True)
    assert session == "127.0.0.1:0" and "loopback" in note and "SHMEM_UID_SOCK_IFNAME" in note
    session, note = _bootstrap.uid_address("localhost", multi_node=True, what="MASTER_ADDR")
    assert session in ("127.0.0.1:0", "[::1]:0") and "resolves to" in note and "loopback" in note, note
    session, note = _bootstrap.uid_address("no-such-host.invalid", multi_node=True)
    assert session is None and "does not resolve" in note
    ip = _local_ip()
    if ip is not None:
        assert _bootstrap.uid_address(ip) == (f"{ip}:0", None)
        # An address of another host: the one this host sends from towards it.
        assert _bootstrap.uid_address("203.0.113.7") == (f"{ip}:0", None)
    for var, value in (("SHMEM_UID_SESSION_ID", "127.0.0.1:0"), ("SHMEM_UID_SOCK_IFNAME", "lo")):
        monkeypatch.setenv(var, value)
        assert _bootstrap.uid_address("127.0.0.1") == (None, None)  # the user's choice wins
        monkeypatch.delenv(var)


def test_make_uid_at_sets_the_session_for_the_call_only(monkeypatch):
    monkeypatch.delenv("SHMEM_UID_SESSION_ID", raising=False)
    seen = []
    assert _bootstrap.make_uid_at(lambda: seen.append(os.environ.get("SHMEM_UID_SESSION_ID")) or b"u",
                                  "10.1.2.3:0") == b"u"
    assert seen == ["10.1.2.3:0"] and "SHMEM_UID_SESSION_ID" not in os.environ
    _bootstrap.make_uid_at(lambda: seen.append(os.environ.get("SHMEM_UID_SESSION_ID")), None)
    assert seen[-1] is None


# ---------------------------------------------------------------------------
# torchrun across nodes
# ---------------------------------------------------------------------------

_NO_TORCH = ("import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")

TORCHRUN_RING = """
    import os, socket, sys
    import shmem.core as core
    from shmem import _bootstrap
    made = []
    real = _bootstrap.make_uid_at
    def spy(make_uid, session):
        made.append(session)
        return real(make_uid, session)
    _bootstrap.make_uid_at = spy
    core.init(mem_size=4 << 20)
    me, n = core.my_pe(), core.n_pes()
    assert me == int(os.environ["RANK"]) and n == int(os.environ["WORLD_SIZE"])
    src = core.buffer(8); dst = core.calloc(1, 8)
    src.numpy("int64")[0] = me
    core.barrier_all()
    core.put(dst, src, (me + 1) % n, 0); core.synchronize(0); core.barrier_all()
    assert dst.numpy("int64")[0] == (me - 1) % n
    core.barrier_all()
    core.free(dst); core.free(src)
    core.finalize()
    os.write(1, f"torchrun ok {me} {n} session={made[0] if made else '-'}\\n".encode())
"""


@pytest.mark.parametrize("where", ["loopback", "host"])
def test_torchrun_across_nodes(tmp_path, where):
    """RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT with LOCAL_RANK/LOCAL_WORLD_SIZE of two
    nodes of two ranks, without torch: rank 0 makes the unique ID with PE 0 on
    MASTER_ADDR (the library's default, loopback, serves one node only)."""
    addr = "127.0.0.1" if where == "loopback" else _local_ip()
    if addr is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    prog = _script(tmp_path, "tr.py", TORCHRUN_RING)
    port, exchange = free_port(), free_port()
    procs = []
    for rank in range(4):
        env = _env(RANK=str(rank), WORLD_SIZE="4", LOCAL_RANK=str(rank % 2), LOCAL_WORLD_SIZE="2",
                   GROUP_RANK=str(rank // 2), MASTER_ADDR=addr, MASTER_PORT=str(port),
                   SHMEM_UID_EXCHANGE_PORT=str(exchange), SHMEM_JOB_SECRET=SECRET)
        procs.append(subprocess.Popen([sys.executable, "-c", _NO_TORCH, prog], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for rank, (rc, out, err) in enumerate(_finish(procs)):
        assert rc == 0, out + err
        if rank == 0:
            assert f"torchrun ok 0 4 session={addr}:0" in out, out + err
            assert ("loopback" in err) == (where == "loopback"), err  # the warning, for loopback only
        else:
            assert f"torchrun ok {rank} 4 session=-" in out, out + err


def test_torchrun_on_one_node_keeps_the_librarys_address(tmp_path):
    prog = _script(tmp_path, "tr.py", TORCHRUN_RING)
    port, exchange = free_port(), free_port()
    procs = []
    for rank in range(2):
        env = _env(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), SHMEM_UID_EXCHANGE_PORT=str(exchange),
                   SHMEM_JOB_SECRET=SECRET)
        procs.append(subprocess.Popen([sys.executable, "-c", _NO_TORCH, prog], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for rank, (rc, out, err) in enumerate(_finish(procs)):
        assert rc == 0 and f"torchrun ok {rank} 2 session=-" in out, out + err
