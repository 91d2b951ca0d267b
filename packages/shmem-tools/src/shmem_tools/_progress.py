"""The progress bar of shmem-perf on stderr, drawn by tqdm.

On a terminal tqdm redraws one line.  A log file or a pipe would collect every redraw
as carriage returns, so there a line of the same format (tqdm's, in ASCII) is written
whenever another tenth of the work is done: logs stay short and readable.
"""

import sys
import threading
import time

from tqdm import tqdm

# tqdm's usual layout, without a rate: the steps are of very different lengths.
_FORMAT = "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"


class Progress:
    """``total`` steps of work (more may be announced: set_total); ``advance`` counts
    finished ones and names the last.  ``enabled=False`` (--no-progress) draws nothing."""

    def __init__(self, total, stream=None, enabled=True, name="shmem-perf"):
        self.total = max(1, total)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.name = name
        self.label = ""
        self.start = time.monotonic()
        self._last_tenth = -1
        # advance() is called from the threads that read the PEs' output.
        self._lock = threading.Lock()
        tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._bar = tqdm(total=self.total, desc=name, file=self.stream, bar_format=_FORMAT,
                         dynamic_ncols=True) if tty else None

    def advance(self, label="", steps=1):
        with self._lock:
            self.done = min(self.total, self.done + steps)
            if label:
                self.label = label
            self._draw()

    def set_total(self, total):
        with self._lock:
            self.total = max(self.done, total, 1)
            if self._bar is not None:
                self._bar.total = self.total
                self._bar.refresh()

    def _draw(self):
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(self.label, refresh=False)
            self._bar.update(self.done - self._bar.n)
            return
        tenth = 10 * self.done // self.total
        if tenth > self._last_tenth:  # a larger total announced later may lower it
            self._last_tenth = tenth
            line = tqdm.format_meter(self.done, self.total, time.monotonic() - self.start, prefix=self.name,
                                     postfix=self.label, bar_format=_FORMAT, ascii=True)
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self):
        with self._lock:
            if self._bar is not None:
                self._bar.close()
            self.enabled = False
