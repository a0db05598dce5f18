"""SIGINT and SIGTERM as a request to stop: the training loop finishes its update, saves a
checkpoint and stops (a second process manager's TERM then finds nothing half-written)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class StopSignals:
    """`received` turns True on SIGINT/SIGTERM while `installed()` is active."""

    def __init__(self) -> None:
        self.received = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers for the block; the previous ones are put back after it."""

        def handler(signum, frame) -> None:
            self.received = True

        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
