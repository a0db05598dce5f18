"""Bad lexical shortlists and `aiayn shortlist` settings: a damaged file, one built for another
vocabulary, piece ids out of range, the wrong data; each a clear error that names the file or
the value and what to do."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file

from aiayn import layout
from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, copy, digest


def translate_with_shortlist(f: Fixtures, tmp: Path, write) -> Outcome:
    """Translate with a copy of the tiny run whose model holds the shortlist `write` makes."""
    run = copy(f.run, tmp / "run")
    path = layout.model_dir(run) / layout.SHORTLIST_FILE
    write(path)
    before = digest(run)
    (tmp / "in.txt").write_text("The dog sees a cat.\n")
    out = aiayn(["translate", "--model", str(run), "--input", str(tmp / "in.txt")])
    return Outcome(out.code, out.message, digest(run) == before, out.traceback)


def tensors(candidates: torch.Tensor, frequent: torch.Tensor, tags: torch.Tensor | None = None):
    def write(path: Path) -> None:
        named = {"candidates": candidates, "frequent": frequent}
        save_file({**named, **({} if tags is None else {"tags": tags})}, str(path))

    return lambda f, tmp: translate_with_shortlist(f, tmp, write)


def damaged(f: Fixtures, tmp: Path) -> Outcome:
    return translate_with_shortlist(f, tmp, lambda path: path.write_bytes(b"\x08\x00not safe"))


def export(*flags: str, shortlist: bytes | None = None):
    """`aiayn export` of a copy of the tiny run, its model holding `shortlist` (None: none)."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        if shortlist is not None:
            (layout.model_dir(run) / layout.SHORTLIST_FILE).write_bytes(shortlist)
        return aiayn(["export", str(run), "--out", str(tmp / "out"), *flags])

    return case


def build(*flags: str):
    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        data = {"DATA": str(f.data), "BIG": str(f.big_data)}
        argv = ["shortlist", "--model", str(run), *(data.get(x, x) for x in flags)]
        return aiayn(argv)

    return case


FIX = "aiayn shortlist --model MODEL --data DATA_DIR"
V = 64  # the tiny run's vocabulary
I32 = torch.int32

CASES = [
    Case(
        "translate: a damaged shortlist.safetensors",
        damaged,
        2,
        ("shortlist.safetensors: not a readable shortlist", FIX),
    ),
    Case(
        "translate: a shortlist built for another vocabulary",
        tensors(torch.zeros(100, 4, dtype=torch.int32), torch.tensor([3], dtype=torch.int32)),
        2,
        ("built for a vocabulary of 100 pieces", "the model has 64", FIX),
    ),
    Case(
        "translate: a shortlist with a piece id out of range",
        tensors(torch.full((V, 2), 999, dtype=torch.int32), torch.tensor([3], dtype=torch.int32)),
        2,
        ("candidates holds piece id 999", "(0..63)", FIX),
    ),
    Case(
        "translate: a shortlist whose frequent pieces are negative",
        tensors(torch.zeros(V, 2, dtype=torch.int32), torch.tensor([-5], dtype=torch.int32)),
        2,
        ("frequent holds piece id -5", FIX),
    ),
    Case(
        "translate: a shortlist of floats",
        tensors(torch.zeros(V, 2), torch.tensor([3], dtype=torch.int32)),
        2,
        ("candidates is torch.float32", "not 2-D integers", FIX),
    ),
    Case(
        "translate: a shortlist per language with more tags than tables",
        tensors(
            torch.zeros(2, V, 2, dtype=I32),
            torch.zeros(2, 1, dtype=I32),
            torch.tensor([5, 6, 7], dtype=I32),
        ),
        2,
        ("3 language tags for 2 candidate tables and 2 frequent lists", FIX),
    ),
    Case(
        "translate: a shortlist per language whose tag is outside the vocabulary",
        tensors(
            torch.zeros(2, V, 2, dtype=I32),
            torch.zeros(2, 1, dtype=I32),
            torch.tensor([5, 640], dtype=I32),
        ),
        2,
        ("tags holds piece id 640", "(0..63)", FIX),
    ),
    Case(
        "translate: tags beside one table",
        tensors(
            torch.zeros(V, 2, dtype=I32), torch.zeros(1, dtype=I32), torch.tensor([5], dtype=I32)
        ),
        2,
        ("candidates is torch.int32 of shape (64, 2), not 3-D integers", "tags names them", FIX),
    ),
    Case(
        "export --format ctranslate2 of a model whose shortlist is damaged",
        export("--format", "ctranslate2", shortlist=b"\x08\x00not safe"),
        2,
        ("shortlist.safetensors: not a readable shortlist", FIX, "delete it"),
    ),
    Case(
        "export --format onnx --no-shortlist",
        export("--format", "onnx", "--no-shortlist"),
        2,
        ("--no-shortlist is for --format ctranslate2 only", "full output layer"),
    ),
    Case(
        "shortlist --k 0",
        build("--data", "DATA", "--k", "0"),
        2,
        ("--k 0", "need k >= 1"),
    ),
    Case(
        "shortlist --data of another vocabulary",
        build("--data", "BIG", "--k", "5"),
        2,
        ("has a vocabulary of 100 pieces", "give the data the model was trained on"),
    ),
]
