"""Point-to-point for the torch.distributed backend: send, recv (also from any source),
isend / irecv and their Work.

Every PE has a mailbox slot per peer in its pool (``SHMEM_TORCH_P2P_SLOT`` bytes; see
``shmem_torch._backend_runtime``).  A send puts a chunk into the receiver's slot and
signals it (put-with-signal on the receiver's ``ready`` word of the sender); the receiver
copies it out and acknowledges it (an atomic set of the sender's ``ack`` word); messages
between two ranks arrive in order.  ``isend`` / ``irecv`` return a Work that advances
whenever the process waits on (or asks about) any point-to-point Work.  A message larger
than the slot moves chunk by chunk, so its sender must keep waiting on it while the
receiver receives.
"""

import collections
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

from shmem.core import AclshmemError, AclshmemInvalid

from ._backend_runtime import HDR_BYTES, lock
from .amo import atomic_set
from .collectives import ComputeScope
from .rma import put, put_signal

__all__ = ["Mailboxes", "SendOp", "RecvOp", "P2PWork"]


class Mailboxes:
    """The point-to-point state of a runtime: sequence numbers per peer, the queues of
    pending sends and receives, and this PE's control words."""

    def __init__(self, rt):
        n = rt.n_world
        self.rt = rt
        self.n = n
        self.my_pe = rt.my_pe
        self.slot = rt.slot
        self.mbox_off = rt.mbox_off
        self.pool = rt.pool
        self.np_pool = rt.pool.numpy()
        self.ready_t = rt.pool[rt.ready_off:rt.ready_off + 4 * n].view(torch.int32)
        self.ack_t = rt.pool[rt.ack_off:rt.ack_off + 4 * n].view(torch.int32)
        self.ready_np = self.np_pool[rt.ready_off:rt.ready_off + 4 * n].view(np.int32)
        self.ack_np = self.np_pool[rt.ack_off:rt.ack_off + 4 * n].view(np.int32)
        self.tx_seq = [0] * n
        self.rx_seq = [0] * n
        self.sendq = collections.defaultdict(collections.deque)
        self.recvq = collections.defaultdict(collections.deque)
        self.anyq = collections.deque()
        self.pending = 0
        self.heap_addr = rt.pool.data_ptr()

    def close(self):
        """Drops every view of the pool (before the runtime frees it)."""
        self.pool = self.np_pool = self.ready_t = self.ack_t = self.ready_np = self.ack_np = None
        self.sendq.clear()
        self.recvq.clear()
        self.anyq.clear()
        self.pending = 0

    @property
    def closed(self):
        return self.pool is None

    def post_send(self, op):
        self.sendq[op.dst].append(op)
        self.pending += 1
        self.progress()

    def post_recv(self, op):
        if op.src is None:
            self.anyq.append(op)
        else:
            self.recvq[op.src].append(op)
        self.pending += 1
        self.progress()

    def progress(self):
        """Advances every pending send and receive as far as it can without waiting;
        returns True when anything moved."""
        with ComputeScope(self.heap_addr):  # the mailbox copies run under the collectives' thread policy
            return self._progress()

    def _progress(self):
        moved = False
        for q in list(self.sendq.values()) + list(self.recvq.values()):
            while q:
                op = q[0]
                if op.advance(self):
                    moved = True
                if not op.finished:
                    break
                q.popleft()
                self.pending -= 1
                moved = True
        while self.anyq:
            src = self._ready_source()
            if src is None:
                break
            op = self.anyq.popleft()
            op.bind(src)
            self.recvq[src].append(op)
            moved = True
            if op.advance(self) and op.finished:
                self.recvq[src].remove(op)
                self.pending -= 1
        return moved

    def _ready_source(self):
        for s in range(self.n):
            if self.recvq.get(s):
                continue
            if int(self.ready_np[s]) > self.rx_seq[s]:
                return s
        return None

    def wait_ops(self, ops, timeout, call):
        deadline = None if timeout is None else time.monotonic() + timeout
        spins = 0
        delay = 1e-5
        while True:
            self.progress()
            if all(op.finished for op in ops):
                break
            spins += 1
            if spins > 200:
                time.sleep(delay)
                delay = min(delay * 2, 1e-3)
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError(f"shmem backend: {call} timed out after {timeout:g} s (the peer did not "
                                   "post the matching send/recv)")
        for op in ops:
            if op.error is not None:
                raise op.error


class SendOp:
    __slots__ = ("dst", "data", "tag", "total", "off", "finished", "error")

    def __init__(self, dst, data, tag):
        self.dst = dst  # world PE
        self.data = data  # contiguous uint8
        self.tag = tag
        self.total = data.numel()
        self.off = 0
        self.finished = False
        self.error = None

    def who(self):
        return self.dst

    def advance(self, mb):
        moved = False
        room = mb.slot - HDR_BYTES
        d = self.dst
        while not self.finished:
            k = mb.tx_seq[d] + 1
            if int(mb.ack_np[d]) < k - 1:
                return moved
            n = min(room, self.total - self.off)
            base = mb.mbox_off + mb.my_pe * mb.slot  # my slot in d's mailbox
            if n:
                put(mb.pool[base + HDR_BYTES:base + HDR_BYTES + n], self.data[self.off:self.off + n], d)
            hdr = torch.tensor([k, self.tag, n, self.total, self.off, 0, 0, 0], dtype=torch.int64).view(torch.uint8)
            put_signal(mb.pool[base:base + HDR_BYTES], hdr, mb.ready_t[mb.my_pe:mb.my_pe + 1], k, "set", d)
            mb.tx_seq[d] = k
            self.off += n
            moved = True
            if self.off >= self.total:
                self.finished = True
        return moved


class RecvOp:
    __slots__ = ("src", "data", "tag", "total", "off", "finished", "error", "discard", "group_src", "team",
                 "on_done")

    def __init__(self, src, data, tag, team=None, group_src=None, on_done=None):
        self.src = src  # world PE, or None: any source
        self.data = data
        self.tag = tag
        self.total = data.numel()
        self.off = 0
        self.finished = False
        self.error = None
        self.discard = False
        self.group_src = group_src
        self.team = team
        self.on_done = on_done  # called once the data is in place (not after an error)

    def bind(self, src):
        self.src = src
        if self.team is not None:
            self.group_src = self.team.pes.index(src) if src in self.team.pes else -1

    def advance(self, mb):
        moved = False
        s = self.src
        while not self.finished:
            k = mb.rx_seq[s] + 1
            if int(mb.ready_np[s]) < k:
                return moved
            base = mb.mbox_off + s * mb.slot
            seq, tag, n, total, off = (int(x) for x in mb.np_pool[base:base + HDR_BYTES].view(np.int64)[:5])
            if seq != k:
                self.error = AclshmemError(f"shmem backend: recv from PE {s}: mailbox out of step (chunk {seq}, "
                                           f"expected {k})")
                self.finished = True
                return True
            if off == 0 and not self.discard:
                self._check_header(tag, total)
            if not self.discard and n:
                with torch.no_grad():
                    self.data[off:off + n].copy_(mb.pool[base + HDR_BYTES:base + HDR_BYTES + n])
            mb.rx_seq[s] = k
            atomic_set(mb.ack_t, k, s, index=mb.my_pe)
            moved = True
            self.off = off + n
            if self.off >= total:
                self._finish()
        return moved

    def _check_header(self, tag, total):
        if tag != self.tag:
            self.error = AclshmemInvalid(
                f"shmem backend: recv: the next message from rank {self.who()} has tag {tag}, but this "
                f"recv asks for tag {self.tag} (messages between two ranks arrive in the order they "
                "were sent)")
        elif total != self.total:
            self.error = AclshmemInvalid(
                f"shmem backend: recv: rank {self.who()} sent {total} bytes, but the receive tensor "
                f"holds {self.total} bytes (sizes and dtypes of send and recv must match)")
        if self.error is not None:
            self.discard = True

    def _finish(self):
        self.finished = True
        if self.error is None and self.on_done is not None:
            self.on_done()

    def who(self):
        return self.group_src if self.group_src is not None else self.src


class P2PWork(dist.Work):
    """Work of isend / irecv: completes as the process waits on it (or on other p2p Work)."""

    def __init__(self, mb, rt, op, call, result):
        super().__init__()
        self._mb = mb
        self._rt = rt
        self._op = op
        self._call = call
        self._result = result
        self._fut = None

    def is_completed(self):
        with lock:
            if not self._op.finished and not self._mb.closed:
                self._mb.progress()
        return self._op.finished

    def wait(self, timeout=None):
        secs = None
        if isinstance(timeout, timedelta) and timeout.total_seconds() > 0:
            secs = timeout.total_seconds()
        with lock:
            if not self._op.finished:
                self._rt.require(self._call)
                self._mb.wait_ops([self._op], secs, self._call)
            elif self._op.error is not None:
                raise self._op.error
        return True

    def exception(self):
        return self._op.error

    def is_success(self):
        return self._op.finished and self._op.error is None

    def get_future(self):
        if self._fut is None:
            self.wait()
            fut = torch.futures.Future()
            fut.set_result(self._result)
            self._fut = fut
        return self._fut

    def source_rank(self):
        self.wait()
        return self._op.who()

    def _source_rank(self):
        return self.source_rank()

    def result(self):
        self.wait()
        return self._result

    def synchronize(self):
        self.wait()
