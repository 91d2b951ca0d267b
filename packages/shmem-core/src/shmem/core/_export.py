"""How a Buffer hands its memory to other code: the buffer protocol and DLPack.

Buffer protocol.  On Python 3.11 a class written in Python cannot export the buffer
protocol (PEP 688's ``__buffer__`` arrives in 3.12), and the built-in exporters either own
their memory (bytearray, array, mmap) or need one class per length with a ``<B`` format
that memoryview cannot index (ctypes arrays).  So this module makes, once at import, a
small base type with ``PyType_FromSpec`` whose buffer slots are bytearray's own C
functions, and whose instance layout is bytearray's.  Those functions read only three
fields of the object - the start pointer, the size, and the count of exported views - and
this type exposes them to Python as the members ``_start``, ``_size`` and ``_exports``.
The result, for every CPython that passes the layout check below:

- ``memoryview(b)`` is writable, format ``'B'``, one dimension: indexing, slicing,
  ``bytes``, ``numpy.frombuffer`` and ``torch.frombuffer`` work;
- ``_exports`` counts the live views exactly (the C functions count them), on every
  Python version, with no Python code running per view;
- nothing is made per length: a Buffer is one small object.

The layout is checked at import against a real bytearray (and debug builds of CPython,
whose bytearray functions assert the type, are excluded).  Where the check fails, Python
3.12+ falls back to ``__buffer__`` / ``__release_buffer__`` (counted in Python), and
3.11 gets no buffer protocol (``Buffer.view()`` / ``.numpy()`` still work through cffi).

DLPack.  ``export_dlpack`` builds a ``DLManagedTensorVersioned`` (DLPack 1.0, capsule
``"dltensor_versioned"``, writable) for consumers that ask for version 1, and the legacy
``DLManagedTensor`` (dlpack.h v0.8, capsule ``"dltensor"``) otherwise, in ctypes memory.  While a consumer (NumPy, torch) holds it,
the tensor keeps a memoryview of the Buffer, so it is counted in ``_exports`` like any other
view.  The consumer's call of ``deleter`` only records the tensor as finished (one dict
store: a deleter may run while an exception is propagating, when calling anything would
replace that exception); ``sweep_dlpack`` then drops what is finished, and what was never
consumed and is no longer referenced.
"""

import ctypes
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

__all__ = ["ExporterBase", "EXACT_VIEW_COUNT", "export_dlpack", "sweep_dlpack", "KDLCPU"]

_P = ctypes.sizeof(ctypes.c_void_p)
# PyByteArrayObject: PyObject_VAR_HEAD (refcnt, type, ob_size), ob_alloc, ob_bytes,
# ob_start, ob_exports.  bytearray's getbuffer exports (ob_start, ob_size) and counts
# ob_exports; its releasebuffer decrements ob_exports.
_SIZE_OFFSET, _START_OFFSET, _EXPORTS_OFFSET, _BASICSIZE = 2 * _P, 5 * _P, 6 * _P, 7 * _P

_Py_bf_getbuffer, _Py_bf_releasebuffer, _Py_tp_members, _Py_tp_doc = 1, 2, 72, 56
_T_PYSSIZET, _READONLY = 19, 1
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
    """Whether this interpreter's bytearray has the layout the base type relies on."""
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


# Everything handed to PyType_FromSpec must live as long as the type: kept here forever.
_type_keepalive: List[object] = []


def _make_base():
    api = ctypes.pythonapi
    api.PyType_GetSlot.restype = ctypes.c_void_p
    api.PyType_GetSlot.argtypes = [ctypes.py_object, ctypes.c_int]
    getbuffer = api.PyType_GetSlot(bytearray, _Py_bf_getbuffer)
    releasebuffer = api.PyType_GetSlot(bytearray, _Py_bf_releasebuffer)
    if not getbuffer or not releasebuffer:
        return None
    members = (_PyMemberDef * 4)(
        _PyMemberDef(b"_size", _T_PYSSIZET, _SIZE_OFFSET, 0, b"bytes the buffer protocol exports"),
        _PyMemberDef(b"_start", _T_PYSSIZET, _START_OFFSET, 0, b"address the buffer protocol exports"),
        _PyMemberDef(b"_exports", _T_PYSSIZET, _EXPORTS_OFFSET, _READONLY, b"live exported views"),
        _PyMemberDef(None, 0, 0, 0, None))
    doc = b"Exports (_start, _size) through the buffer protocol and counts the views in _exports."
    slots = (_PyTypeSlot * 5)(
        _PyTypeSlot(_Py_bf_getbuffer, getbuffer),
        _PyTypeSlot(_Py_bf_releasebuffer, releasebuffer),
        _PyTypeSlot(_Py_tp_members, ctypes.cast(members, ctypes.c_void_p).value),
        _PyTypeSlot(_Py_tp_doc, ctypes.cast(ctypes.c_char_p(doc), ctypes.c_void_p).value),
        _PyTypeSlot(0, None))
    name = b"shmem.core._export.ExporterBase"
    spec = _PyTypeSpec(name, _BASICSIZE, 0,
                       _Py_TPFLAGS_HAVE_VERSION_TAG | _Py_TPFLAGS_BASETYPE | _Py_TPFLAGS_IMMUTABLETYPE, slots)
    _type_keepalive.extend((members, slots, spec, name, doc))
    api.PyType_FromSpec.restype = ctypes.py_object
    api.PyType_FromSpec.argtypes = [ctypes.POINTER(_PyTypeSpec)]
    return api.PyType_FromSpec(ctypes.byref(spec))


class _PythonExporterBase:
    """Fallback base where bytearray's layout differs: the same members in Python;
    Python 3.12+ exports through ``__buffer__`` (PEP 688), 3.11 exports nothing."""

    __slots__ = ("_size", "_start", "_exports")

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._size = self._start = self._exports = 0
        return self

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags):
            from .. import _native

            ffi = _native.get_ffi()
            size = self._size
            raw = ffi.buffer(ffi.cast("char *", self._start), size) if size else bytearray()
            view = memoryview(raw).cast("B")
            self._exports += 1
            return view

        def __release_buffer__(self, view):
            self._exports -= 1


if TYPE_CHECKING:
    class ExporterBase:
        """What type checkers see of the base made at run time: a buffer exporter (PEP 688),
        so that memoryview(b), bytes(b) and np.frombuffer(b) type-check."""

        _start: int    # the members of the run-time type (see above)
        _size: int
        _exports: int

        def __buffer__(self, flags: int, /) -> memoryview: ...

    EXACT_VIEW_COUNT: bool
else:
    ExporterBase = _make_base() if _bytearray_layout_matches() else None
    EXACT_VIEW_COUNT = ExporterBase is not None or sys.version_info >= (3, 12)
    if ExporterBase is None:
        ExporterBase = _PythonExporterBase


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
