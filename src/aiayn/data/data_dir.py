"""A prepared data directory (`aiayn prepare --out DIR`): the names of its files, and its
description (`meta.json`).

No torch is needed to read or write either."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from aiayn.data.sources import DataError
from aiayn.files import read_json, require_keys
from aiayn.layout import TOKENIZER_FILE

META_FILE = "meta.json"
SPLITS = ("train", "valid", "test")
SIDES = ("src", "tgt")


@dataclass(frozen=True)
class DataDir:
    """The files of a data directory, named once: `aiayn prepare` writes them, training,
    validation and evaluation read them.

    Per split: the cleaned text `{split}.src.txt` and `{split}.tgt.txt`, extra references
    `{split}.ref1.txt`... (held-out splits of a corpus with several translations), and token ids
    `{split}.{side}.ids` + `{split}.{side}.offsets.npy`. Once: the SentencePiece model
    `spm.model`, `meta.json`, and the cleaning report `report.txt` / `report.json`.
    """

    root: Path

    def text(self, split: str, stream: str) -> Path:
        """stream: "src", "tgt", or "ref1", "ref2"... (extra references)."""
        return self.root / f"{split}.{stream}.txt"

    def ids(self, split: str, side: str) -> Path:
        """The prefix of a side's token ids: `.ids` and `.offsets.npy` are added to it."""
        return self.root / f"{split}.{side}"

    @property
    def tokenizer(self) -> Path:
        return self.root / TOKENIZER_FILE

    @property
    def meta_file(self) -> Path:
        return self.root / META_FILE

    @property
    def report_text(self) -> Path:
        return self.root / "report.txt"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"

    def sources(self, split: str, n: int | None = None) -> list[str]:
        """The first n (default: all) source lines of a split."""
        return _lines(self.text(split, "src"))[:n]

    def references(self, split: str, n: int | None = None) -> list[list[str]]:
        """The reference streams of a split, each its first n lines: the target, then any
        extra references."""
        extra = DataMeta.load(self.root).n_refs.get(split, 1) - 1
        streams = ["tgt"] + [f"ref{k}" for k in range(1, extra + 1)]
        return [_lines(self.text(split, stream))[:n] for stream in streams]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@dataclass(frozen=True)
class DataMeta:
    """What `aiayn prepare` wrote: languages, vocabulary, split sizes, extra references."""

    src_lang: str
    tgt_lang: str
    vocab_size: int
    sizes: dict[str, int]
    n_refs: dict[str, int]  # references per held-out split (1 + extra ones)
    corpus: str

    @classmethod
    def load(cls, data_dir: Path) -> DataMeta:
        path = DataDir(Path(data_dir)).meta_file
        if not path.is_file():
            raise DataError(f"{path}: missing; is {data_dir} a directory made by `aiayn prepare`?")
        fix = f"re-run `aiayn prepare --out {data_dir}`"
        values = read_json(path, fix)
        require_keys(values, [f.name for f in fields(cls)], path, fix)
        return cls(**{f.name: values[f.name] for f in fields(cls)})

    def save(self, data_dir: Path) -> None:
        text = json.dumps(self.__dict__, indent=2, ensure_ascii=False) + "\n"
        DataDir(Path(data_dir)).meta_file.write_text(text, encoding="utf-8")
