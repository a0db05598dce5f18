"""A clock that ticks once per output step of a search (and once per model call of the
server): under it the server's budget of seconds is a budget of steps, the same on any machine."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from unittest import mock


@contextlib.contextmanager
def step_clock() -> Iterator[None]:
    ticks = SimpleNamespace(now=0.0)

    def monotonic() -> float:
        ticks.now += 1
        return ticks.now

    clock = SimpleNamespace(monotonic=monotonic)
    with mock.patch("aiayn.decode.rules.time", clock), mock.patch("aiayn.serve.served.time", clock):
        yield
