"""Many checks in one multi-PE job: spawning PEs costs time, so a job module registers
its checks with a ``Checks`` object, one ``run_pes`` job runs them all in order (every PE
runs every check, with a barrier between checks), and the test module turns each check
into its own pytest item.

This module is imported by the PEs too, so it does not import pytest at the top.
"""

import os
import socket
import traceback


class Checks:
    def __init__(self):
        self.items = []  # (name, fn, xfail reason or None)

    def __call__(self, fn=None, *, xfail=None):
        """Registers fn as a check; ``xfail="why"`` marks behaviour the C library does not
        implement yet (the pytest item becomes a strict xfail)."""

        def register(f):
            self.items.append((f.__name__, f, xfail))
            return f

        return register(fn) if fn is not None else register

    def names(self):
        return [name for name, _, _ in self.items]

    def run(self, barrier=True):
        """Runs every check on this PE; returns {name: ("ok", value) | ("fail", traceback)}.

        The PEs stay in step with a barrier after each check.  A check that fails
        unexpectedly may have left the PEs out of step (one in a collective the others
        skipped), so this PE then ends at once with the results so far
        (testing.exit_pe): its peers see it die instead of waiting for it.  For debugging,
        SHMEM_TEST_KEEP_GOING=1 runs on regardless."""
        from shmem import core, testing

        results = {}
        for i, (name, fn, xfail) in enumerate(self.items):
            try:
                results[name] = ("ok", fn())
            except Exception:
                results[name] = ("fail", traceback.format_exc())
                if not xfail and not os.environ.get("SHMEM_TEST_KEEP_GOING"):
                    for later, _, _ in self.items[i + 1:]:
                        results[later] = ("not run", f"not run: check {name} failed on this PE before it")
                    testing.exit_pe(results)
            if barrier:
                try:
                    core.barrier_all()
                except Exception:  # a peer left (its check failed): keep what we have
                    why = traceback.format_exc()
                    for later, _, _ in self.items[i + 1:]:
                        results[later] = ("not run", f"not run: the barrier after check {name} failed:\n{why}")
                    testing.exit_pe(results)
        return results


def pytest_params(checks):
    """The check names as pytest parameters, strict xfails where the check says so."""
    import pytest

    params = []
    for name, _, xfail in checks.items:
        marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def assert_check(results, name):
    """Asserts that check ``name`` passed on every PE of a job's results."""
    failures = []
    for rank, res in enumerate(results):
        status, value = res.get(name, ("missing", "no result"))
        if status != "ok":
            failures.append(f"PE {rank}:\n{value}")
    if failures:
        import pytest

        pytest.fail(f"check {name} failed on {len(failures)} PE(s):\n" + "\n".join(failures[:2]), pytrace=False)
    return [res[name][1] for res in results]


def raises(exc_type, fn, *args, match=None, **kwargs):
    """Calls fn and returns the exception it raised; AssertionError if it raised nothing or
    something else (usable inside PEs without pytest)."""
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        if match is not None and match.lower() not in str(exc).lower():
            raise AssertionError(f"{fn.__name__}{args}: message {str(exc)!r} lacks {match!r}") from exc
        return exc
    except Exception as exc:
        raise AssertionError(f"{getattr(fn, '__name__', fn)}{args!r}: expected {exc_type.__name__}, "
                             f"got {type(exc).__name__}: {exc}") from exc
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args!r}: expected {exc_type.__name__}, nothing raised")


def ring():
    """(me, n, right, left) of this PE: its rank, the job's size and its neighbours on the ring
    of PEs, which most checks pass data around."""
    from shmem import core

    me, n = core.my_pe(), core.n_pes()
    return me, n, (me + 1) % n, (me - 1) % n


def free_port():
    """A TCP port of 127.0.0.1 free right now (a rendezvous address for a job the check starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
