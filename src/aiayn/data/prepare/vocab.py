"""`aiayn prepare --vocab MODEL`: the corpus encoded with an existing model's SentencePiece model
and ids instead of a BPE learned anew, so that `aiayn train --init MODEL` fine-tunes on exactly
the pieces MODEL was trained on.

MODEL is any model directory aiayn reads (a run, a checkpoint, an average, an import). Its
spm.model is copied into the data directory (as is an imported Marian model's spm.tgt.model,
which segments the target side as Marian did); its case markup comes with it (`Tokenizer`).
Pieces the corpus needs and the vocabulary lacks become the unknown piece: counted per side and
reported with example words, never silently mapped.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from aiayn import layout
from aiayn.config import ModelConfig
from aiayn.data.languages import tag
from aiayn.data.sources import DataError
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import UNK_ID, Tokenizer

WARN_ABOVE = 0.01  # an unknown rate above this (1% of a side's tokens) is a warning
EXAMPLES = 5  # example words per side


@dataclass(frozen=True)
class Vocabulary:
    """The tokenizer that encodes each side of a data directory, and where it came from."""

    tokenizers: dict[str, Path]  # "src", "tgt": the file that segments each side
    size: int  # pieces (with --vocab: the same as the model's config.json vocab_size)
    model: Path | None = None  # --vocab: the model directory it is that of; None: learned here

    @property
    def files(self) -> list[Path]:
        """The tokenizer files to copy: spm.model, and spm.tgt.model where the target has one."""
        return sorted(set(self.tokenizers.values()))


def open_vocabulary(path: Path) -> Vocabulary:
    """The vocabulary of the model directory `--vocab PATH` names, or an error saying why it
    cannot encode data for that model."""
    try:
        directory = layout.model_dir(path).resolve()
    except FileNotFoundError as err:
        raise DataError(f"--vocab {err}") from None
    files = {name: directory / name for name in (layout.CONFIG_FILE, layout.TOKENIZER_FILE)}
    for file in files.values():
        if not file.is_file():
            raise DataError(
                f"--vocab {path}: {file} is missing, so {directory} is not a whole model "
                "directory; give a run, a checkpoint, or one written by `aiayn average` or "
                "`aiayn import marian`"
            )
    rows = ModelConfig.load_json(files[layout.CONFIG_FILE]).vocab_size
    target = directory / layout.TARGET_TOKENIZER_FILE
    tokenizers = {"src": files[layout.TOKENIZER_FILE]}
    tokenizers["tgt"] = target if target.is_file() else tokenizers["src"]
    for file in set(tokenizers.values()):
        pieces = Tokenizer(file).vocab_size
        if pieces != rows:
            raise DataError(
                f"--vocab {path}: {file} has {pieces:,} pieces, but {files[layout.CONFIG_FILE]} "
                f"has vocab_size={rows:,}: its ids would not be the rows of the model's weights; "
                "the tokenizer belongs to another model: copy the model directory again whole"
            )
    return Vocabulary(tokenizers, rows, directory)


def check_symbols(vocab: Vocabulary, symbols: tuple[str, ...], needed: str, fix: str) -> None:
    """The pieces the data needs whole (the <BT> tag of a tagged synthetic corpus, the term
    tags) are pieces of the model: a model that never saw a tag would read it as unknown pieces.
    needed: what needs them; fix: what to do instead."""
    tokenizer = Tokenizer(vocab.tokenizers["src"])
    missing = [s for s in symbols if tokenizer.piece_ids([s])[0] == UNK_ID]
    if missing:
        raise DataError(
            f"--vocab {vocab.model}: its vocabulary has no piece {', '.join(missing)} "
            f"({vocab.tokenizers['src']}), which {needed}; {fix}"
        )


def check_tags(vocab: Vocabulary, langs: tuple[str, ...]) -> None:
    """`--langs` with `--vocab`: every language's `<2xx>` tag is a piece of the model, and the
    sides share one tokenizer (a verse is encoded once, for either side)."""
    tokenizer = Tokenizer(vocab.tokenizers["src"])
    missing = [tag(lang) for lang in langs if tokenizer.piece_ids([tag(lang)])[0] == UNK_ID]
    if missing:
        raise DataError(
            f"--vocab {vocab.model}: its vocabulary has no language tag {', '.join(missing)} "
            f"({vocab.tokenizers['src']}), so the model cannot be told to translate into "
            f"{'that language' if len(missing) == 1 else 'those languages'}; drop them from "
            "--langs, or prepare without --vocab and train a new model"
        )
    if vocab.tokenizers["src"] != vocab.tokenizers["tgt"]:
        raise DataError(
            f"--vocab {vocab.model}: it segments its target side with its own model "
            f"({vocab.tokenizers['tgt'].name}); --langs encodes each verse once for both "
            "sides: prepare one language pair (no --langs)"
        )


def copy_vocabulary(vocab: Vocabulary, out: Path) -> Vocabulary:
    """The model's tokenizer files copied into the data directory being built (built aside and
    swapped in whole, so the copy is atomic with it); returns the vocabulary of the copies."""
    for file in vocab.files:
        shutil.copyfile(file, out / file.name)
    return replace(vocab, tokenizers={s: out / f.name for s, f in vocab.tokenizers.items()})


def model_vocabulary_report(vocab: Vocabulary, unknown: dict[str, dict]) -> dict[str, Any]:
    """The report's "vocabulary" for data encoded with a model's: where it came from, which
    file segments each side, and the unknown pieces per side."""
    return {
        "size": vocab.size,
        "model": layout.TOKENIZER_FILE,
        "type": "the model's SentencePiece",
        "from": str(vocab.model),
        "segmented_with": {side: file.name for side, file in vocab.tokenizers.items()},
        "unknown": unknown,
        "case_markup": Tokenizer(vocab.tokenizers["src"]).case_markup,
    }


def unknown_pieces(
    files: layout.DataFiles, tokenizers: dict[str, Path], size: int, splits=layout.SPLITS
) -> dict[str, dict]:
    """Per side, over every split: tokens, unknown ones, their share, and a few words that
    hold one (from the first lines that do)."""
    found = {}
    for side, file in tokenizers.items():
        tokens = unknown = 0
        lines_with: dict[str, np.ndarray] = {}
        for split in splits:
            ids, offsets = load_ids(files.ids(split, side), size)
            where = unknown_positions(ids)
            tokens, unknown = tokens + len(ids), unknown + len(where)
            lines_with[split] = np.unique(np.searchsorted(offsets, where, side="right") - 1)
        found[side] = {
            "tokens": tokens,
            "unknown": unknown,
            "rate": round(unknown / max(tokens, 1), 6),
            "examples": example_words(files, side, lines_with, Tokenizer(file)),
        }
    return found


def unknown_positions(ids: np.ndarray, chunk: int = 1 << 24) -> np.ndarray:
    """Where the unknown id is, read a chunk at a time (memory stays bounded on a large
    memory-mapped split)."""
    found = [
        start + np.flatnonzero(np.asarray(ids[start : start + chunk]) == UNK_ID)
        for start in range(0, len(ids), chunk)
    ]
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def example_words(
    files: layout.DataFiles, side: str, lines_with: dict[str, np.ndarray], tokenizer: Tokenizer
) -> list[str]:
    """Up to EXAMPLES distinct words that encode with an unknown piece, from the lines given."""
    words: dict[str, None] = {}
    for split, lines in lines_with.items():
        wanted = set(lines[: 4 * EXAMPLES].tolist())
        if not wanted:
            continue
        with open(files.text(split, side), encoding="utf-8") as f:
            text = [line.split() for i, line in enumerate(f) if i in wanted]
        for line in text:
            for word, ids in zip(line, tokenizer.encode(line), strict=True):
                if UNK_ID in ids:
                    words.setdefault(word)
        if len(words) >= EXAMPLES:
            break
    return list(words)[:EXAMPLES]


def vocabulary_lines(vocab: dict[str, Any]) -> list[str]:
    """The report's lines on a model's vocabulary: its source, each side's segmentation, the
    unknown pieces per side, and a warning where a side has many."""
    sides = vocab["segmented_with"]
    segmented = (
        f"both sides segmented with {sides['src']}"
        if sides["src"] == sides["tgt"]
        else f"source segmented with {sides['src']}, target with {sides['tgt']}"
    )
    markup = f"; case markup {vocab['case_markup']}" if vocab.get("case_markup") else ""
    lines = [
        f"vocabulary: {vocab['size']:,} pieces of the model {vocab['from']} ({vocab['model']}; "
        f"{segmented}{markup}; no BPE learned)"
    ]
    for side, name in (("src", "source"), ("tgt", "target")):
        u = vocab["unknown"].get(side)
        if u is None:
            continue
        examples = ", ".join(u["examples"])
        lines.append(
            f"  unknown pieces, {name}: {u['unknown']:,} of {u['tokens']:,} tokens "
            f"({u['rate']:.3%})" + (f", e.g. in {examples}" if examples else "")
        )
        if u["rate"] > WARN_ABOVE:
            lines.append(unknown_warning(name, u["rate"], vocab["from"]))
    return lines


def unknown_warning(side: str, rate: float, model: str) -> str:
    what = "reads them as" if side == "source" else "learns to write"
    return (
        f"warning: {rate:.1%} of the {side} side's tokens are unknown to the vocabulary of "
        f"{model}: the model {what} <unk>; normalize or transliterate such text (or drop its "
        "lines), or, for a script or language new to the model, prepare without --vocab and "
        "train a new model"
    )
