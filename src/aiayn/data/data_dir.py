"""An opened data directory (`aiayn prepare --out DIR`): its files, named in
`aiayn.layout.DataFiles`, and its description (`meta.json`), read once.

No torch is needed to read or write either."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from pathlib import Path

from aiayn.config.checks import check_types
from aiayn.data.sources import DataError
from aiayn.files import read_json, require_keys
from aiayn.layout import META_FILE, SIDES, SPLITS, DataFiles

__all__ = ["META_FILE", "SIDES", "SPLITS", "DataDir", "DataMeta"]


@dataclass(frozen=True)
class DataDir(DataFiles):
    """A data directory: the names of its files (`DataFiles`) and what its `meta.json` says.

    `DataDir.open(path)` reads the meta at once (a missing or damaged one is an error there);
    `DataDir(path)` reads it when first asked. Either way it is read once per object, so the
    commands open a directory once and hand the object down.
    """

    @classmethod
    def open(cls, root: DataDir | str | Path) -> DataDir:
        """The directory `root`, its meta read; a DataDir is returned as it is."""
        data = root if isinstance(root, DataDir) else cls(Path(root))
        data.meta  # noqa: B018 (read now: errors belong to whoever opens the directory)
        return data

    @cached_property
    def meta(self) -> DataMeta:
        return DataMeta.load(self.root)

    def sources(self, split: str, n: int | None = None) -> list[str]:
        """The first n (default: all) source lines of a split."""
        return _lines(self.text(split, "src"))[:n]

    def lines(self, split: str, stream: str, n: int | None = None) -> list[str]:
        """The first n (default: all) lines of a split's text: a stream ("src", "tgt"...) or,
        in a multilingual directory, a language ("de": the held-out split in German)."""
        path = self.text(split, stream)
        if not path.is_file():
            raise DataError(f"{path}: missing; re-run `aiayn prepare` for {self.root}")
        return _lines(path)[:n]

    def references(self, split: str, n: int | None = None) -> list[list[str]]:
        """The reference streams of a split, each its first n lines: the target, then any
        extra references."""
        extra = self.meta.n_refs.get(split, 1) - 1
        streams = ["tgt"] + [f"ref{k}" for k in range(1, extra + 1)]
        return [_lines(self.text(split, stream))[:n] for stream in streams]


def _lines(path: Path) -> list[str]:
    """The lines of a split's text; not UTF-8 is an error naming the file and line (found by
    the fuzzed readers: a bare UnicodeDecodeError named neither)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise DataError(
            f"{path}, line {line}: not UTF-8 text; the data directory is damaged: re-run "
            f"`aiayn prepare --out {path.parent}`"
        ) from None


@dataclass(frozen=True)
class DataMeta:
    """What `aiayn prepare` wrote: languages, vocabulary, split sizes, extra references."""

    src_lang: str
    tgt_lang: str
    vocab_size: int
    sizes: dict[str, int]
    n_refs: dict[str, int]  # references per held-out split (1 + extra ones)
    corpus: str
    # A multilingual directory (`prepare --langs`): its directions, "en-de", in the order the
    # `{split}.dir.npy` files index them; src_lang and tgt_lang are then "multi". [] if bilingual.
    directions: list[str] = field(default_factory=list)
    # `prepare --vocab MODEL`: the model directory whose vocabulary encoded the data; "" where
    # prepare learned its own.
    vocab_from: str = ""

    @classmethod
    def load(cls, data_dir: Path) -> DataMeta:
        path = DataFiles(Path(data_dir)).meta_file
        if not path.is_file():
            raise DataError(f"{path}: missing; is {data_dir} a directory made by `aiayn prepare`?")
        fix = f"re-run `aiayn prepare --out {data_dir}`"
        values = read_json(path, fix)
        required = [f.name for f in fields(cls) if MISSING is f.default is f.default_factory]
        require_keys(values, required, path, fix)
        check_types(cls, values, f"{path}")
        for name in ("sizes", "n_refs"):  # {split: count}
            counts = values[name]
            if not isinstance(counts, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()
            ):
                raise DataError(f"{path}: {name} is {json.dumps(counts)[:60]}, not counts; {fix}")
        directions = values.get("directions", [])
        if not isinstance(directions, list) or not all(
            isinstance(d, str) and d.count("-") == 1 for d in directions
        ):
            raise DataError(
                f"{path}: directions is {json.dumps(directions)[:60]}, not a list of "
                f'"en-de" names; {fix}'
            )
        # At least the four special pieces (pad, bos, eos, unk); at least one reference.
        if values["vocab_size"] < 4 or min(values["n_refs"].values(), default=1) < 1:
            raise DataError(f"{path}: vocab_size or n_refs out of range; {fix}")
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})

    def save(self, data_dir: Path) -> None:
        text = json.dumps(self.__dict__, indent=2, ensure_ascii=False) + "\n"
        DataFiles(Path(data_dir)).meta_file.write_text(text, encoding="utf-8")
