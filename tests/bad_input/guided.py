"""Bad settings and inputs of guided alignment training (`aiayn train --set
guided_alignment=W`): a clear error that names the setting or file and what to do."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.bad_input.kit import TINY, Case, Fixtures, Outcome, aiayn, copy, digest


def guided_train(f: Fixtures, tmp: Path, data: Path, *sets: str) -> Outcome:
    argv = ["train", "--data", str(data), "--out", str(tmp / "run"), *TINY, "--max-steps", "2"]
    return aiayn(
        [*argv, "--set", "guided_alignment=0.05", *(x for s in sets for x in ("--set", s))]
    )


def damaged_alignments(f: Fixtures, tmp: Path) -> Outcome:
    data = copy(f.data, tmp / "data")
    (data / "train.align.npz").write_bytes(b"not an npz file")
    before = digest(data)
    out = guided_train(f, tmp, data)
    return Outcome(out.code, out.message, digest(data) == before, out.traceback)


def no_aligner(f: Fixtures, tmp: Path) -> Outcome:
    data = copy(f.data, tmp / "data")
    saved = sys.modules.get("eflomal")
    sys.modules["eflomal"] = None  # type: ignore[assignment]  # import eflomal: ImportError
    try:
        return guided_train(f, tmp, data)
    finally:
        if saved is None:
            del sys.modules["eflomal"]
        else:
            sys.modules["eflomal"] = saved


def head_out_of_range(f: Fixtures, tmp: Path) -> Outcome:
    return guided_train(f, tmp, copy(f.data, tmp / "data"), "alignment_head=99")


CASES = [
    Case(
        "train --set guided_alignment=-1",
        lambda f, tmp: aiayn(
            [
                "train",
                "--data",
                str(f.data),
                "--out",
                str(tmp / "r"),
                *TINY,
                "--set",
                "guided_alignment=-1",
            ]
        ),
        2,
        ("guided_alignment must be 0 (off) or more", "-1"),
    ),
    Case(
        "train --set guided_alignment: a damaged train.align.npz",
        damaged_alignments,
        2,
        ("train.align.npz", "unreadable alignments", "delete it"),
    ),
    Case(
        "train --set guided_alignment: eflomal not installed",
        no_aligner,
        2,
        ("guided alignment needs the eflomal aligner", "pip install 'aiayn[align]'"),
    ),
    Case(
        "train --set guided_alignment with alignment_head=99",
        head_out_of_range,
        2,
        ("alignment_head=99", "outside the model's"),
    ),
]
