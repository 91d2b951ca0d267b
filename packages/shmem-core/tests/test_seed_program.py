"""A program written only from the seed (seed_program.py), run as plain processes: rank 0
makes the unique ID and hands the bytes to the others, then core.init(uid=..., rank=...,
nranks=..., mem_size=..., initializer_method="uid")."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("nranks", [2, 4])
def test_seed_program(tmp_path, nranks):
    env = dict(os.environ)
    import shmem

    pkg_root = os.path.dirname(os.path.dirname(shmem.__file__))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root, env.get("PYTHONPATH", "")])
    for var in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "RANK", "WORLD_SIZE"):
        env.pop(var, None)
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "seed_program.py"), str(r), str(nranks),
                               str(tmp_path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(nranks)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=120))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"SEED PROGRAM OK {r}" in out, f"rank {r} (status {p.returncode}):\n{out}\n{err}"
