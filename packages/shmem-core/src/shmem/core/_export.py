"""How a Buffer hands its memory to other code: the buffer protocol and DLPack.

Buffer protocol.  On Python 3.11 a class written in Python cannot export the buffer
protocol (PEP 688's ``__buffer__`` arrives in 3.12), and the built-in exporters either own
their memory (bytearray, array, mmap) or need one class per length with a ``<B`` format
that memoryview cannot index (ctypes arrays).  So this module makes, once at import, two
small types with ``PyType_FromSpec`` whose buffer slots are CPython's own C functions:

- ``Exporter`` has bytearray's instance layout and bytearray's buffer functions, which read
  three fields of the object - the start pointer, the size and the count of exports - that
  the type shows to Python as the members ``_start``, ``_size`` and ``_exports``.  Every
  Buffer owns one (``new_exporter``): its memory as the buffer protocol hands it out.
- ``ExporterBase``, the base of Buffer, has ``pickle.PickleBuffer``'s buffer functions,
  which pass every request on to the object in the ``obj`` field of PickleBuffer's layout:
  here the member ``_exporter``.

Why two objects: whoever takes a buffer gets, with the memory, a reference to the object
that exported it (``Py_buffer.obj``): the Buffer's exporter, which nothing else refers to.
A memoryview or a NumPy array holds that reference while it lives; so does the tensor of
``torch.frombuffer``, although torch releases its export at once (an export count would
miss that tensor and let ``free`` hand its memory to the next allocation).  A Buffer's live
views are thus the references to its exporter beyond those of the Buffer and of its
``buffer.Block`` (which counts them, also after the Buffer itself is gone), counted by
CPython in C, with no Python code running per view.  The result, for every CPython that
passes the layout checks below:

- ``memoryview(b)`` is writable, format ``'B'``, one dimension: indexing, slicing,
  ``bytes``, ``numpy.frombuffer`` and ``torch.frombuffer`` work, and every view they keep
  is counted;
- nothing is made per length: a Buffer is two small objects.

The layouts are checked at import against a real bytearray and PickleBuffer (and debug
builds of CPython, whose bytearray functions assert the type, are excluded).  Where a check
fails, the exporter is a cffi buffer of the memory, counted the same way; Python 3.12+
exports it through ``__buffer__``, and 3.11 has no buffer protocol (``Buffer.view()`` /
``.numpy()`` still work, counted).

DLPack.  ``export_dlpack`` builds a ``DLManagedTensorVersioned`` (DLPack 1.0, capsule
``"dltensor_versioned"``, writable) for consumers that ask for version 1, and the legacy
``DLManagedTensor`` (dlpack.h v0.8, capsule ``"dltensor"``) otherwise, in ctypes memory.  While a consumer (NumPy, torch) holds it,
the tensor keeps a memoryview of the Buffer, so it is counted like any other view.  The
consumer's call of ``deleter`` only records the tensor as finished (one dict
store: a deleter may run while an exception is propagating, when calling anything would
replace that exception); ``sweep_dlpack`` then drops what is finished, and what was never
consumed and is no longer referenced.
"""

import ctypes
import pickle
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Tuple

__all__ = ["ExporterBase", "BUFFER_PROTOCOL", "new_exporter", "stop_exporting", "export_dlpack", "sweep_dlpack",
           "KDLCPU", "DLPackView", "read_dlpack"]

_P = ctypes.sizeof(ctypes.c_void_p)
# PyByteArrayObject: PyObject_VAR_HEAD (refcnt, type, ob_size), ob_alloc, ob_bytes,
# ob_start, ob_exports.  bytearray's getbuffer exports (ob_start, ob_size) and counts
# ob_exports; its releasebuffer decrements ob_exports.
_SIZE_OFFSET, _START_OFFSET, _EXPORTS_OFFSET, _BASICSIZE = 2 * _P, 5 * _P, 6 * _P, 7 * _P
# PyPickleBufferObject: PyObject_HEAD (refcnt, type), then a Py_buffer {buf, obj, ...}.
# PickleBuffer's getbuffer reads only obj (and passes the request on to it); its
# releasebuffer does nothing.  ExporterBase keeps the Buffer's address where buf is.
_ADDR_OFFSET, _TARGET_OFFSET, _BASE_BASICSIZE = 2 * _P, 3 * _P, 4 * _P

_Py_bf_getbuffer, _Py_bf_releasebuffer, _Py_tp_members, _Py_tp_doc = 1, 2, 72, 56
_T_OBJECT_EX, _T_PYSSIZET, _READONLY = 16, 19, 1
_Py_TPFLAGS_IMMUTABLETYPE, _Py_TPFLAGS_BASETYPE, _Py_TPFLAGS_HAVE_VERSION_TAG = 1 << 8, 1 << 10, 1 << 18


class _PyMemberDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("offset", ctypes.c_ssize_t),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


class _PyTypeSlot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]


class _PyTypeSpec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("basicsize", ctypes.c_int), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_uint), ("slots", ctypes.POINTER(_PyTypeSlot))]


def _bytearray_layout_matches():
    """Whether this interpreter's bytearray has the layout Exporter relies on."""
    if hasattr(sys, "gettotalrefcount") or sys.implementation.name != "cpython":
        return False  # debug builds assert PyByteArray_Check in the functions we reuse
    probe = bytearray(b"layout")
    at = id(probe)
    if ctypes.c_ssize_t.from_address(at + _SIZE_OFFSET).value != len(probe):
        return False
    start = ctypes.addressof((ctypes.c_char * len(probe)).from_buffer(probe))
    if ctypes.c_void_p.from_address(at + _START_OFFSET).value != start:
        return False
    before = ctypes.c_ssize_t.from_address(at + _EXPORTS_OFFSET).value
    with memoryview(probe):
        inside = ctypes.c_ssize_t.from_address(at + _EXPORTS_OFFSET).value
    after = ctypes.c_ssize_t.from_address(at + _EXPORTS_OFFSET).value
    return inside == before + 1 and after == before and bytearray.__basicsize__ == _BASICSIZE


def _pickle_buffer_layout_matches():
    """Whether this interpreter's PickleBuffer keeps the exporting object where
    ExporterBase keeps ``_exporter``."""
    probe = bytearray(b"layout")
    wrapped = pickle.PickleBuffer(probe)
    return (ctypes.c_void_p.from_address(id(wrapped) + _TARGET_OFFSET).value == id(probe)
            and pickle.PickleBuffer.__basicsize__ >= _BASE_BASICSIZE)


# Everything handed to PyType_FromSpec must live as long as the type: kept here forever.
_type_keepalive: List[object] = []


def _make_type(name, basicsize, donor, members, doc):
    """A type made with PyType_FromSpec: ``basicsize`` bytes, the buffer functions of the
    built-in type ``donor``, and ``members`` [(name, type, offset, flags, doc)]."""
    api = ctypes.pythonapi
    api.PyType_GetSlot.restype = ctypes.c_void_p
    api.PyType_GetSlot.argtypes = [ctypes.py_object, ctypes.c_int]
    getbuffer = api.PyType_GetSlot(donor, _Py_bf_getbuffer)
    releasebuffer = api.PyType_GetSlot(donor, _Py_bf_releasebuffer)
    if not getbuffer or not releasebuffer:
        return None
    table = (_PyMemberDef * (len(members) + 1))(*(_PyMemberDef(*m) for m in members), _PyMemberDef(None, 0, 0, 0, None))
    slots = (_PyTypeSlot * 5)(
        _PyTypeSlot(_Py_bf_getbuffer, getbuffer),
        _PyTypeSlot(_Py_bf_releasebuffer, releasebuffer),
        _PyTypeSlot(_Py_tp_members, ctypes.cast(table, ctypes.c_void_p).value),
        _PyTypeSlot(_Py_tp_doc, ctypes.cast(ctypes.c_char_p(doc), ctypes.c_void_p).value),
        _PyTypeSlot(0, None))
    spec = _PyTypeSpec(name, basicsize, 0,
                       _Py_TPFLAGS_HAVE_VERSION_TAG | _Py_TPFLAGS_BASETYPE | _Py_TPFLAGS_IMMUTABLETYPE, slots)
    _type_keepalive.extend((table, slots, spec, name, doc, members))
    api.PyType_FromSpec.restype = ctypes.py_object
    api.PyType_FromSpec.argtypes = [ctypes.POINTER(_PyTypeSpec)]
    return api.PyType_FromSpec(ctypes.byref(spec))


def _make_native_types():
    """(Exporter, ExporterBase), or None where this interpreter's layouts differ."""
    if not (_bytearray_layout_matches() and _pickle_buffer_layout_matches()):
        return None
    # (Neither type may have a weak reference list: CPython does not clear those of a type
    # without GC support when its objects die.)
    exporter = _make_type(b"shmem.core._export.Exporter", _BASICSIZE, bytearray, [
        (b"_size", _T_PYSSIZET, _SIZE_OFFSET, 0, b"bytes the buffer protocol hands out"),
        (b"_start", _T_PYSSIZET, _START_OFFSET, 0, b"address the buffer protocol hands out"),
        (b"_exports", _T_PYSSIZET, _EXPORTS_OFFSET, _READONLY, b"exports not released yet")],
        b"Exports (_start, _size) through the buffer protocol, with bytearray's C functions.")
    base = _make_type(b"shmem.core._export.ExporterBase", _BASE_BASICSIZE, pickle.PickleBuffer, [
        (b"_start", _T_PYSSIZET, _ADDR_OFFSET, 0, b"address of the memory"),
        (b"_exporter", _T_OBJECT_EX, _TARGET_OFFSET, 0, b"the object that exports the memory")],
        b"Passes the buffer protocol on to _exporter, with pickle.PickleBuffer's C functions.")
    return None if exporter is None or base is None else (exporter, base)


class _PythonExporterBase:
    """The base of Buffer where the layouts differ: Python 3.12+ exports through
    ``__buffer__`` (PEP 688) the exporter, a cffi buffer; 3.11 exports nothing."""

    __slots__ = ("_start", "_exporter")

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags):
            block = getattr(self, "_block", None)
            if block is not None and block.released:
                return memoryview(bytearray())  # a freed Buffer hands out nothing
            return memoryview(self._exporter)


if TYPE_CHECKING:
    class ExporterBase:
        """What type checkers see of the base made at run time: a buffer exporter (PEP 688),
        so that memoryview(b), bytes(b) and np.frombuffer(b) type-check."""

        _start: int    # the members of the run-time type (see above)
        _exporter: Any

        def __buffer__(self, flags: int, /) -> memoryview: ...

    BUFFER_PROTOCOL: bool

    def new_exporter(addr: int, size: int) -> Any: ...

    def stop_exporting(exporter: Any) -> None: ...
else:
    _native_types = _make_native_types()
    if _native_types is not None:
        Exporter, ExporterBase = _native_types
        _new = object.__new__

        def new_exporter(addr, size):
            """The exporter of ``size`` bytes at ``addr``, for a new Buffer's ``_exporter``."""
            exporter = _new(Exporter)
            exporter._start = addr
            exporter._size = size
            return exporter

        def stop_exporting(exporter):
            """New exports are empty from now on (views made before stay as they are)."""
            exporter._size = 0
    else:
        ExporterBase = _PythonExporterBase
        def new_exporter(addr, size):
            from .._pyshmem_args import memory_at

            return memory_at(addr, size)

        def stop_exporting(exporter):
            pass  # the Buffer's own exports check its block (a cffi buffer cannot shrink)

    BUFFER_PROTOCOL = _native_types is not None or sys.version_info >= (3, 12)


# ---------------------------------------------------------------------------
# DLPack (dlpack.h v0.8)
# ---------------------------------------------------------------------------

KDLCPU = 1
_KDLUINT = 1


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


DLPACK_VERSION = (1, 0)
_CAPSULE_NAME = b"dltensor"
_CAPSULE_NAME_VERSIONED = b"dltensor_versioned"
_api_capsule_new = ctypes.pythonapi.PyCapsule_New
_api_capsule_new.restype = ctypes.py_object
_api_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_api_capsule_is_valid.restype = ctypes.c_int
_api_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# struct address -> (struct, shape, view, capsule, capsule name): the view keeps the Buffer's export
# counted until the consumer is done; the capsule is kept to see whether it was consumed.
_dlpack_live: Dict[int, Tuple[Any, ...]] = {}
# struct addresses whose deleter ran (filled by the deleter, emptied by sweep_dlpack).
_dlpack_finished: Dict[int, bool] = {}
_dlpack_lock = threading.Lock()


def _deleter(address, _finished=_dlpack_finished):
    # Only a dict store: no call that could see (and replace) an exception in flight.
    _finished[address] = True


_deleter_ptr = _DELETER(_deleter)  # module-level: C may call it until the process ends


def export_dlpack(view, versioned):
    """A ``"dltensor_versioned"`` (``versioned``) or ``"dltensor"`` capsule over ``view``
    (a 1-D ``'B'`` memoryview of a Buffer)."""
    sweep_dlpack()
    if versioned:
        managed = _DLManagedTensorVersioned()
        managed.version = _DLPackVersion(*DLPACK_VERSION)
        managed.flags = 0  # writable, not a copy
        name = _CAPSULE_NAME_VERSIONED
    else:
        managed = _DLManagedTensor()
        name = _CAPSULE_NAME
    shape = (ctypes.c_int64 * 1)(view.nbytes)
    start = ctypes.addressof(ctypes.c_char.from_buffer(view)) if view.nbytes else 0
    t = managed.dl_tensor
    t.data = start or None
    t.device = _DLDevice(KDLCPU, 0)
    t.ndim = 1
    t.dtype = _DLDataType(_KDLUINT, 8, 1)
    t.shape = shape
    t.strides = None  # compact, row-major
    t.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _deleter_ptr
    address = ctypes.addressof(managed)
    capsule = _api_capsule_new(address, name, None)
    with _dlpack_lock:
        _dlpack_live[address] = (managed, shape, view, capsule, name)
    return capsule


def sweep_dlpack():
    """Drops the DLPack exports whose consumer has finished, and capsules that were never
    consumed and are referenced by nobody any more.  Returns how many exports remain."""
    with _dlpack_lock:
        for address in list(_dlpack_finished):
            _dlpack_finished.pop(address, None)
            entry = _dlpack_live.pop(address, None)
            if entry is not None:
                entry[2].release()
        for address, entry in list(_dlpack_live.items()):
            capsule = entry[3]
            # Referenced by the entry tuple and getrefcount's argument only, and still named
            # "dltensor" (a consumer renames it): dropped unconsumed.
            if sys.getrefcount(capsule) <= 3 and _api_capsule_is_valid(capsule, entry[4]):
                del _dlpack_live[address]
                entry[2].release()
        return len(_dlpack_live)


# ---------------------------------------------------------------------------
# Reading another library's DLPack tensor (the collectives of shmem.core take them)
# ---------------------------------------------------------------------------

_api_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_api_capsule_get.restype = ctypes.c_void_p
_api_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]

#: DLPack type codes (DLDataTypeCode) and bits -> NumPy names.
_DL_TYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
             (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
             (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
             (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}


class DLPackView(NamedTuple):
    """Where a DLPack tensor's elements are: its first byte, its size in bytes, its element
    type (a NumPy name, or ``"code:bits"`` for one NumPy has no name for), whether its elements
    are contiguous and in order, and whether it is on the CPU."""
    addr: int
    nbytes: int
    dtype: str
    contiguous: bool
    on_cpu: bool


def read_dlpack(obj: Any) -> DLPackView:
    """What ``obj.__dlpack__()`` describes, read without consuming it (the capsule's own
    destructor hands it back to its producer).  ``obj`` must outlive the use of the view."""
    capsule = obj.__dlpack__()
    address = _api_capsule_get(capsule, _CAPSULE_NAME)
    t = _DLManagedTensor.from_address(address).dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    count = 1
    for extent in shape:
        count *= extent
    contiguous = True
    if t.strides and count > 1:
        expected = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != expected:
                contiguous = False
            expected *= shape[i]
    code, bits = t.dtype.code, t.dtype.bits * t.dtype.lanes
    return DLPackView(addr=(t.data or 0) + t.byte_offset, nbytes=count * bits // 8,
                      dtype=_DL_TYPES.get((code, bits), f"{code}:{bits}"), contiguous=contiguous,
                      on_cpu=t.device.device_type == KDLCPU)
