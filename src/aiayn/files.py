"""Writing files so that an interruption never leaves a half-written one behind, and reading
the JSON ones back with errors that name the file and what to do."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call `write(tmp)` on a temporary file beside `path`, flush it to disk, then rename it
    over `path`. Readers see the old file or the new one, never a partial one."""
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


ELSEWHERE = "; choose a place you can write"


def make_dir(path: Path) -> Path:
    """Create the directory `path` (and its parents) if need be; an error names it and why."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path}: is a file, not a directory; give a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OSError(f"{path}: cannot create it ({err.strerror}){ELSEWHERE}") from None
    return path


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `target`; once the block ends without an
    error it replaces `target` (a previous one is moved aside, then removed). Readers see the
    old directory or the new one, never a partial one."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"{target}: is a file, not a directory; give a new directory")
    make_dir(target.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    except OSError as err:
        raise OSError(
            f"{target}: cannot write in {target.parent} ({err.strerror}){ELSEWHERE}"
        ) from None
    try:
        yield tmp
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def replace_dir(new: Path, target: Path) -> None:
    """Rename the complete directory `new` to `target`: an existing `target` is moved aside
    first and removed only once `new` is in place, so a crash leaves one of them whole."""
    new, target = Path(new), Path(target)
    old = None
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        os.replace(target, old)
    os.replace(new, target)
    _fsync_dir(target.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def read_json(path: Path, what_to_do: str) -> Any:
    """The JSON value in `path`; a missing or damaged file is an error naming the file, the line
    and column, and `what_to_do` about it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: missing; {what_to_do}") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start}); {what_to_do}") from None
    return parse_json(text, path, what_to_do)


def parse_json(text: str, path: Path, what_to_do: str) -> Any:
    """The JSON value in `text` (read from `path`); an error names the file, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path}, line {err.lineno} column {err.colno}: not valid JSON ({err.msg}); "
            f"{what_to_do}"
        ) from None
    except RecursionError:  # found by the fuzzed readers: "[[[[..." escaped as a traceback
        raise ValueError(
            f"{path}: not a file of ours (JSON nested far deeper than any we write); {what_to_do}"
        ) from None


def require_keys(values: Any, keys: list[str], path: Path, what_to_do: str) -> None:
    """An error naming the file and the keys a JSON object read from it lacks."""
    if not isinstance(values, dict):
        raise ValueError(
            f"{path}: expected a JSON object, found {type(values).__name__}; {what_to_do}"
        )
    missing = [k for k in keys if k not in values]
    if missing:
        raise ValueError(f"{path}: missing key(s) {missing}; {what_to_do}")
