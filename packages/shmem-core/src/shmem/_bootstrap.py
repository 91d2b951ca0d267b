"""Where ``shmem.core.init()`` finds its unique ID, rank and PE count when the caller
passes no ``uid``.

1. ``python -m shmem.run`` (and ``shmem.testing.run_pes``) make the unique ID
   themselves and start every PE with::

       SHMEM_RUN_UID       the 136-byte unique ID, hex
       SHMEM_RUN_PE        this PE's rank
       SHMEM_RUN_NPES      the number of PEs
       SHMEM_RUN_MEM_SIZE  optional: the default of init(mem_size=...)

   That unique ID serves the initialisation of instance 0; other instances need a
   ``uid`` passed explicitly (one unique ID per instance).

2. ``torchrun`` (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; LOCAL_RANK is not needed).
   Rank 0 makes a unique ID and serves it over a small TCP exchange on
   ``MASTER_ADDR:SHMEM_UID_EXCHANGE_PORT`` (default ``MASTER_PORT + 1``); the other
   ranks connect, retrying until ``SHMEM_UID_EXCHANGE_TIMEOUT`` seconds (default 120)
   pass.  Torch is not needed.  Each request names the job (TORCHELASTIC_RUN_ID,
   MASTER_PORT), the instance ID and how many times this process initialised before,
   so several instances and re-initialisations each get a fresh unique ID.  Like
   torch's own TCP store, the exchange is not encrypted: use it on trusted networks,
   or pass ``uid=`` yourself.
"""

import os
import socket
import struct
import threading
import time

ENV_UID = "SHMEM_RUN_UID"
ENV_PE = "SHMEM_RUN_PE"
ENV_NPES = "SHMEM_RUN_NPES"
ENV_MEM_SIZE = "SHMEM_RUN_MEM_SIZE"
ENV_EXCHANGE_PORT = "SHMEM_UID_EXCHANGE_PORT"
ENV_EXCHANGE_TIMEOUT = "SHMEM_UID_EXCHANGE_TIMEOUT"

UID_SIZE = 136
_MAGIC = b"SHMEMUID"
_REQUEST = struct.Struct("!8sI32s")  # magic, requesting rank, tag

# How many times this process initialised each instance from its environment.
_init_counts = {}
_counts_lock = threading.Lock()


class BootstrapError(RuntimeError):
    pass


def launcher_env():
    """(uid bytes, rank, n_pes) from the launcher's variables, or None."""
    text = os.environ.get(ENV_UID)
    if not text:
        return None
    try:
        uid = bytes.fromhex(text.strip())
    except ValueError:
        raise BootstrapError(f"{ENV_UID} is not hex") from None
    if len(uid) != UID_SIZE:
        raise BootstrapError(f"{ENV_UID} holds {len(uid)} bytes, a unique ID has {UID_SIZE}")
    try:
        rank = int(os.environ[ENV_PE])
        n_pes = int(os.environ[ENV_NPES])
    except (KeyError, ValueError):
        raise BootstrapError(f"{ENV_UID} is set but {ENV_PE} / {ENV_NPES} are missing or not integers") from None
    return uid, rank, n_pes


def default_mem_size():
    text = os.environ.get(ENV_MEM_SIZE)
    if not text:
        return None
    return parse_size(text)


def parse_size(text):
    """Bytes from "1048576", "64M", "1G", "512k" (binary units)."""
    t = str(text).strip().upper()
    if t.endswith("B"):
        t = t[:-1]
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    mult = 1
    if t and t[-1] in units:
        mult = units[t[-1]]
        t = t[:-1]
    try:
        value = float(t) if "." in t else int(t)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use bytes or a K/M/G suffix)") from None
    return int(value * mult)


def torchrun_env():
    """(rank, world_size, master_addr, master_port) when torchrun-style variables are set."""
    need = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    if not all(os.environ.get(k) for k in need):
        return None
    try:
        return (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]),
                os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
    except ValueError:
        raise BootstrapError("RANK, WORLD_SIZE and MASTER_PORT must be integers") from None


def next_init_number(instance_id):
    with _counts_lock:
        n = _init_counts.get(instance_id, 0)
        _init_counts[instance_id] = n + 1
        return n


def _tag(instance_id, generation, master_port):
    import hashlib

    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    text = f"{run_id}|{restart}|{master_port}|{instance_id}|{generation}"
    return hashlib.sha256(text.encode()).digest()


def exchange_port(master_port):
    text = os.environ.get(ENV_EXCHANGE_PORT)
    return int(text) if text else master_port + 1


def exchange_timeout():
    text = os.environ.get(ENV_EXCHANGE_TIMEOUT)
    return float(text) if text else 120.0


class UidServer:
    """Rank 0's side: serves ``uid`` to the other ranks of the job, then stops."""

    def __init__(self, uid, world_size, host, port, tag, timeout):
        self.uid = uid
        self.pending = set(range(1, world_size))
        self.tag = tag
        self.deadline = time.monotonic() + timeout
        self.sock = None
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise BootstrapError(
                f"rank 0 cannot serve the unique ID on {host}:{port}: {exc}. Set {ENV_EXCHANGE_PORT} "
                "to a free port (the same on every rank), or pass uid= to init"
            ) from None
        sock.listen(128)
        sock.settimeout(0.2)
        self.sock = sock
        self.thread = threading.Thread(target=self._serve, name="shmem-uid-server", daemon=True)
        if self.pending:
            self.thread.start()
        else:
            self.close()

    def _serve(self):
        try:
            while self.pending and time.monotonic() < self.deadline:
                try:
                    conn, _ = self.sock.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                with conn:
                    try:
                        conn.settimeout(5.0)
                        data = _recv_exact(conn, _REQUEST.size)
                        magic, rank, tag = _REQUEST.unpack(data)
                        if magic != _MAGIC or tag != self.tag:
                            continue  # someone else's job or an old request: say nothing
                        conn.sendall(self.uid)
                        self.pending.discard(rank)
                    except (OSError, struct.error):
                        continue
        finally:
            self.close()

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass


def _recv_exact(conn, n):
    chunks = []
    while n:
        chunk = conn.recv(n)
        if not chunk:
            raise OSError("connection closed early")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def fetch_uid(rank, host, port, tag, timeout):
    """A rank other than 0: asks rank 0 for the unique ID until it answers."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=5.0) as conn:
                conn.sendall(_REQUEST.pack(_MAGIC, rank, tag))
                return _recv_exact(conn, UID_SIZE)
        except OSError as exc:
            last = exc
            time.sleep(0.1)
    raise BootstrapError(
        f"rank {rank} got no unique ID from rank 0 at {host}:{port} within {timeout:g} s "
        f"(last error: {last}). Is rank 0 running and calling init? Set {ENV_EXCHANGE_PORT} if "
        "that port is taken"
    )


def torchrun_uid(rank, world_size, host, master_port, instance_id, make_uid):
    """The unique ID of this torchrun job; rank 0 makes it with make_uid().

    Returns (uid bytes, server or None): rank 0 must close the server after init."""
    generation = next_init_number(instance_id)
    port = exchange_port(master_port)
    tag = _tag(instance_id, generation, master_port)
    timeout = exchange_timeout()
    if rank == 0:
        uid = make_uid()
        return uid, UidServer(uid, world_size, host, port, tag, timeout)
    return fetch_uid(rank, host, port, tag, timeout), None
