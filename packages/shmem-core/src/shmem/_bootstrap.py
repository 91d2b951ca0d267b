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

   On several nodes (``--nnodes``), node 0's launcher makes the unique ID and serves it
   to the other nodes' launchers on ``--master-addr:--master-port`` through the
   SHMEM_JOB_SECRET exchange below (``SecretUidServer`` / ``fetch_uid``, with the
   launchers' own names in the messages).

2. ``torchrun`` (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; LOCAL_RANK is not needed,
   LOCAL_WORLD_SIZE tells one node from several).
   Rank 0 makes a unique ID and hands it to the other ranks.  The unique ID carries the
   job's secret (whoever holds it can join the job and map every PE's heap), so it only
   travels where the job already trusts:

   * torch importable: through torch's ``TCPStore`` on ``MASTER_ADDR:MASTER_PORT``, the
     store torch.distributed itself rendezvouses through.  Under torchrun
     (``TORCHELASTIC_USE_AGENT_STORE=True``) that store is the elastic agent's and every
     rank is a client of it; otherwise rank 0 hosts it (multi-tenant, so a
     ``torch.distributed.init_process_group`` in the same process shares it).  Whoever
     can reach that port can read the store, so this is exactly torch.distributed's
     trust: a network where only the job's hosts reach MASTER_PORT.  Rank 0 deletes the
     key once init has completed (every rank has joined by then).

   * torch not importable: every rank must have the same ``SHMEM_JOB_SECRET``.  Rank 0
     serves the unique ID on ``MASTER_ADDR:SHMEM_UID_EXCHANGE_PORT`` (default
     ``MASTER_PORT + 1``) only to a client that proves, by an HMAC-SHA256 over fresh
     nonces of both sides, that it holds the secret; the answer proves the same of rank 0
     and carries the unique ID encrypted with a key stream derived from the secret and
     the nonces.  Without torch and without the secret, init fails and says so: there is
     no unauthenticated exchange.

   The unique ID also names PE 0's control-plane address, which every PE connects to.
   The library's default is loopback, which serves one node only; so unless
   LOCAL_WORLD_SIZE equals WORLD_SIZE (one node), rank 0 makes it with PE 0 on
   MASTER_ADDR's address (``uid_address``: the address itself when it is this host's,
   else the one this host reaches it from); when LOCAL_WORLD_SIZE < WORLD_SIZE and that
   address can only be loopback, it warns.
   ``SHMEM_UID_SESSION_ID`` or ``SHMEM_UID_SOCK_IFNAME``, when set, choose instead.

   The other ranks keep trying until ``SHMEM_UID_EXCHANGE_TIMEOUT`` seconds (default 120)
   pass.  Each exchange is named by the job (TORCHELASTIC_RUN_ID,
   TORCHELASTIC_RESTART_COUNT, MASTER_PORT), the instance ID and how many times this
   process initialised that instance before, so several instances, re-initialisations
   and elastic restarts each get a fresh unique ID.
"""

import hashlib
import hmac
import ipaddress
import math
import os
import random
import secrets
import selectors
import socket
import struct
import threading
import time
import warnings
from datetime import timedelta

from ._sizes import parse_size

ENV_UID = "SHMEM_RUN_UID"
ENV_PE = "SHMEM_RUN_PE"
ENV_NPES = "SHMEM_RUN_NPES"
ENV_MEM_SIZE = "SHMEM_RUN_MEM_SIZE"
ENV_EXCHANGE_PORT = "SHMEM_UID_EXCHANGE_PORT"
ENV_EXCHANGE_TIMEOUT = "SHMEM_UID_EXCHANGE_TIMEOUT"
ENV_JOB_SECRET = "SHMEM_JOB_SECRET"
ENV_UID_SESSION = "SHMEM_UID_SESSION_ID"
ENV_UID_IFNAME = "SHMEM_UID_SOCK_IFNAME"

UID_SIZE = 136

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
    _check_rank(rank, n_pes, ENV_PE, ENV_NPES)
    return uid, rank, n_pes


def _check_rank(rank, n_pes, rank_name, size_name):
    if n_pes < 1 or not 0 <= rank < n_pes:
        raise BootstrapError(f"{rank_name}={rank} and {size_name}={n_pes} must satisfy 0 <= {rank_name} < "
                             f"{size_name}")


def _port(text, name):
    """A TCP port (1..65535) from the variable ``name``."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise BootstrapError(f"{name}={text!r} is not a TCP port (1..65535)")
    return port


def default_mem_size():
    text = os.environ.get(ENV_MEM_SIZE)
    if not text:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise ValueError(f"{ENV_MEM_SIZE}: {exc}") from None


def torchrun_env():
    """(rank, world_size, master_addr, master_port) when torchrun-style variables are set."""
    need = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    if not all(os.environ.get(k) for k in need):
        return None
    try:
        rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except ValueError:
        raise BootstrapError("RANK and WORLD_SIZE must be integers") from None
    _check_rank(rank, world_size, "RANK", "WORLD_SIZE")
    master_port = _port(os.environ["MASTER_PORT"], "MASTER_PORT")
    exchange_timeout()  # what the exchange will read, checked before it starts
    if os.environ.get(ENV_EXCHANGE_PORT):
        exchange_port(master_port)
    return rank, world_size, os.environ["MASTER_ADDR"], master_port


def next_init_number(instance_id):
    with _counts_lock:
        n = _init_counts.get(instance_id, 0)
        _init_counts[instance_id] = n + 1
        return n


def job_context(instance_id, generation, master_port):
    """The public name of one unique-ID exchange: which job, restart, instance and init."""
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return f"{run_id}|{restart}|{master_port}|{instance_id}|{generation}"


def exchange_port(master_port):
    """The port of the unique-ID exchange without torch's store: SHMEM_UID_EXCHANGE_PORT,
    else MASTER_PORT + 1."""
    text = os.environ.get(ENV_EXCHANGE_PORT)
    if text:
        return _port(text, ENV_EXCHANGE_PORT)
    if master_port + 1 > 65535:
        raise BootstrapError(f"the unique-ID exchange listens on MASTER_PORT + 1 = {master_port + 1}, which is not "
                             f"a TCP port: set {ENV_EXCHANGE_PORT}")
    return master_port + 1


def exchange_timeout():
    """Seconds the unique-ID exchange may take: SHMEM_UID_EXCHANGE_TIMEOUT, else 120."""
    text = os.environ.get(ENV_EXCHANGE_TIMEOUT)
    if not text:
        return 120.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= threading.TIMEOUT_MAX:  # also refuses nan and inf
        raise BootstrapError(f"{ENV_EXCHANGE_TIMEOUT}={text!r} is not a number of seconds in "
                             f"(0, {threading.TIMEOUT_MAX:g}]")
    return seconds


def _torch_distributed():
    """torch.distributed when torch is importable and has its TCPStore, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not dist.is_available() or not hasattr(dist, "TCPStore"):
        return None
    return dist


def torchrun_uid(rank, world_size, host, master_port, instance_id, make_uid):
    """The unique ID of this torchrun job; rank 0 makes it with make_uid().

    Returns (uid bytes, closer or None): rank 0 must call closer.close() once init has
    completed (or failed)."""
    generation = next_init_number(instance_id)
    context = job_context(instance_id, generation, master_port)
    timeout = exchange_timeout()
    if rank == 0:
        make_uid = _torchrun_uid_maker(make_uid, host, world_size)
    dist = _torch_distributed()
    if dist is not None:
        return _store_exchange(dist, rank, world_size, host, master_port, context, timeout, make_uid)
    secret = os.environ.get(ENV_JOB_SECRET, "")
    if not secret:
        raise BootstrapError(
            f"rank {rank} cannot receive the unique ID safely: torch is not importable (its TCPStore "
            f"on MASTER_ADDR:MASTER_PORT would carry it) and {ENV_JOB_SECRET} is not set. Install "
            f"torch, or set {ENV_JOB_SECRET} to the same private value on every rank, or pass uid= "
            "(with rank and nranks) to init")
    port = exchange_port(master_port)
    if rank == 0:
        uid = make_uid()
        return uid, SecretUidServer(uid, world_size, host, port, context, secret, timeout)
    return fetch_uid(rank, host, port, context, secret, timeout), None


def _torchrun_multi_node(world_size):
    """True / False when LOCAL_WORLD_SIZE tells whether the ranks span several nodes, else None."""
    try:
        local = int(os.environ.get("LOCAL_WORLD_SIZE", ""))
    except ValueError:
        return None
    return local < world_size


def _torchrun_uid_maker(make_uid, master_addr, world_size):
    """make_uid, made to put an address of MASTER_ADDR's host in the unique ID when the
    ranks may span several nodes (the library's default, loopback, serves one node)."""
    multi_node = _torchrun_multi_node(world_size)
    if multi_node is False:
        return make_uid

    def make():
        session, note = uid_address(master_addr, multi_node=bool(multi_node), what="MASTER_ADDR")
        if note and multi_node:
            warnings.warn(f"shmem: {note}", RuntimeWarning, stacklevel=2)
        return make_uid_at(make_uid, session)

    return make


# ---------------------------------------------------------------------------
# PE 0's address in a unique ID made for several nodes
#
# aclshmem_get_unique_id puts PE 0's control-plane address in the unique ID: the one of
# SHMEM_UID_SESSION_ID (ip:port), else of the interface SHMEM_UID_SOCK_IFNAME, else
# loopback, which only PEs on the same host (and network namespace) can reach.  For a
# job across nodes, the launcher of node 0 (or torchrun's rank 0) knows an address the
# other nodes reach it at, the master address, and makes the unique ID with it.
# ---------------------------------------------------------------------------

def _resolve(host):
    """[(family, ip)] of host, in getaddrinfo's order, without repeats."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    out = []
    for family, _, _, _, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6) and (family, sockaddr[0]) not in out:
            out.append((family, sockaddr[0]))
    return out


def _is_local(family, ip):
    """Whether ip is an address of this host (in this network namespace)."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((ip, 0))
        return True
    except OSError:
        return False


def _route_source(family, ip):
    """The address this host sends from to reach ip (no packet is sent), or None."""
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((ip, 9))
            return s.getsockname()[0]
    except OSError:
        return None


def _is_loopback(ip):
    try:
        return ipaddress.ip_address(ip.split("%")[0]).is_loopback
    except ValueError:
        return False


def _is_ip_literal(host):
    try:
        ipaddress.ip_address(host.split("%")[0])
        return True
    except ValueError:
        return False


def _session_text(family, ip):
    return f"[{ip}]:0" if family == socket.AF_INET6 else f"{ip}:0"


def master_is_local(master_addr):
    """Whether master_addr names an address of this host (network namespace)."""
    return any(_is_local(family, ip) for family, ip in _resolve(master_addr))


def uid_address(master_addr, multi_node=True, what="the master address"):
    """Where PE 0 should listen when the unique ID is made on the host of master_addr
    (the address the other nodes reach this host at).

    Returns (session, note): session is a value for SHMEM_UID_SESSION_ID ("ip:0", a free
    port at ip) or None to keep the library's choice; note says why the result may not be
    reachable from other hosts (None when all is well).  SHMEM_UID_SESSION_ID and
    SHMEM_UID_SOCK_IFNAME, when set, are the user's choice and win."""
    if os.environ.get(ENV_UID_SESSION) or os.environ.get(ENV_UID_IFNAME):
        return None, None
    fix = (f"give node 0's address on the network the nodes share, or set {ENV_UID_IFNAME} "
           f"(an interface) or {ENV_UID_SESSION} (ip:port) for PE 0's address")
    addrs = _resolve(master_addr)
    if not addrs:
        return None, (f"{what} {master_addr!r} does not resolve here, so PE 0 listens on loopback, which "
                      f"PEs on other hosts cannot reach: {fix}")
    local = [(family, ip) for family, ip in addrs if _is_local(family, ip)]
    for family, ip in local:
        if not _is_loopback(ip):
            return _session_text(family, ip), None
    if local:
        family, ip = local[0]
        if not multi_node:
            return _session_text(family, ip), None
        if _is_ip_literal(master_addr):
            return _session_text(family, ip), (
                f"{what} {master_addr} is a loopback address: PE 0 listens on {ip}, so only PEs on this "
                "host (and network namespace) can join; for nodes on other hosts, " + fix)
        return _session_text(family, ip), (
            f"{what} {master_addr!r} resolves to {ip} on this host, a loopback address: PE 0 listens "
            f"there, which PEs on other hosts cannot reach (nor can they reach {master_addr!r} there); "
            + fix)
    # master_addr is not an address of this host (a forwarded or virtual address): the
    # address this host sends from towards it is on the network the nodes share.
    family, ip = addrs[0]
    source = _route_source(family, ip)
    if source and not _is_loopback(source):
        return _session_text(family, source), None
    return None, (f"{what} {master_addr!r} is not an address of this host and no route to it was found, "
                  f"so PE 0 listens on loopback, which PEs on other hosts cannot reach: {fix}")


def make_uid_at(make_uid, session):
    """make_uid() with SHMEM_UID_SESSION_ID set to session (unless None) for the call."""
    if session is None:
        return make_uid()
    old = os.environ.get(ENV_UID_SESSION)
    os.environ[ENV_UID_SESSION] = session
    try:
        return make_uid()
    finally:
        if old is None:
            os.environ.pop(ENV_UID_SESSION, None)
        else:
            os.environ[ENV_UID_SESSION] = old


# ---------------------------------------------------------------------------
# torch's TCPStore
# ---------------------------------------------------------------------------

def _store_key(context):
    return "shmem/unique_id/" + context


def _agent_store_in_use():
    """torchrun's elastic agent hosts the store on MASTER_PORT; every rank is a client."""
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"


def _open_store(dist, rank, host, port, timeout):
    hosting = rank == 0 and not _agent_store_in_use()
    try:
        # world_size None and no waiting for workers: this store must not take part in the
        # agent's or torch.distributed's counting of who has connected.
        return dist.TCPStore(host, port, None, hosting, timedelta(seconds=timeout), wait_for_workers=False,
                             multi_tenant=hosting)
    except Exception as exc:  # torch raises its own RuntimeError subclasses
        role = "host" if hosting else "reach"
        raise BootstrapError(
            f"rank {rank} cannot {role} torch's TCPStore on {host}:{port} to exchange the unique ID: "
            f"{exc}. Is MASTER_PORT right (and free on rank 0 when no torchrun agent hosts it)? Or pass "
            "uid= to init") from None


class _StoreEntry:
    """Rank 0's unique ID in the store: deleted by close(), once every rank has joined."""

    def __init__(self, store, key):
        self.store = store
        self.key = key

    def close(self):
        if self.store is None:
            return
        store, self.store = self.store, None
        try:
            store.delete_key(self.key)
        except Exception:
            pass  # the store is gone: so is the key


def _store_exchange(dist, rank, world_size, host, port, context, timeout, make_uid):
    store = _open_store(dist, rank, host, port, timeout)
    key = _store_key(context)
    if rank == 0:
        uid = make_uid()
        store.set(key, uid)
        return uid, _StoreEntry(store, key)
    try:
        uid = store.get(key)
    except Exception as exc:
        raise BootstrapError(
            f"rank {rank} got no unique ID from rank 0 through torch's TCPStore on {host}:{port} within "
            f"{timeout:g} s ({exc}). Is rank 0 running and calling init?") from None
    if len(uid) != UID_SIZE:
        raise BootstrapError(f"the unique ID in torch's TCPStore has {len(uid)} bytes, not {UID_SIZE}")
    return bytes(uid), None


# ---------------------------------------------------------------------------
# The SHMEM_JOB_SECRET exchange (no torch)
#
#   client -> server  HELLO: magic, rank, sha256(context), client nonce
#   server -> client  status (OK, or OTHER_JOB and close), server nonce
#   client -> server  proof = HMAC(key, "client" | context | rank | nonces)
#   server -> client  status (OK, or REJECTED and close), uid XOR key stream,
#                     HMAC(key, "server" | context | rank | nonces | ciphertext)
#
# key = HMAC(SHMEM_JOB_SECRET, label).  Fresh nonces on both sides: a recorded
# conversation proves nothing a second time, and no answer helps to guess the secret.
# ---------------------------------------------------------------------------

_MAGIC = b"SHMEMUX2"
_HELLO = struct.Struct("!8sI32s32s")  # magic, rank, context digest, client nonce
_NONCE = 32
_MAC = 32
_OK, _REJECTED, _OTHER_JOB = 0, 1, 2
# A client gets this long to finish its handshake; rank 0 serves at most MAX_HANDSHAKES at
# once, at most MAX_PER_SOURCE of them from one address (an IPv6 /64): all the launchers or
# ranks of one node come from one address, and those beyond it try again a moment later.
HANDSHAKE_SECONDS = 5.0
MAX_HANDSHAKES = 32
MAX_PER_SOURCE = MAX_HANDSHAKES // 2


class Roles:
    """How the messages of an exchange name its two sides: torchrun's ranks, or the
    launchers of the nodes of ``python -m shmem.run --nnodes``."""

    def __init__(self, client, server, group, wait_hint, bind_hint):
        self.client = client        # "rank 3"
        self.server = server        # "rank 0"
        self.group = group          # "the ranks"
        self.wait_hint = wait_hint  # what to check when the server never answers
        self.bind_hint = bind_hint  # what to do when the server cannot listen


def torchrun_roles(rank=0):
    return Roles(f"rank {rank}", "rank 0", "the ranks",
                 f"Is rank 0 running and calling init? Set {ENV_EXCHANGE_PORT} if that port is taken",
                 f"Set {ENV_EXCHANGE_PORT} to a free port (the same on every rank), or pass uid= to init")


def _derive_key(secret):
    return hmac.new(secret.encode(), b"shmem unique-id exchange v2", hashlib.sha256).digest()


def _transcript(context_digest, rank, cnonce, snonce):
    return context_digest + struct.pack("!I", rank) + cnonce + snonce


def _key_stream(key, transcript, n):
    blocks = []
    for i in range(-(-n // 32)):
        blocks.append(hmac.new(key, b"stream" + transcript + struct.pack("!I", i), hashlib.sha256).digest())
    return b"".join(blocks)[:n]


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def _mac(key, label, *parts):
    return hmac.new(key, label + b"".join(parts), hashlib.sha256).digest()


def _recv_exact(conn, n, deadline):
    chunks = []
    while n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("handshake took too long")
        conn.settimeout(remaining)
        chunk = conn.recv(n)
        if not chunk:
            raise _Dropped("connection closed early")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _source(peer):
    """What the per-source cap counts: an IPv4 address, or the /64 of an IPv6 one."""
    try:
        addr = ipaddress.ip_address(peer[0].split("%")[0])
    except ValueError:
        return peer[0]
    if addr.version == 6 and addr.ipv4_mapped:
        return str(addr.ipv4_mapped)
    return str(addr) if addr.version == 4 else str(ipaddress.ip_network(f"{addr}/64", strict=False))


class _Handshake:
    """A connection rank 0 serves: idle until a well-formed hello for this job arrives,
    then progressing (it is never pushed out) until its proof arrives."""

    __slots__ = ("conn", "peer", "source", "arrival", "round", "deadline", "inbox", "rank", "cnonce", "snonce")

    def __init__(self, conn, peer, arrival, round_):
        self.conn, self.peer, self.source = conn, peer, _source(peer)
        self.arrival, self.round = arrival, round_
        self.deadline = time.monotonic() + HANDSHAKE_SECONDS
        self.inbox = b""
        self.rank = self.cnonce = self.snonce = None

    @property
    def progressing(self):
        return self.snonce is not None


class SecretUidServer:
    """Rank 0's side: serves ``uid`` to clients that prove they hold the job secret,
    until close() or ``timeout`` seconds pass.

    ``served`` holds the ranks that got the unique ID, and ``all_served`` is set once
    every rank 1..world_size-1 has; ``refused`` lists (address, rank) of clients whose
    proof of the secret was wrong; ``displaced`` and ``turned_away`` count connections
    that had sent nothing and made way for a newcomer, and newcomers closed at once for
    want of room (a flood).

    One thread serves every connection without blocking.  Nobody can hold it shut by
    connecting and saying nothing: a connection that has sent a well-formed hello for
    this job is never pushed out, and when the slots are full a newcomer takes the place
    of the idle connection that has waited longest (and has been polled once, so bytes it
    already sent are read first), or is closed at once when none can make way (a real
    client tries again).  One address holds at most MAX_PER_SOURCE slots; past that its
    newcomers can only push out its own idle connections."""

    def __init__(self, uid, world_size, host, port, context, secret, timeout, roles=None):
        roles = roles or torchrun_roles()
        self.uid = uid
        self.world_size = world_size
        self.served = set()
        self.all_served = threading.Event()
        self.refused = []
        self.displaced = self.turned_away = 0
        self._record_lock = threading.Lock()
        self.context_digest = hashlib.sha256(context.encode()).digest()
        self.key = _derive_key(secret)
        self.deadline = time.monotonic() + timeout
        self.pending = {}  # socket -> _Handshake
        self.arrivals = self.round = 0
        self.closed = threading.Event()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise BootstrapError(
                f"{roles.server} cannot serve the unique ID on {host}:{port}: {exc}. {roles.bind_hint}") from None
        sock.listen(128)
        sock.setblocking(False)
        self.sock = sock
        self.thread = threading.Thread(target=self._serve_loop, name="shmem-uid-server", daemon=True)
        if world_size > 1:
            self.thread.start()
        else:
            self.all_served.set()
            self.close()

    def _serve_loop(self):
        selector = selectors.DefaultSelector()
        try:
            selector.register(self.sock, selectors.EVENT_READ)
            while not self.closed.is_set() and time.monotonic() < self.deadline:
                ready = selector.select(self._wait_seconds())
                self.round += 1  # every connection registered now has been polled
                for key, _ in ready:
                    if key.fileobj is not self.sock:
                        self._advance(selector, key.data)
                self._expire(selector)
                if any(key.fileobj is self.sock for key, _ in ready):
                    self._accept(selector)
        except (OSError, ValueError):
            pass  # closed under us
        finally:
            for h in list(self.pending.values()):
                self._drop(selector, h)
            selector.close()
            self.close()

    def _wait_seconds(self):
        now = time.monotonic()
        soonest = min([h.deadline for h in self.pending.values()] + [now + 0.2])
        return max(0.0, soonest - now)

    def _drop(self, selector, h):
        self.pending.pop(h.conn, None)
        try:
            selector.unregister(h.conn)
        except (KeyError, ValueError):
            pass
        h.conn.close()

    def _expire(self, selector):
        now = time.monotonic()
        for h in [h for h in self.pending.values() if now >= h.deadline]:
            self._drop(selector, h)

    def _make_room(self, selector, source):
        """True when a newcomer from source may have a slot (an idle one may have made way)."""
        mine = [h for h in self.pending.values() if h.source == source]
        if len(mine) < MAX_PER_SOURCE and len(self.pending) < MAX_HANDSHAKES:
            return True
        candidates = mine if len(mine) >= MAX_PER_SOURCE else self.pending.values()
        idle = [h for h in candidates if not h.progressing and h.round < self.round]
        if not idle:
            self.turned_away += 1
            return False
        self.displaced += 1
        self._drop(selector, min(idle, key=lambda h: h.arrival))
        return True

    def _accept(self, selector):
        for _ in range(MAX_HANDSHAKES):
            try:
                conn, peer = self.sock.accept()
            except OSError:
                if self.closed.is_set():
                    raise
                return  # none waiting, or one that reset before it was taken: next round
            if not self._make_room(selector, _source(peer)):
                conn.close()  # it has sent nothing yet; a real client tries again
                continue
            conn.setblocking(False)
            self.arrivals += 1
            h = _Handshake(conn, peer, self.arrivals, self.round)
            self.pending[conn] = h
            selector.register(conn, selectors.EVENT_READ, h)

    def _advance(self, selector, h):
        """Reads what h has sent and answers each complete message; drops h when it is done,
        broke the protocol or hung up."""
        want = _HELLO.size + (_MAC if h.progressing else 0)
        try:
            chunk = h.conn.recv(want - len(h.inbox))
            if not chunk:
                raise ConnectionError("hung up")
            h.inbox += chunk
            if len(h.inbox) < want:
                return
            if h.progressing:
                self._judge_proof(h)
                self._drop(selector, h)
            elif not self._hello(h):
                self._drop(selector, h)
        except (OSError, ValueError, struct.error):
            self._drop(selector, h)  # a client that breaks the protocol learns nothing

    def _hello(self, h):
        """True when h sent a well-formed hello for this job (it now progresses)."""
        magic, rank, context_digest, cnonce = _HELLO.unpack(h.inbox)
        if (magic != _MAGIC or not hmac.compare_digest(context_digest, self.context_digest)
                or not 0 < rank < self.world_size):
            h.conn.sendall(bytes([_OTHER_JOB]))
            return False
        h.rank, h.cnonce, h.snonce = rank, cnonce, secrets.token_bytes(_NONCE)
        h.conn.sendall(bytes([_OK]) + h.snonce)  # a few bytes on a fresh socket: never blocks
        return True

    def _judge_proof(self, h):
        transcript = _transcript(self.context_digest, h.rank, h.cnonce, h.snonce)
        if not hmac.compare_digest(h.inbox[_HELLO.size:], _mac(self.key, b"client", transcript)):
            with self._record_lock:
                if len(self.refused) < 100:
                    self.refused.append((h.peer[0], h.rank))
            h.conn.sendall(bytes([_REJECTED]))
            return
        sealed = _xor(self.uid, _key_stream(self.key, transcript, len(self.uid)))
        h.conn.sendall(bytes([_OK]) + sealed + _mac(self.key, b"server", transcript, sealed))
        with self._record_lock:
            self.served.add(h.rank)
            if len(self.served) == self.world_size - 1:
                self.all_served.set()

    def close(self):
        self.closed.set()
        try:
            self.sock.close()
        except OSError:
            pass


class _OtherJob(Exception):
    """The server at the address serves another job, instance or init (for now)."""


class _Dropped(ConnectionError):
    """The server closed the connection before its verdict (it was full, or flooded)."""


# A client that was dropped waits this long before its next try, doubling up to the
# most, with a random part so that clients dropped together do not come back together.
_RETRY_FIRST = 0.05
_RETRY_MOST = 1.0


def _ask_once(conn, rank, context_digest, key, deadline, where, roles):
    cnonce = secrets.token_bytes(_NONCE)
    conn.sendall(_HELLO.pack(_MAGIC, rank, context_digest, cnonce))
    status = _recv_exact(conn, 1, deadline)[0]
    if status != _OK:
        raise _OtherJob()
    snonce = _recv_exact(conn, _NONCE, deadline)
    transcript = _transcript(context_digest, rank, cnonce, snonce)
    conn.sendall(_mac(key, b"client", transcript))
    status = _recv_exact(conn, 1, deadline)[0]
    if status == _REJECTED:
        raise BootstrapError(
            f"{roles.server} at {where} rejected {roles.client}'s proof of {ENV_JOB_SECRET}: {roles.group} "
            f"were started with different {ENV_JOB_SECRET} values")
    reply = _recv_exact(conn, UID_SIZE + _MAC, deadline)
    sealed, mac = reply[:UID_SIZE], reply[UID_SIZE:]
    if status != _OK or not hmac.compare_digest(mac, _mac(key, b"server", transcript, sealed)):
        raise BootstrapError(
            f"the server at {where} did not prove that it holds {ENV_JOB_SECRET}: it is not {roles.server} "
            f"of this job, or {roles.server} has a different {ENV_JOB_SECRET}")
    return _xor(sealed, _key_stream(key, transcript, UID_SIZE))


def _ask(host, port, deadline, ask):
    """One try: connects and runs ask(conn, step_deadline).  A connection that breaks
    after it was made counts as dropped (_Dropped), one that cannot be made does not."""
    conn = socket.create_connection((host, port), timeout=max(0.01, min(HANDSHAKE_SECONDS,
                                                                        deadline - time.monotonic())))
    with conn:
        try:
            return ask(conn, min(deadline, time.monotonic() + HANDSHAKE_SECONDS))
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError) as exc:
            raise _Dropped(str(exc)) from None


def fetch_uid(rank, host, port, context, secret, timeout, roles=None):
    """A rank other than 0: asks rank 0 for the unique ID, proving it holds ``secret``,
    until rank 0 answers or ``timeout`` seconds pass.  Connections that rank 0 drops
    before its verdict (a flood fills its slots) are tried again with doubling waits."""
    roles = roles or torchrun_roles(rank)
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    context_digest = hashlib.sha256(context.encode()).digest()
    key = _derive_key(secret)
    deadline = time.monotonic() + timeout
    last, drops, wait = None, 0, _RETRY_FIRST
    while time.monotonic() < deadline:
        try:
            return _ask(host, port, deadline,
                        lambda conn, step: _ask_once(conn, rank, context_digest, key, step, where, roles))
        except _OtherJob:
            last = "the server there serves another job, instance or init"
        except _Dropped:
            drops += 1
            last = "dropped before authentication"
        except OSError as exc:
            last = exc
        time.sleep(max(0.0, min(deadline - time.monotonic(), random.uniform(wait / 2, wait))))
        wait = min(wait * 2, _RETRY_MOST)
    if drops:
        also = "" if last == "dropped before authentication" else f"; last error: {last}"
        raise BootstrapError(
            f"{roles.client} got no unique ID from {roles.server} at {where} within {timeout:g} s: "
            f"{roles.server} dropped the connection before authentication {drops} times (overloaded, or its "
            f"port flooded by connections from outside the job?){also}")
    raise BootstrapError(
        f"{roles.client} got no unique ID from {roles.server} at {where} within {timeout:g} s (last error: "
        f"{last}). {roles.wait_hint}")
