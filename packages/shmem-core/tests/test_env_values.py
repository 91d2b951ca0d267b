"""Every bad value of a variable that init reads is an AclshmemInvalid naming the variable:
never a bare OverflowError or ValueError, nor a misleading failure of the exchange that
follows (issue #23: a 40-digit SHMEM_RUN_MEM_SIZE raised OverflowError)."""

import pytest

import jobs_env_values
from shmem import testing

HUGE = "1" * 40
# (kind, environment, init's keyword arguments, what the message names)
CASES = [
    ("launcher", {"SHMEM_RUN_MEM_SIZE": HUGE}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_MEM_SIZE": str(1 << 64)}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_MEM_SIZE": str((1 << 64) - 1)}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_MEM_SIZE": "64T"}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_MEM_SIZE": "9" * 5000}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_MEM_SIZE": "0." + "0" * 5000 + "1K"}, {}, "SHMEM_RUN_MEM_SIZE"),
    ("launcher", {"SHMEM_RUN_PE": HUGE}, {}, "SHMEM_RUN_PE"),
    ("launcher", {"SHMEM_RUN_NPES": HUGE}, {}, "SHMEM_RUN_NPES"),
    ("launcher", {}, {"mem_size": 1 << 70}, "mem_size"),
    ("torchrun", {"MASTER_PORT": HUGE}, {"mem_size": 1 << 20}, "MASTER_PORT"),
    ("torchrun", {"MASTER_PORT": "70000"}, {"mem_size": 1 << 20}, "MASTER_PORT"),
    ("torchrun", {"WORLD_SIZE": HUGE}, {"mem_size": 1 << 20}, "WORLD_SIZE"),
    ("torchrun", {"RANK": HUGE}, {"mem_size": 1 << 20}, "RANK"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_PORT": HUGE}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_PORT"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_PORT": "port"}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_PORT"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_TIMEOUT": HUGE}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_TIMEOUT"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_TIMEOUT": "soon"}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_TIMEOUT"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_TIMEOUT": "nan"}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_TIMEOUT"),
    ("torchrun", {"SHMEM_UID_EXCHANGE_TIMEOUT": "-5"}, {"mem_size": 1 << 20}, "SHMEM_UID_EXCHANGE_TIMEOUT"),
]


@pytest.fixture(scope="module")
def outcomes():
    cases = [(kind, env, kwargs) for kind, env, kwargs, _ in CASES]
    [results] = testing.run_pes(1, jobs_env_values.try_every_case, cases, init=False, timeout=120)
    return results


@pytest.mark.parametrize("index", range(len(CASES)),
                         ids=[f"{kind}-{next(iter(env or kwargs))}={str({**env, **kwargs}[next(iter(env or kwargs))])[:12]}"
                              for kind, env, kwargs, _ in CASES])
def test_a_bad_value_is_an_invalid_argument_naming_its_variable(outcomes, index):
    kind, env, kwargs, name = CASES[index]
    error, message = outcomes[index]
    assert error == "AclshmemInvalid" and name in message, (error, message[:300])
    assert message.count(f"{name}: {name}") == 0, message[:300]  # named once, not twice


@pytest.mark.parametrize("extra_args, env, names", [
    (["--join-timeout", "1e40"], {}, "--join-timeout"),
    ([], {"SHMEM_UID_EXCHANGE_TIMEOUT": "soon"}, "SHMEM_UID_EXCHANGE_TIMEOUT"),
    (["--mem-size", HUGE], {}, "too large"),
])
def test_the_launcher_refuses_bad_values_at_once(tmp_path, extra_args, env, names):
    """python -m shmem.run --nnodes 2 (node 0): a bad timeout or size is an error naming it
    before the launcher serves anything (a 1e40 s join timeout waited for ever)."""
    import os
    import subprocess
    import sys

    import shmem

    prog = tmp_path / "prog.py"
    prog.write_text("print('ran')\n")
    penv = {k: v for k, v in os.environ.items() if not k.startswith(("SHMEM_RUN", "SHMEM_UID"))}
    penv.update(env, SHMEM_JOB_SECRET="env-values-test",
                PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(shmem.__file__)),
                                            penv.get("PYTHONPATH", "")]))
    args = ["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", str(jobs_env_values.free_port()),
            *extra_args, "-n", "1", str(prog)]
    r = subprocess.run([sys.executable, "-m", "shmem.run", *args], capture_output=True, text=True, env=penv,
                       timeout=30)
    assert r.returncode in (1, 2) and names in r.stderr and "ran" not in r.stdout, (r.returncode, r.stderr[-500:])
