"""Who can get a torchrun job's unique ID (it carries the job secret).

Real processes and sockets: ranks started with torchrun's variables, with torch (its
TCPStore carries the unique ID) and without it (SHMEM_JOB_SECRET authenticates the
exchange), and outsiders who know every public value of the job but not its secret."""

import hashlib
import os
import secrets
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import shmem
from shmem import _bootstrap, _uid_exchange

from harness import free_port

PKG_ROOT = os.path.dirname(os.path.dirname(shmem.__file__))
SECRET = "pyboot-test-" + secrets.token_hex(8)

# Runs a program with torch made unimportable, as on a machine without torch.
_NO_TORCH = ("import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")

# A PE program: two inits (each needs a fresh unique ID), a ring put, and a print.
RING = """
    import shmem.core as core
    for _ in range(2):
        core.init(mem_size=4 << 20)
        me, n = core.my_pe(), core.n_pes()
        src = core.buffer(8); dst = core.calloc(1, 8)
        src.numpy("int64")[0] = me
        core.barrier_all()
        core.put(dst, src, (me + 1) % n, 0); core.synchronize(0); core.barrier_all()
        assert dst.numpy("int64")[0] == (me - 1) % n
        core.barrier_all()
        core.free(dst); core.free(src)
        core.finalize()
    # One write() per line: under torchrun the ranks share one stdout, and the pieces of
    # a print() are separate writes that can interleave with the other rank's.
    import os as _os
    _os.write(1, f"ring ok {me} {n}\\n".encode())
"""


def _script(tmp_path, name, *parts):
    path = tmp_path / name
    path.write_text("\n".join(textwrap.dedent(part) for part in parts))
    return str(path)


def _env(**extra):
    env = dict(os.environ)
    for var in list(env):
        if var.startswith(("SHMEM_RUN_", "TORCHELASTIC_")) or var in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SHMEM_JOB_SECRET",
                "SHMEM_UID_EXCHANGE_PORT"):
            del env[var]
    env["PYTHONPATH"] = os.pathsep.join([PKG_ROOT, env.get("PYTHONPATH", "")])
    env["SHMEM_UID_EXCHANGE_TIMEOUT"] = "60"
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra)
    return env


def _start_rank(prog, rank, world, port, exchange=None, torch=True, **extra):
    env = _env(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), **extra)
    if exchange is not None:
        env["SHMEM_UID_EXCHANGE_PORT"] = str(exchange)
    cmd = [sys.executable, prog] if torch else [sys.executable, "-c", _NO_TORCH, prog]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(p, timeout=120):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"still running after {timeout} s:\n{out}\n{err}")
    return p.returncode, out, err


def _wait_listening(port, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "rank 0 ended early:\n" + "".join(proc.communicate())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout} s")


def _old_protocol_request(master_port, instance_id=0, generation=0):
    """The request the old exchange answered with the unique ID: a tag of public values."""
    text = f"|0|{master_port}|{instance_id}|{generation}"  # TORCHELASTIC_RUN_ID, RESTART_COUNT unset
    return struct.pack("!8sI32s", b"SHMEMUID", 1, hashlib.sha256(text.encode()).digest())


def _ask_like_an_outsider(port, request):
    """Sends request, says it is done, and returns everything the server sends back."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while True:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        return data


def test_secret_exchange_without_torch_refuses_outsiders(tmp_path):
    """Without torch, rank 0 serves the unique ID only to ranks that prove they hold
    SHMEM_JOB_SECRET: an outsider who computes the old tag from public values gets
    nothing, one who speaks the new protocol without the secret is rejected, a rank with
    another secret fails at once saying why, and the real ranks run the job."""
    prog = _script(tmp_path, "ring.py", RING)
    world, port, exchange = 3, free_port(), free_port()
    rank0 = _start_rank(prog, 0, world, port, exchange, torch=False, SHMEM_JOB_SECRET=SECRET)
    others = []
    try:
        _wait_listening(exchange, rank0)

        # The old exchange answered this with the 136-byte unique ID.
        got = _ask_like_an_outsider(exchange, _old_protocol_request(port))
        assert len(got) < _bootstrap.UID_SIZE, f"an outsider received {len(got)} bytes: {got.hex()}"

        # The new protocol with every public value but a guessed secret.
        context = _bootstrap.job_context(0, 0, port)
        for guess in ("", "guess"):
            with pytest.raises(_bootstrap.BootstrapError, match="rejected"):
                _uid_exchange.fetch_uid(1, "127.0.0.1", exchange, context, guess, 10)

        # A rank started with another secret: a clear error, at once.
        wrong = _start_rank(prog, 1, world, port, exchange, torch=False, SHMEM_JOB_SECRET="not-" + SECRET)
        rc, out, err = _finish(wrong, 60)
        assert rc != 0 and "SHMEM_JOB_SECRET" in err and "different" in err, out + err

        others = [_start_rank(prog, r, world, port, exchange, torch=False, SHMEM_JOB_SECRET=SECRET)
                  for r in range(1, world)]
        for rank, p in [(0, rank0)] + list(enumerate(others, 1)):
            rc, out, err = _finish(p)
            assert rc == 0 and f"ring ok {rank} {world}" in out, out + err
    finally:
        for p in [rank0] + others:
            if p.poll() is None:
                p.kill()
                p.communicate()


def test_without_torch_and_without_secret_init_says_what_is_needed(tmp_path):
    prog = _script(tmp_path, "noauth.py", """
        import shmem.core as core
        try:
            core.init(mem_size=1 << 20)
        except core.AclshmemError as e:
            print("refused:", e)
    """)
    for rank in (0, 1):
        p = _start_rank(prog, rank, 2, free_port(), torch=False)
        rc, out, err = _finish(p, 60)
        assert rc == 0 and "refused:" in out, out + err
        assert "SHMEM_JOB_SECRET" in out and "torch" in out, out


def _serve(secret, world=2, timeout=30):
    """A rank 0 server for a made-up job on a free port, in this process."""
    port = free_port()
    uid = secrets.token_bytes(_bootstrap.UID_SIZE)
    context = _bootstrap.job_context(0, 0, 1234)
    server = _uid_exchange.SecretUidServer(uid, world, "127.0.0.1", port, context, secret, timeout)
    return server, uid, port, context


def test_secret_exchange_idle_clients_do_not_hold_rank_0_up():
    server, uid, port, context = _serve(SECRET)
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    try:
        idle[0].sendall(b"SHMEMUX2")  # a partial hello, then silence
        t0 = time.monotonic()
        assert _uid_exchange.fetch_uid(1, "127.0.0.1", port, context, SECRET, 20) == uid
        assert time.monotonic() - t0 < _uid_exchange.HANDSHAKE_SECONDS
        # another job's (or instance's) request is told apart from a wrong secret
        with pytest.raises(_bootstrap.BootstrapError, match="another job"):
            _uid_exchange.fetch_uid(1, "127.0.0.1", port, context + "x", SECRET, 1)
        with pytest.raises(_bootstrap.BootstrapError, match="another job"):
            _uid_exchange.fetch_uid(2, "127.0.0.1", port, context, SECRET, 1)  # no rank 2 in a world of 2
    finally:
        for s in idle:
            s.close()
        server.close()


def _hello(context, rank=1):
    return _uid_exchange._HELLO.pack(_uid_exchange._MAGIC, rank, hashlib.sha256(context.encode()).digest(),
                                     secrets.token_bytes(32))


def test_secret_exchange_one_host_holds_at_most_half_the_slots():
    """Issue 23, item 4: a host that speaks the protocol up to the proof (the hello is
    public) holds at most MAX_PER_SOURCE of rank 0's slots; its connections that got that
    far are never pushed out, the rest are closed at once; a client from another address
    is served at once all the same."""
    server, uid, port, context = _serve(SECRET)
    flood = []
    try:
        for _ in range(_uid_exchange.MAX_HANDSHAKES + 8):
            conn = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
            conn.sendall(_hello(context))
            flood.append(conn)
        answered = 0
        for conn in flood:
            try:
                answered += len(conn.recv(1 + 32)) > 0  # OK and the server's nonce, or a close
            except OSError:
                pass
        assert answered == _uid_exchange.MAX_PER_SOURCE, answered
        t0 = time.monotonic()
        assert _uid_exchange.fetch_uid(1, "127.0.0.1", port, context, SECRET, 10) == uid
        assert time.monotonic() - t0 < 1.0
    finally:
        for conn in flood:
            conn.close()
        server.close()


def test_secret_exchange_client_retries_and_names_the_drops():
    """A rank whose connections rank 0 keeps closing before its verdict tries again with
    doubling waits until its timeout, then says that it was dropped (not that the secrets
    differ, nor that rank 0 is absent)."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    lsock.settimeout(0.2)
    port = lsock.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def dropper():
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                continue
            conn.recv(1024)  # its hello; then the door
            conn.close()
            accepted.append(1)

    t = threading.Thread(target=dropper, daemon=True)
    t.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(_bootstrap.BootstrapError, match="dropped the connection before authentication"):
            _uid_exchange.fetch_uid(1, "127.0.0.1", port, "ctx", SECRET, 2)
    finally:
        stop.set()
        t.join(10)
        lsock.close()
    assert 1.9 < time.monotonic() - t0 < 4
    assert 4 <= len(accepted) < 40, len(accepted)  # tried again, with waits in between


def test_secret_exchange_client_checks_the_server():
    """A server that does not know the secret cannot hand a rank a unique ID of its own."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    port = lsock.getsockname()[1]

    def impostor():
        conn, _ = lsock.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"\0" + secrets.token_bytes(32))
            conn.recv(4096)
            conn.sendall(b"\0" + secrets.token_bytes(_bootstrap.UID_SIZE + 32))

    t = threading.Thread(target=impostor, daemon=True)
    t.start()
    try:
        with pytest.raises(_bootstrap.BootstrapError, match="did not prove"):
            _uid_exchange.fetch_uid(1, "127.0.0.1", port, "ctx", SECRET, 10)
    finally:
        t.join(10)
        lsock.close()


def _need_torch():
    pytest.importorskip("torch")
    if _bootstrap._torch_distributed() is None:
        pytest.skip("torch.distributed has no TCPStore here")


def test_torchrun_exchanges_the_uid_through_the_agent_store(tmp_path):
    """Real torchrun: every rank is a client of the agent's store; after init the unique
    ID is no longer in it, and nobody serves anything on MASTER_PORT + 1."""
    _need_torch()
    prog = _script(tmp_path, "tr.py", RING, """
    import os
    from datetime import timedelta
    import torch.distributed as dist
    from shmem import _bootstrap
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), None, False,
                          timedelta(seconds=30), wait_for_workers=False)
    keys = [_bootstrap._store_key(_bootstrap.job_context(0, g, os.environ["MASTER_PORT"])) for g in (0, 1)]
    # One write() of the whole line: the ranks share torchrun's stdout, and separate writes
    # of one print() can interleave with the other rank's.
    os.write(1, f"left in store: {[store.check([k]) for k in keys]}\\n".encode())
    """)
    port = free_port()
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", "--master-port", str(port), prog]
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    for rank in range(2):
        assert f"ring ok {rank} 2" in p.stdout, p.stdout + p.stderr
    assert p.stdout.count("left in store: [False, False]") == 2, p.stdout


def test_torch_store_hosted_by_rank_0_next_to_init_process_group(tmp_path):
    """torchrun's variables without its agent: rank 0 hosts the store on MASTER_PORT, and
    shares it with a torch.distributed process group of the same process."""
    _need_torch()
    prog = _script(tmp_path, "pg.py", """
        import torch.distributed as dist
        dist.init_process_group("gloo")
    """, RING, """
        dist.barrier()
        dist.destroy_process_group()
    """)
    world, port = 2, free_port()
    ranks = [_start_rank(prog, r, world, port) for r in range(world)]
    try:
        for rank, p in enumerate(ranks):
            rc, out, err = _finish(p, 180)
            assert rc == 0 and f"ring ok {rank} {world}" in out, out + err
    finally:
        for p in ranks:
            if p.poll() is None:
                p.kill()
                p.communicate()
