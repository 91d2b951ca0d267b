"""A Python process that reaches shmem_init (through a C extension, here symdata_py.c loaded
with ctypes) keeps its globals private: they are the interpreter's, written by every Python
thread, so the library never moves them (src/mem/data_segment.c).  Init works, with the
heaps only; a shared library's global is not a target.

    symdata_python.py PATH_OF_symdata_py.so
"""

import ctypes
import sys
import threading

DATA_MEMFD = "/memfd:aclshmem-data"


def main(module_path):
    lib = ctypes.CDLL(module_path)
    lib.symdata_py_last_error.restype = ctypes.c_char_p
    lib.symdata_py_put_module_word.restype = ctypes.c_char_p
    # A Python thread busy with the interpreter's state while init runs (ctypes lets it).
    stop = threading.Event()

    def keep_busy():
        while not stop.is_set():
            pass

    busy = threading.Thread(target=keep_busy)
    busy.start()
    try:
        rc = lib.symdata_py_init()
    finally:
        stop.set()
        busy.join()
    assert rc == 0, f"init returned {rc}: {lib.symdata_py_last_error().decode()}"
    with open("/proc/self/maps", encoding="utf-8") as f:
        shared = [line.strip() for line in f if DATA_MEMFD in line]
    assert not shared, f"the interpreter's globals were moved into shared memory: {shared}"
    error = lib.symdata_py_put_module_word().decode()
    assert "not inside a symmetric" in error, f"a put to a shared library's global: {error!r}"
    assert lib.symdata_py_finalize() == 0, lib.symdata_py_last_error().decode()
    print("ok: the interpreter's globals stayed private; init and finalize worked")


if __name__ == "__main__":
    main(sys.argv[1])
