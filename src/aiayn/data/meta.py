"""The description of a prepared data directory (no torch needed to read or write it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from aiayn.data.sources import DataError
from aiayn.files import read_json, require_keys

META_FILE = "meta.json"
SPLITS = ("train", "valid", "test")


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
        path = Path(data_dir) / META_FILE
        if not path.is_file():
            raise DataError(f"{path}: missing; is {data_dir} a directory made by `aiayn prepare`?")
        fix = f"re-run `aiayn prepare --out {data_dir}`"
        values = read_json(path, fix)
        require_keys(values, [f.name for f in fields(cls)], path, fix)
        return cls(**{f.name: values[f.name] for f in fields(cls)})

    def save(self, data_dir: Path) -> None:
        text = json.dumps(self.__dict__, indent=2, ensure_ascii=False) + "\n"
        (Path(data_dir) / META_FILE).write_text(text, encoding="utf-8")
