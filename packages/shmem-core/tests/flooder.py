"""An outsider for the flood tests, run as its own process: it knows only an address.

    python flooder.py HOST PORT HOLD SECONDS PACE

For SECONDS it holds HOLD idle TCP connections to HOST:PORT, opening a new one as soon as
the server closes one, at most PACE new connections a second.  It never sends a byte.  At
the end it prints one line: ``opened N rate R closed_by_server C``."""

import collections
import selectors
import socket
import sys
import time


class Flood:
    def __init__(self, host, port, hold):
        self.address = (host, port)
        self.hold = hold
        self.selector = selectors.DefaultSelector()
        self.held = collections.deque()  # oldest first
        self.opened = self.closed_by_server = 0

    def open_one(self):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(self.address)  # in progress; the server's accept queue completes it
        self.selector.register(s, selectors.EVENT_READ)
        self.held.append(s)
        self.opened += 1

    def forget(self, s):
        self.selector.unregister(s)
        self.held.remove(s)
        s.close()

    def reap(self, timeout):
        """Closes (and so renews) the connections the server has closed."""
        for key, _ in self.selector.select(timeout):
            try:
                data = key.fileobj.recv(1)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                self.closed_by_server += 1
                self.forget(key.fileobj)


def main(host, port, hold, seconds, pace):
    flood = Flood(host, port, hold)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * pace)
        while flood.opened < due and len(flood.held) < hold:
            flood.open_one()
        flood.reap(0.002)
    elapsed = time.monotonic() - start
    print(f"opened {flood.opened} rate {flood.opened / elapsed:.0f} closed_by_server {flood.closed_by_server}",
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
