"""Bad values of the environment variables that init reads, tried one by one in a PE of
run_pes (see test_env_values.py).  Every one must fail before the library starts."""

import os

from harness import free_port

LAUNCHER = ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE")
TORCHRUN = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _set_env(env):
    """Sets (or, for None, unsets) the variables of ``env``; returns what they were."""
    before = {name: os.environ.get(name) for name in env}
    for name, value in env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return before


def _try_init(env, kwargs):
    """(exception type name, message) of init under ``env`` (None: unset), or "initialised"."""
    from shmem import core

    before = _set_env(env)
    try:
        core.init(**kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    finally:
        _set_env(before)
    core.finalize()
    return "initialised", ""


def try_every_case(cases):
    """Runs init for each (env, kwargs) of ``cases``; the torchrun cases get a torchrun
    environment first (and no launcher's)."""
    torchrun = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    results = []
    for kind, env, kwargs in cases:
        if kind == "torchrun":
            env = {**{name: None for name in LAUNCHER}, **torchrun, **env}
        results.append(_try_init(env, kwargs))
    return results
