"""The SHMEM_JOB_SECRET exchange: how a unique ID travels between the ranks of a job
without torch (rank 0 serves it, ``SecretUidServer``; the others ask, ``fetch_uid``), and
between the node launchers of ``python -m shmem.run --nnodes``.

Only a client that proves it holds the job's secret gets the unique ID, and the answer
proves the same of the server; ``shmem._bootstrap`` says when the exchange is used.
"""

import hashlib
import hmac
import ipaddress
import random
import secrets
import selectors
import socket
import struct
import threading
import time

ENV_EXCHANGE_PORT = "SHMEM_UID_EXCHANGE_PORT"
ENV_JOB_SECRET = "SHMEM_JOB_SECRET"

UID_SIZE = 136


class BootstrapError(RuntimeError):
    pass


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
