"""The 2-PE job ci/wheels.sh runs in each fresh venv: shmem.core alone (no numpy, which a
plain `pip install shmem-core` does not bring).

    python -m shmem.run -n 2 ci/wheel_job.py

Every PE fills a symmetric buffer with its own pattern, gets its right neighbour's with
core.get and checks every byte; it prints which libaclshmem it loaded, so the caller can
tell the wheel's copy from a system one.
"""
import shmem.core as core
from shmem import _native

SIZE = 1 << 16

core.init(mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
right = (me + 1) % n

mine = core.buffer(SIZE)
mine.view()[:] = bytes((me * 7 + i) % 251 for i in range(SIZE))
core.barrier_all()

got = core.buffer(SIZE)
core.get(got, mine, right)
core.synchronize(0)
expected = bytes((right * 7 + i) % 251 for i in range(SIZE))
if bytes(got.view()) != expected:
    raise SystemExit(f"PE {me}: the bytes got from PE {right} are wrong")
core.barrier_all()

print(f"PE {me} of {n}: {SIZE} bytes from PE {right} match; libaclshmem {_native.library_path()}")
core.free(got)
core.free(mine)
core.finalize()
