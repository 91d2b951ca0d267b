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
   SHMEM_JOB_SECRET exchange of ``shmem._uid_exchange`` (``SecretUidServer`` /
   ``fetch_uid``, with the launchers' own names in the messages).

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

import ipaddress
import math
import os
import socket
import threading
import warnings
from datetime import timedelta

from ._sizes import parse_size
from ._uid_exchange import ENV_EXCHANGE_PORT, ENV_JOB_SECRET, UID_SIZE, BootstrapError, SecretUidServer, fetch_uid

ENV_UID = "SHMEM_RUN_UID"
ENV_PE = "SHMEM_RUN_PE"
ENV_NPES = "SHMEM_RUN_NPES"
ENV_MEM_SIZE = "SHMEM_RUN_MEM_SIZE"
ENV_EXCHANGE_TIMEOUT = "SHMEM_UID_EXCHANGE_TIMEOUT"
ENV_UID_SESSION = "SHMEM_UID_SESSION_ID"
ENV_UID_IFNAME = "SHMEM_UID_SOCK_IFNAME"

# How many times this process initialised each instance from its environment.
_init_counts = {}
_counts_lock = threading.Lock()


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
