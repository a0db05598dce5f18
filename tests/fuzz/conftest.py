"""The fuzzed readers' settings (a hypothesis profile) and the valid files they damage.

The quick loop runs `aiayn-fuzz`: few examples each, drawn the same way every run
(derandomized), so the suite is deterministic and stays within about a minute. For a deeper
search, `AIAYN_FUZZ=deep pytest tests/fuzz` draws many more, new ones each time.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from aiayn import layout

settings.register_profile(
    "aiayn-fuzz",
    max_examples=100,
    derandomize=True,
    database=None,  # nothing written to .hypothesis/
    deadline=None,  # a loaded machine is slow; a reader that hangs fails by `scratch`'s alarm
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "aiayn-fuzz-deep",
    max_examples=1000,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Applied by the fuzz tests only (`@FUZZ`), so that other suites' hypothesis settings stay theirs.
FUZZ = settings.get_profile(
    "aiayn-fuzz-deep" if os.environ.get("AIAYN_FUZZ") == "deep" else "aiayn-fuzz"
)


@pytest.fixture(scope="session")
def checkpoint(tiny_run):
    """A whole step checkpoint of a tiny run: weights, config, tokenizer, state, optimizer."""
    return layout.latest(tiny_run).path
