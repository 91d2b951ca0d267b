"""``Buffer``: memory used by the SHMEM APIs, and the registry of symmetric allocations.

A Buffer is an address, a length in bytes and a heap type.  It is one small object made in
O(1) (``__slots__``, no class per length) that hands its memory to other code without a
copy: the buffer protocol (format ``'B'``), ``__array_interface__`` and DLPack.  How the
buffer protocol is exported, and why the live views of a Buffer are the references to its
exporter, is in ``_export``.

Every symmetric allocation of this PE is a ``Block``: the owning Buffer that ``buffer``,
``calloc`` or ``align`` returned, and the Buffers derived from it (slices ``b[i:j]`` and
peer views from ``get_peer_buffer``).  The block keeps their exporters and answers whether
any of them still has an exported view, also once the Buffer is gone, which ``free`` and
``finalize`` need (see ``memory`` and ``init_final``).
"""

import ctypes
import sys
import threading
import weakref
from typing import Any, Dict, Optional, Sequence, Tuple, Union, overload

from .. import _state
from .._pyshmem import MemType
from . import _export
from .._errors import AclshmemInvalid
from .utils import INTPTR_MAX, SIZE_T_MAX, active_instance_id, check_int, check_mem_type

__all__ = ["Buffer", "Block", "check_buffer"]

_DEVICE, _HOST = MemType.DEVICE_SIDE, MemType.HOST_SIDE
_new = object.__new__
_new_exporter = _export.new_exporter


class Block:
    """One symmetric allocation: its owner, the Buffers derived from it, and its state."""

    __slots__ = ("addr", "length", "mem_type", "instance_id", "released", "owner", "exporters", "__weakref__")

    def __init__(self, addr, length, mem_type, instance_id):
        self.addr = addr
        self.length = length
        self.mem_type = mem_type
        self.instance_id = instance_id
        self.released = False  # a free (or finalize) has been started
        self.owner = None  # weakref to the owning Buffer
        # Per Buffer of the block (owner, slices, peer views): (weakref to the Buffer, its
        # exporter, address, length).  Views hold the exporter, not the Buffer, so the
        # block keeps the exporter: a NumPy array of a slice made and dropped still counts.
        self.exporters = []

    def track(self, buf):
        """Counts the views of ``buf`` (a Buffer of this block) from now on."""
        exporters = self.exporters
        if len(exporters) >= 64 and not len(exporters) & (len(exporters) - 1):
            # Many slices made and dropped: forget those gone without views (amortised O(1)).
            exporters[:] = [entry for entry in exporters if entry[0]() is not None or _views_of(entry)]
        exporters.append((weakref.ref(buf), buf._exporter, buf._start, buf._length))

    def views(self):
        """Live views exported by any Buffer of this block (memoryviews, NumPy arrays,
        DLPack tensors, tensors of torch.frombuffer over it)."""
        _export.sweep_dlpack()
        return sum(_views_of(entry) for entry in self.exporters)

    def exported_ranges(self):
        """(address, length) of each Buffer of this block that has exported views."""
        _export.sweep_dlpack()
        return [(entry[2], entry[3]) for entry in self.exporters if _views_of(entry)]

    def close(self):
        """Marks the block released: Buffer methods raise from now on, and the buffer
        protocol hands out only empty views.  Views exported before stay as they are."""
        self.released = True
        for entry in self.exporters:
            _export.stop_exporting(entry[1])
        self.exporters = [entry for entry in self.exporters if entry[0]() is not None or _views_of(entry)]


def _views_of(entry):
    """The live views of one Buffer of a block (``entry`` of ``Block.exporters``): the
    references to its exporter beyond the block's and the Buffer's, if it is alive."""
    return sys.getrefcount(entry[1]) - (_HELD_WITH_BUFFER if entry[0]() is not None else _HELD_WITHOUT_BUFFER)


# Blocks not yet released, per instance: {instance_id: {addr: Block}}.
_live: Dict[Optional[int], Dict[int, "Block"]] = {}
_live_lock = threading.Lock()


def register_block(block):
    with _live_lock:
        _live.setdefault(block.instance_id, {})[block.addr] = block


def unregister_block(block):
    with _live_lock:
        _live.get(block.instance_id, {}).pop(block.addr, None)


def take_leftovers(instance_id):
    """Removes and returns the blocks of ``instance_id`` that were never freed."""
    with _live_lock:
        return list(_live.pop(instance_id, {}).values())


def _check_new_args(addr, length, mem_type):
    """The constructor's argument rules (the slow path, with messages)."""
    addr = check_int(addr, "addr")
    length = check_int(length, "length")
    if not 0 < addr <= INTPTR_MAX:
        raise AclshmemInvalid(f"addr must satisfy 0 < addr <= {INTPTR_MAX}, not {addr}")
    if not 0 < length <= SIZE_T_MAX:
        raise AclshmemInvalid(f"length must satisfy 0 < length <= {SIZE_T_MAX}, not {length}")
    if addr + length - 1 > SIZE_T_MAX:
        raise AclshmemInvalid("addr + length is beyond the address space")
    return int(addr), int(length), check_mem_type(mem_type)


class Buffer(_export.ExporterBase):
    """Memory used by the SHMEM APIs: an address, a length in bytes and a heap type.

    ``Buffer(addr, length)`` describes memory it does not own (it cannot be freed).
    ``buffer()``, ``calloc()`` and ``align()`` return owning Buffers; ``get_peer_buffer``
    and slicing (``b[i:j]``) return non-owning views that follow their owner's free.

    A Buffer is a writable bytes-like object without copies: ``memoryview(b)`` (format
    ``'B'``), ``b[i]``, ``b[i] = v``, ``bytes(b)``, ``len(b)``, ``numpy.frombuffer(b,
    dtype)``, ``numpy.asarray(b)`` (``__array_interface__``), ``numpy.from_dlpack(b)`` and
    ``torch.from_dlpack(b)`` (``__dlpack__``, CPU), ``torch.frombuffer(b, dtype=...)``,
    ``b.numpy(dtype, shape)`` and ``b.view(fmt, shape)``.

    Dropping a Buffer never frees symmetric memory (free is collective and must be called
    by every PE); ``finalize`` releases what is left and warns.  While views of a Buffer
    exist, ``free`` keeps its memory out of reuse and ``finalize`` keeps its address range
    mapped (see the documentation of ``free``).
    """

    __slots__ = ("_length", "_mem_type", "_block", "__weakref__")
    _length: int           # (declared for type checkers; __slots__ holds them)
    _mem_type: MemType
    _block: Optional[Block]

    def __new__(cls, addr: int, length: int, mem_type: Union[MemType, int] = _DEVICE) -> "Buffer":
        if (type(addr) is not int or type(length) is not int or not 0 < addr <= INTPTR_MAX
                or not 0 < length or addr + length - 1 > SIZE_T_MAX
                or (mem_type is not _DEVICE and mem_type is not _HOST)):
            addr, length, mem_type = _check_new_args(addr, length, mem_type)
        self = _new(cls)
        self._start = addr
        # What the buffer protocol hands out (see _export): no Python view is longer than maxsize.
        self._exporter = _new_exporter(addr, length if length <= sys.maxsize else 0)
        self._length = length
        self._mem_type = mem_type
        self._block = None
        return self

    # -- factories ---------------------------------------------------------------
    @classmethod
    def _owning(cls, addr, length, mem_type, instance_id):
        """The owning Buffer of a new allocation, and its block."""
        buf = cls(addr, length, mem_type)
        block = Block(addr, length, mem_type, instance_id)
        block.owner = weakref.ref(buf)
        block.track(buf)
        buf._block = block
        return buf

    @classmethod
    def _borrowed(cls, origin, addr, length=None):
        """A non-owning Buffer of origin's memory at ``addr`` (a peer's mapping, or a
        sub-range): it follows origin's free and instance."""
        buf = cls(addr, origin._length if length is None else length, origin._mem_type)
        block = origin._block
        if block is not None:
            buf._block = block
            block.track(buf)
            if block.released:
                _export.stop_exporting(buf._exporter)
        return buf

    # -- attributes --------------------------------------------------------------
    @property
    def addr(self) -> int:
        """Start address of the memory."""
        return self._start

    @property
    def length(self) -> int:
        """Length in bytes."""
        return self._length

    @property
    def mem_type(self) -> MemType:
        """MemType.DEVICE_SIDE or MemType.HOST_SIDE."""
        return self._mem_type

    @property
    def owned(self) -> bool:
        """Whether this object owns the right to free the memory."""
        block = self._block
        return block is not None and block.owner() is self

    @property
    def instance_id(self) -> Optional[int]:
        """The allocating instance, or None for an external-address descriptor."""
        block = self._block
        return None if block is None else block.instance_id

    @property
    def _exports(self) -> int:
        """The live views of this Buffer's memory that it handed out (see ``_export``): the
        references to its exporter beyond its own and its block's."""
        return sys.getrefcount(self._exporter) - (_HELD_TRACKED if self._block is not None else _HELD_UNTRACKED)

    @property
    def release_called(self) -> bool:
        """Whether a free of the memory has been started (for views: of their owner)."""
        block = self._block
        return block is not None and block.released

    # -- value semantics ---------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Buffer):
            return NotImplemented
        return (self._start, self._length, self._mem_type) == (other._start, other._length, other._mem_type)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash((self._start, self._length, int(self._mem_type)))

    def __repr__(self) -> str:
        if self._block is None:
            kind = "external"
        else:
            kind = "owned" if self.owned else "view"
        extra = ", released" if self.release_called else ""
        return (f"Buffer(addr={self._start:#x}, length={self._length}, mem_type={self._mem_type.name}, "
                f"{kind}, instance_id={self.instance_id}{extra})")

    def __reduce__(self):
        raise TypeError("a Buffer describes memory of this process and cannot be pickled")

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        return self._length

    # -- element access ----------------------------------------------------------
    def _check_readable(self):
        block = self._block
        if block is not None and block.released:
            raise AclshmemInvalid("the Buffer's memory has been freed (or released by finalize)")

    def _index(self, i):
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise TypeError(f"Buffer indices must be integers or slices, not {type(i).__name__}")
        i = i.__index__()
        n = self._length
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"Buffer index out of range (length {n})")
        return i

    def _range(self, s):
        start, stop, step = s.indices(self._length)
        if step != 1:
            raise AclshmemInvalid("a Buffer slice must be contiguous (step 1); use memoryview(buf)[::step] "
                                  "for a strided view")
        if stop <= start:
            raise AclshmemInvalid(f"the slice [{s.start}:{s.stop}] of a Buffer of {self._length} bytes is empty "
                                  "(a Buffer has at least one byte)")
        return start, stop

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> "Buffer": ...
    def __getitem__(self, key: Union[int, slice]) -> Union[int, "Buffer"]:
        """``b[i]`` is the byte at i; ``b[i:j]`` is a non-owning Buffer of those bytes."""
        self._check_readable()
        if isinstance(key, slice):
            start, stop = self._range(key)
            return Buffer._borrowed(self, self._start + start, stop - start)
        return ctypes.c_ubyte.from_address(self._start + self._index(key)).value

    def __setitem__(self, key: Union[int, slice], value: Any) -> None:
        """``b[i] = v`` stores a byte (0..255); ``b[i:j] = data`` copies a bytes-like
        object of exactly j - i bytes."""
        self._check_readable()
        if isinstance(key, slice):
            start, stop = self._range(key)
            try:
                src = memoryview(value).cast("B")
            except TypeError:
                raise AclshmemInvalid(f"Buffer slice assignment needs a bytes-like object, not "
                                      f"{type(value).__name__}") from None
            if src.nbytes != stop - start:
                raise AclshmemInvalid(f"Buffer slice assignment: {src.nbytes} bytes given for a slice of "
                                      f"{stop - start}")
            ctypes.memmove(self._start + start, (ctypes.c_char * src.nbytes).from_buffer_copy(src), src.nbytes)
            return
        i = self._index(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
            raise AclshmemInvalid(f"a Buffer byte must be an int in range(0, 256), not {value!r}")
        ctypes.c_ubyte.from_address(self._start + i).value = value

    def __bytes__(self) -> bytes:
        self._check_readable()
        return ctypes.string_at(self._start, self._length)

    # -- views -------------------------------------------------------------------
    def _memoryview(self):
        self._check_readable()
        if self._length > sys.maxsize:
            raise AclshmemInvalid(f"a Buffer of {self._length} bytes is too long for a Python view")
        if not _export.BUFFER_PROTOCOL:  # Python 3.11 without the native exporter types
            return memoryview(self._exporter)
        return memoryview(self)

    def view(self, fmt: str = "B", shape: Optional[Sequence[int]] = None) -> memoryview:
        """A writable memoryview of the memory (no copy), cast to the struct format
        ``fmt`` and, if given, to ``shape``."""
        mv = self._memoryview()
        try:
            if shape is not None:
                return mv.cast(fmt, shape)
            return mv if fmt == "B" else mv.cast(fmt)
        except (TypeError, ValueError) as exc:
            raise AclshmemInvalid(f"Buffer.view({fmt!r}, {shape!r}): {exc}") from None

    def numpy(self, dtype: Any = "uint8", shape: Union[int, Sequence[int], None] = None) -> Any:
        """A NumPy array over the memory (no copy): ``length // itemsize`` elements of
        ``dtype``, or ``shape`` (whose size must fit in the Buffer)."""
        mv = self._memoryview()
        import numpy as np

        try:
            dt = np.dtype(dtype)
        except TypeError as exc:
            raise AclshmemInvalid(f"Buffer.numpy: {exc}") from None
        if dt.itemsize == 0 or dt.hasobject:
            raise AclshmemInvalid(f"Buffer.numpy: dtype {dt} is not plain memory")
        if shape is None:
            return np.frombuffer(mv, dtype=dt, count=self._length // dt.itemsize)
        if isinstance(shape, int):
            shape = (shape,)
        try:
            dims = tuple(check_int(s, "shape", 0) for s in shape)
        except TypeError:
            raise AclshmemInvalid(f"Buffer.numpy: shape must be an int or a tuple of ints, not {shape!r}") from None
        count = 1
        for d in dims:
            count *= d
        if count * dt.itemsize > self._length:
            raise AclshmemInvalid(f"Buffer.numpy: shape {dims} of {dt} needs {count * dt.itemsize} bytes, "
                                  f"the Buffer has {self._length}")
        return np.frombuffer(mv, dtype=dt, count=count).reshape(dims)

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        # 'data' as a buffer object (not an address): the array then holds a counted view.
        return {"version": 3, "shape": (self._length,), "typestr": "|u1", "data": self._memoryview()}

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(kDLCPU, 0): host memory."""
        return (_export.KDLCPU, 0)

    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule over the memory: 1-D uint8, CPU, no copy."""
        if stream is not None and stream != -1:
            raise AclshmemInvalid(f"__dlpack__: a CPU Buffer takes stream=None, not {stream!r}")
        if dl_device is not None and tuple(dl_device) != (_export.KDLCPU, 0):
            raise BufferError(f"__dlpack__: a Buffer is host memory (kDLCPU, 0); cannot export to {dl_device!r}")
        if copy:
            raise BufferError("__dlpack__: a Buffer exports its memory without a copy (copy=True is not supported)")
        versioned = max_version is not None and tuple(max_version) >= _export.DLPACK_VERSION
        return _export.export_dlpack(self._memoryview(), versioned)


def check_buffer(buf: object, name: str) -> "Buffer":
    """A usable Buffer: not freed, and allocated by the active instance if it has one.
    (External descriptors may name any memory; the library checks symmetric addresses.)"""
    if not isinstance(buf, Buffer):
        raise AclshmemInvalid(f"{name} must be a Buffer, not {type(buf).__name__}")
    block = buf._block
    if block is not None:
        if block.released:
            raise AclshmemInvalid(f"{name} has been freed and cannot be used any more")
        state = _state.active_instance()  # cached: no call into the library
        if state is None or state[0] != block.instance_id:
            active = active_instance_id()  # the library's own answer, for the verdict
            if active != block.instance_id:
                raise AclshmemInvalid(
                    f"{name} was allocated by instance {block.instance_id} but the active instance is {active}")
    return buf


def _calibrate_view_counts():
    """How many references the counts above see of a Buffer without views (the references
    the interpreter itself takes while counting differ between versions)."""
    global _HELD_WITH_BUFFER, _HELD_WITHOUT_BUFFER, _HELD_TRACKED, _HELD_UNTRACKED
    _HELD_WITH_BUFFER = _HELD_WITHOUT_BUFFER = _HELD_TRACKED = _HELD_UNTRACKED = 0
    memory = ctypes.create_string_buffer(1)
    untracked = Buffer(ctypes.addressof(memory), 1)
    tracked = Buffer._owning(ctypes.addressof(memory), 1, _DEVICE, None)
    [entry] = tracked._block.exporters
    counts = [_views_of(entry), untracked._exports, tracked._exports]
    view = tracked._memoryview()  # keeps the exporter once the Buffer is gone
    del tracked
    without_buffer = _views_of(entry) - 1
    view.release()
    _HELD_WITH_BUFFER, _HELD_UNTRACKED, _HELD_TRACKED = counts
    _HELD_WITHOUT_BUFFER = without_buffer


_calibrate_view_counts()
