"""A whole corpus file translated in chunks that survive a kill: `aiayn backtranslate` and
`aiayn distill`.

The input is cut into chunks of `chunk_lines` lines. Each finished chunk is written whole to its
own file in a work directory beside the output (`OUT.partial/chunk-000007.tsv`, written aside,
flushed to disk and renamed: a chunk file is complete or absent), next to the options the work
began with (`options.json`). A killed run, started again with the same command, translates only
the chunks that are missing; once all are there they are joined into OUT in one atomic write and
the work directory is removed. So OUT exists only complete (`aiayn prepare` never reads half a
corpus), every line is written exactly once, and no half-appended chunk is ever cut back. A
rerun whose options differ from the stored ones is refused, naming each difference: its chunks
would not match those already written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from aiayn.files import atomic_write, make_dir, read_json

OPTIONS_FILE = "options.json"  # in the work directory: what the partial work depends on
# a chunk's input lines and its index -> their translations, in order
ChunkTranslate = Callable[[list[str], int], list[str]]
# (an input line, its translation) -> the TSV row written for them, without a newline
Row = Callable[[str, str], str]


@dataclass(frozen=True)
class CorpusJob:
    """Where a corpus translation writes, and what it depends on."""

    out: Path  # the TSV, written once every chunk is done
    options: dict[str, Any]  # everything the output depends on (JSON-ready): a rerun must match
    chunk_lines: int = 1000  # lines per chunk: the work a kill can lose
    progress: bool = True  # a progress bar on stderr (lines/s)


def work_dir(out: Path) -> Path:
    """The directory of a corpus translation's finished chunks: OUT.partial beside OUT."""
    return out.with_name(out.name + ".partial")


def chunk_file(work: Path, k: int) -> Path:
    return work / f"chunk-{k:06d}.tsv"


def check_out(out: Path) -> None:
    """Refuse an output that cannot be written, or that would overwrite a finished corpus."""
    if not out.parent.is_dir():
        raise FileNotFoundError(
            f"{out}: its directory {out.parent} does not exist; create it or choose another --out"
        )
    if out.is_dir():
        raise IsADirectoryError(f"{out}: is a directory; --out names the TSV file to write")
    if out.exists() and not work_dir(out).is_dir():
        raise FileExistsError(
            f"{out}: exists already (a finished corpus is never overwritten); delete it or "
            "choose another --out"
        )


def translate_corpus(lines: list[str], translate: ChunkTranslate, row: Row, job: CorpusJob) -> int:
    """Translate `lines` chunk by chunk into job.out, one row per line in input order, resuming
    the chunks a killed run left in the work directory; the number of lines translated now."""
    check_out(job.out)
    work = start_work(job)
    n_chunks = -(-len(lines) // job.chunk_lines)
    todo = [k for k in range(n_chunks) if not chunk_file(work, k).is_file()]
    done = len(lines) - sum(len(chunk_of(lines, k, job.chunk_lines)) for k in todo)
    if done:
        print(f"resuming {work}: {done:,} of {len(lines):,} lines done", file=sys.stderr)
    bar = tqdm(
        total=len(lines),
        initial=done,
        unit="line",
        disable=not job.progress,
        file=sys.stderr,
        dynamic_ncols=True,
    )
    with bar:
        for k in todo:
            part = chunk_of(lines, k, job.chunk_lines)
            found = translate(part, k)
            if len(found) != len(part):  # an engine's bug must not shift every later row
                raise RuntimeError(f"chunk {k}: {len(found)} translations for {len(part)} lines")
            rows = (row(tsv_field(a), tsv_field(b)) for a, b in zip(part, found, strict=True))
            text = "".join(r + "\n" for r in rows)
            atomic_write(chunk_file(work, k), text_writer(text))
            bar.update(len(part))
    join(work, n_chunks, job.out)
    return len(lines) - done


def text_writer(text: str) -> Callable[[Path], object]:
    """What `atomic_write` calls to write `text` as UTF-8."""
    return lambda tmp: tmp.write_text(text, encoding="utf-8")


def chunk_of(lines: list[str], k: int, chunk_lines: int) -> list[str]:
    return lines[k * chunk_lines : (k + 1) * chunk_lines]


def tsv_field(text: str) -> str:
    """A line as one TSV column: a tab inside it becomes a space (`aiayn prepare` makes every
    run of whitespace one space anyway)."""
    return text.replace("\t", " ")


def start_work(job: CorpusJob) -> Path:
    """The work directory, new with the job's options, or found with the same ones."""
    work = work_dir(job.out)
    options = json.loads(json.dumps(job.options))  # as they read back from the file
    stored = work / OPTIONS_FILE
    if stored.is_file():
        check_same(read_json(stored, f"delete {work} to start again"), options, work)
        return work
    if work.is_dir() and any(work.glob("chunk-*.tsv")):
        raise FileNotFoundError(
            f"{stored}: missing, so the chunks in {work} cannot be matched to these options; "
            f"delete {work} to start again"
        )
    make_dir(work)
    text = json.dumps(options, indent=2) + "\n"
    atomic_write(stored, text_writer(text))
    return work


def check_same(stored: Any, options: dict[str, Any], work: Path) -> None:
    """Refuse partial work begun with other options, naming each difference."""
    if not isinstance(stored, dict):
        raise ValueError(f"{work / OPTIONS_FILE}: not a JSON object; delete {work} to start again")
    names = sorted(set(stored) | set(options))
    differ = [k for k in names if stored.get(k) != options.get(k)]
    if differ:
        said = "; ".join(f"{k} {stored.get(k)!r} then, {options.get(k)!r} now" for k in differ)
        raise ValueError(
            f"{work}: partial work begun with other options ({said}); rerun the command it was "
            f"begun with to finish it, or delete {work} to start again"
        )


def join(work: Path, n_chunks: int, out: Path) -> None:
    """Every chunk, in order, into `out` in one atomic write; then the work directory goes."""

    def write(tmp: Path) -> None:
        with tmp.open("wb") as f:
            for k in range(n_chunks):
                with chunk_file(work, k).open("rb") as chunk:
                    shutil.copyfileobj(chunk, f)

    atomic_write(out, write)
    shutil.rmtree(work)


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def directory_digest(directory: Path) -> str:
    """The SHA-256 of the names and bytes of a directory's files (not its subdirectories): a
    model that changed (a run's best checkpoint replaced) no longer matches."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(directory).iterdir() if p.is_file()):
        h.update(path.name.encode() + b"\0" + file_digest(path).encode())
    return h.hexdigest()
