"""A progress bar on stderr.

On a terminal it redraws one line (``\\r``); otherwise (a log file, a pipe) it prints a
line whenever another tenth of the work is done, so logs stay short.
"""

import sys
import threading
import time


class Progress:
    def __init__(self, total, stream=None, enabled=True, width=30):
        self.total = max(1, total)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.width = width
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = ""
        self.start = time.monotonic()
        self._last_tenth = -1
        self._lock = threading.Lock()

    def _bar(self):
        frac = min(1.0, self.done / self.total)
        filled = int(round(frac * self.width))
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done:>3}/{self.total} "
                f"{frac * 100:5.1f}% {time.monotonic() - self.start:6.1f}s {self.label}")

    def advance(self, label="", steps=1):
        with self._lock:
            self.done = min(self.total, self.done + steps)
            if label:
                self.label = label
            self._draw()

    def set_total(self, total):
        with self._lock:
            self.total = max(self.done, total, 1)

    def _draw(self):
        if not self.enabled:
            return
        if self.tty:
            text = self._bar()
            self.stream.write("\r" + text[:200].ljust(100))
            self.stream.flush()
            return
        tenth = int(10 * self.done / self.total)
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            self.stream.write("shmem-perf " + self._bar() + "\n")
            self.stream.flush()

    def close(self):
        with self._lock:
            if self.enabled and self.tty:
                self.stream.write("\r" + self._bar()[:200].ljust(100) + "\n")
                self.stream.flush()
            self.enabled = False
