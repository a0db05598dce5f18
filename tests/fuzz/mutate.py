"""What the fuzzed readers are fed: a valid file's bytes mutated (cut short, bytes changed,
inserted, removed, repeated), random bytes, text in the wrong encoding, huge lines, and JSON
documents of every shape.

Hypothesis shrinks a failing input to a small one; the regressions it found are kept as
`@example`s beside each test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

# What `aiayn` turns into a message and exit code 2 (src/aiayn/cli.py); DataError is a ValueError.
READABLE = (ValueError, OSError)

ENCODINGS = ("utf-8", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252")


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """`valid` changed the ways files get damaged; or bytes with nothing of it."""
    n = len(valid)
    kind = draw(st.sampled_from(["cut", "flip", "insert", "delete", "repeat", "random"]))
    if kind == "cut":  # an interrupted copy or write
        return valid[: draw(st.integers(0, max(0, n - 1)))]
    if kind == "random" or n == 0:
        return draw(st.binary(max_size=2048))
    at = draw(st.integers(0, n - 1))
    if kind == "flip":  # a disk error, a hand edit
        changed = bytearray(valid)
        for i in [*draw(st.lists(st.integers(0, n - 1), max_size=8)), at]:
            changed[i] = draw(st.integers(0, 255))
        return bytes(changed)
    if kind == "insert":
        return valid[:at] + draw(st.binary(min_size=1, max_size=64)) + valid[at:]
    length = draw(st.integers(1, max(1, n - at)))
    if kind == "delete":
        return valid[:at] + valid[at + length :]
    return valid[: at + length] + valid[at : at + length] * draw(st.integers(1, 4)) + valid[at:]


@st.composite
def wrongly_encoded(draw: st.DrawFn, lines: list[str]) -> bytes:
    """The lines of a text file in an encoding other than UTF-8 (or in UTF-8)."""
    encoding = draw(st.sampled_from(ENCODINGS))
    return "".join(line + "\n" for line in lines).encode(encoding, errors="replace")


def huge_line(length: int = 1_000_000) -> st.SearchStrategy[bytes]:
    """One very long line, with or without its line end (a file that is not line-based)."""
    return st.tuples(
        st.sampled_from([b"a", b"\t", b" ", "é".encode(), b"\x00"]), st.booleans()
    ).map(lambda c: c[0] * length + (b"\n" if c[1] else b""))


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def edited_json(draw: st.DrawFn, valid: dict[str, Any]) -> bytes:
    """A valid JSON object with a key removed, a value replaced by any JSON value, a key added,
    or another document in its place (a list, a number, nesting far deeper than any file's)."""
    kind = draw(st.sampled_from(["drop", "replace", "replace-inner", "add", "other", "deep"]))
    values = json.loads(json.dumps(valid))
    if kind == "deep":
        depth = draw(st.sampled_from([100, 10_000, 200_000]))
        return ("[" * depth + "]" * depth).encode()
    if kind == "other":
        return json.dumps(draw(JSON_VALUES)).encode()
    keys = sorted(values)
    if kind == "add" or not keys:
        values[draw(st.text(max_size=8))] = draw(JSON_VALUES)
    else:
        key = draw(st.sampled_from(keys))
        if kind == "drop":
            del values[key]
        elif kind == "replace-inner" and isinstance(values[key], dict) and values[key]:
            inner = draw(st.sampled_from(sorted(values[key])))
            values[key][inner] = draw(JSON_VALUES)
        else:
            values[key] = draw(JSON_VALUES)
    return json.dumps(values).encode()


def json_file(valid: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """Any of the ways a JSON file goes wrong: edited, or its bytes damaged."""
    return edited_json(valid) | mutated(json.dumps(valid, indent=1).encode())


class Hung(BaseException):
    """An example ran past HANG_SECONDS (a BaseException: no reader's handler catches it)."""


HANG_SECONDS = 120  # far beyond any example's time, even on a loaded machine


def _hung(signum, frame):
    raise Hung(f"the reader ran for more than {HANG_SECONDS} s: it hangs")


@contextmanager
def scratch(template: Path | None = None):
    """A fresh directory for one example (hypothesis runs many per test), a copy of
    `template` if given; removed afterwards. An example that runs past HANG_SECONDS fails."""
    root = Path(tempfile.mkdtemp(prefix="aiayn-fuzz-"))
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(HANG_SECONDS)
    try:
        work = root / "w"
        if template is None:
            work.mkdir()
        else:
            shutil.copytree(template, work)
        yield work
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        shutil.rmtree(root, ignore_errors=True)


def read_or_refuse(read: Callable[[], Any], *paths: Path) -> Any:
    """What `read()` returns, or None where it refused with an error the command line turns
    into a message (exit 2) that names one of `paths`. Anything else escapes: a failure."""
    try:
        return read()
    except READABLE as err:
        message = str(err)
        assert any(str(p) in message or p.name in message for p in paths), message
        return None


def no_leftovers(directory: Path) -> list[str]:
    """Temporary files a reader left behind (a partial output next to a complete one)."""
    return [name for name in os.listdir(directory) if ".tmp" in name]
