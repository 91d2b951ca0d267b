"""Streams of the cpu platform: ordered queues served by a worker thread."""

from .. import _pyshmem
from .utils import AclshmemError, AclshmemInvalid, check_rc

__all__ = ["Stream", "synchronize"]


class Stream:
    """A stream for the ``stream`` arguments of the API (pass the object or ``.handle``).

    ``synchronize()`` waits for everything enqueued so far; ``close()`` destroys it.  Use
    it as a context manager to close it automatically."""

    def __init__(self):
        try:
            self._handle = _pyshmem.aclshmemx_stream_create()
        except RuntimeError as exc:
            raise AclshmemError(f"Stream: {exc}") from None

    @property
    def handle(self):
        """The stream's address as an int."""
        if self._handle is None:
            raise AclshmemInvalid("the stream is closed")
        return self._handle

    @property
    def closed(self):
        """True once close() destroyed the stream."""
        return self._handle is None

    def synchronize(self):
        """Waits for everything enqueued on the stream; raises AclshmemError with the first
        error that happened on it."""
        check_rc("Stream.synchronize", _pyshmem.aclshmemx_stream_synchronize(self.handle))

    def close(self):
        """Waits for the stream and destroys it (closing twice is allowed)."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        check_rc("Stream.close", _pyshmem.aclshmemx_stream_destroy(handle))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __int__(self):
        return self.handle

    def __index__(self):
        return self.handle

    def __repr__(self):
        return "Stream(closed)" if self._handle is None else f"Stream(handle={self._handle:#x})"


def synchronize(stream=0):
    """Waits for everything enqueued on ``stream`` (0: the default stream)."""
    from .utils import check_stream

    s = check_stream(stream)
    check_rc("synchronize", _pyshmem.aclshmemx_stream_synchronize(s))
