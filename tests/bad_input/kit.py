"""What every case of the bad-input suite is made of: the fixtures (a corpus, its prepared
directory, a tiny run), running `aiayn ...` in process, and the `Case` row itself.

The cases live by area: `general.py` plus one module per newer area in this folder, each with its
own `CASES` list, gathered by `suite.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiayn.cli import main
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from tests.data.conftest import synthetic_pairs, write_tsv

TINY = [
    "--preset",
    "tiny",
    "--max-tokens",
    "160",
    "--update-freq",
    "2",
    "--no-progress",
    "--set",
    "valid_every=0",
    "save_minutes=0",
    "log_every=1",
    "warmup=20",
    "save_every=2",
]


SMALL_PREPARE = ["--valid-size", "20", "--test-size", "20", "--vocab-size", "64", "--no-progress"]


@dataclass(frozen=True)
class Outcome:
    code: int  # exit status; 1 = an uncaught exception (a traceback)
    message: str  # what the user read on stderr
    kept: bool = True  # the user's data is whole afterwards (and any setting asked for kept)
    traceback: bool = False


@dataclass(frozen=True)
class Fixtures:
    """What the cases start from (never changed by them: they copy it)."""

    corpus: Path  # a good TSV corpus
    data: Path  # prepared from it
    run: Path  # trained 6 steps, a checkpoint every 2
    big_data: Path  # another preparation with a larger vocabulary


def make_fixtures(root: Path, data: Path | None = None) -> Fixtures:
    corpus = write_tsv(root / "corpus.tsv", synthetic_pairs(400, seed=11))
    sizes = dict(valid_size=20, test_size=20, progress=False)
    if data is None:
        data = root / "data"
        prepare(PrepareOptions(out=data, corpus=str(corpus), vocab_size=64, **sizes))
    big = root / "big-data"
    prepare(PrepareOptions(out=big, corpus=str(corpus), vocab_size=100, **sizes))
    run = root / "run"
    outcome = aiayn(["train", "--data", str(data), "--out", str(run), *TINY, "--max-steps", "6"])
    assert outcome.code == 0, outcome.message
    return Fixtures(corpus, data, run, big)


def aiayn(argv: list[str]) -> Outcome:
    """Run the command line in process; an exception that escapes it is a traceback."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own refusals
            code = int(exit_.code or 0)
        except Exception:
            traceback.print_exc(file=err)
            return Outcome(1, err.getvalue(), traceback=True)
    return Outcome(code, err.getvalue())


def digest(directory: Path) -> str:
    """A hash of every file under a directory (to see that nothing changed)."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(directory).rglob("*") if p.is_file()):
        h.update(str(path.relative_to(directory)).encode() + path.read_bytes())
    return h.hexdigest()


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def with_data(run: Path, data: Path) -> Path:
    """Point a copied run's run.json at a copied data directory."""
    config = json.loads((run / "run.json").read_text())
    config["data"] = str(data)
    (run / "run.json").write_text(json.dumps(config))
    return run


def cut(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


def serve_request(body: str) -> Callable[[Fixtures, Path], Outcome]:
    """POST a raw JSON body to the API serving the tiny run; the HTTP status is the code."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        from fastapi.testclient import TestClient

        from aiayn.serve.app import create_app

        with TestClient(create_app(f.run)) as client:
            response = client.post(
                "/translate", content=body.encode(), headers={"Content-Type": "application/json"}
            )
            alive = client.post("/translate", json={"text": "The dog sees."}).status_code == 200
        return Outcome(response.status_code, response.json()["detail"], alive)

    return case


def argv_case(*argv: str) -> Callable[[Fixtures, Path], Outcome]:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        names = {"RUN": str(f.run), "DATA": str(f.data), "TMP": str(tmp)}
        return aiayn([names.get(a, a).replace("TMP", str(tmp)) for a in argv])

    return case


def translate_with(*flags: str) -> Callable[[Fixtures, Path], Outcome]:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / "in.txt").write_text("The dog sees a cat.\n")
        return aiayn(["translate", "--model", str(f.run), "--input", str(tmp / "in.txt"), *flags])

    return case


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Fixtures, Path], Outcome]
    code: int  # the exit code expected
    says: tuple[str, ...]  # what the message must name
