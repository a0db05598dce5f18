"""What the directories aiayn writes hold, named in one place.

Three kinds of directory, each written by one part of the pipeline and read by the others:

- a **model directory** (a checkpoint, an average, an import): `config.json` (the ModelConfig),
  `model.safetensors` (the weights) and `spm.model` (the tokenizer); `search.json`, the length
  setting chosen on validation for these weights, where one was (`aiayn tune`);
  `shortlist.safetensors`, the lexical shortlist, where one was built (`aiayn shortlist`);
- a **run directory** (`aiayn train --out RUN`, `aiayn vision train --out RUN`): `run.json`,
  `metrics.jsonl`, `spm.model` (text runs), and `checkpoints/` with `step_00001000/`... (model
  directories plus `state.json` and `optimizer.pt`), `best/` and `averaged/`;
- a **data directory** (`aiayn prepare --out DIR`): `DataFiles` below names its files;
  `aiayn.data.data_dir.DataDir` adds what its `meta.json` says.

Training writes run directories; decoding, evaluation and the commands only read them, through
the names and functions here. This module imports nothing from aiayn but `aiayn.files`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiayn.files import atomic_write, read_json, require_keys

# A model directory
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "spm.model"
# A second tokenizer, for the target side, where a model segments it apart (an imported Marian
# model's target.spm with our ids); the pieces and ids are spm.model's.
TARGET_TOKENIZER_FILE = "spm.tgt.model"
SEARCH_FILE = "search.json"  # the length setting chosen on validation (evaluate/tuned.py)
SHORTLIST_FILE = "shortlist.safetensors"  # candidate output pieces per source piece (decode/)
VMAP_FILE = "vmap.txt"  # the shortlist in a CTranslate2 export: its vocabulary map (export/)

# A run directory
RUN_CONFIG = "run.json"
METRICS_FILE = "metrics.jsonl"
CHECKPOINTS = "checkpoints"
BEST = "best"
AVERAGED = "averaged"  # the last checkpoints averaged at the end of a run (average_last)
STATE_FILE = "state.json"  # in a step checkpoint: step, data position, RNG states, metrics
OPTIMIZER_FILE = "optimizer.pt"  # in a step checkpoint: tensors only
_STEP_DIR = re.compile(r"^step_(\d{8})$")
# run.json is small: what to do when it is damaged
RUN_CONFIG_FIX = "repair it by hand (see another run's run.json), or start a new run with --data"

# A data directory
META_FILE = "meta.json"
SPLITS = ("train", "valid", "test")
SIDES = ("src", "tgt")


@dataclass(frozen=True)
class DataFiles:
    """The files of a data directory, named once: `aiayn prepare` writes them, training,
    validation and evaluation read them.

    Per split: the cleaned text `{split}.src.txt` and `{split}.tgt.txt`, extra references
    `{split}.ref1.txt`... (held-out splits of a corpus with several translations), and token ids
    `{split}.{side}.ids` + `{split}.{side}.offsets.npy`. Once: the SentencePiece model
    `spm.model`, `meta.json`, and the cleaning report `report.txt` / `report.json`.

    Several corpora (`prepare --corpus A.tsv --corpus B.tsv`): the main corpus's held-out sets
    are `valid` and `test` as in any directory; another corpus B's are the splits `valid-B` and
    `test-B` (`held_out`), with the same files (`valid-B.src.txt`...).
    """

    root: Path

    @staticmethod
    def held_out(split: str, corpus: str = "") -> str:
        """The split name of one corpus's held-out set: `split` ("valid", "test") for the main
        corpus (corpus ""), `split-corpus` for another."""
        return f"{split}-{corpus}" if corpus else split

    @staticmethod
    def held_out_sets(split: str, splits: Iterable[str]) -> list[str]:
        """Of the `splits` a directory holds, the held-out sets of kind `split`, the main
        corpus's first: ["valid", "valid-general"]."""
        found = [s for s in splits if s == split or s.startswith(split + "-")]
        return sorted(found, key=lambda s: s != split)

    def text(self, split: str, stream: str) -> Path:
        """stream: "src", "tgt", or "ref1", "ref2"... (extra references)."""
        return self.root / f"{split}.{stream}.txt"

    def directions(self, split: str) -> Path:
        """A multilingual directory's direction of each pair of a split: an int16 array
        (`np.save`), an index into `meta.json`'s `directions`; absent in a bilingual one."""
        return self.root / f"{split}.dir.npy"

    def ids(self, split: str, side: str) -> Path:
        """The prefix of a side's token ids: `.ids` and `.offsets.npy` are added to it."""
        return self.root / f"{split}.{side}"

    @property
    def tokenizer(self) -> Path:
        return self.root / TOKENIZER_FILE

    @property
    def target_tokenizer(self) -> Path:
        """Present where the target side was encoded with its own tokenizer (`prepare --vocab`
        of an imported Marian model); spm.model decodes it all the same."""
        return self.root / TARGET_TOKENIZER_FILE

    @property
    def meta_file(self) -> Path:
        return self.root / META_FILE

    @property
    def report_text(self) -> Path:
        return self.root / "report.txt"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    step: int


def step_dir(run: Path, step: int) -> Path:
    return Path(run) / CHECKPOINTS / f"step_{step:08d}"


def best_dir(run: Path) -> Path:
    """The run's best checkpoint so far (by validation), kept apart from the last K."""
    return Path(run) / CHECKPOINTS / BEST


def averaged_dir(run: Path) -> Path:
    return Path(run) / CHECKPOINTS / AVERAGED


def list_checkpoints(run: Path) -> list[Checkpoint]:
    """Complete step checkpoints, oldest first (temporary directories are not listed)."""
    root = Path(run) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [
        Checkpoint(p, int(m.group(1)))
        for p in root.iterdir()
        if (m := _STEP_DIR.match(p.name)) and (p / STATE_FILE).is_file()
    ]
    return sorted(found, key=lambda c: c.step)


def latest(run: Path) -> Checkpoint | None:
    found = list_checkpoints(run)
    return found[-1] if found else None


def model_dir(path: str | Path) -> Path:
    """A model directory from what a user names: a model directory itself, or a run directory
    (its best checkpoint, else its latest)."""
    path = Path(path)
    if (path / WEIGHTS_FILE).is_file():
        return path
    best = best_dir(path)
    if (best / WEIGHTS_FILE).is_file():
        return best
    last = latest(path)
    if last is not None:
        return last.path
    raise FileNotFoundError(
        f"{path}: no model here (no {WEIGHTS_FILE}, no checkpoints); give a run directory, a "
        "checkpoint directory or one written by `aiayn average`"
    )


def check_new_run(run: Path) -> None:
    """A new run may not start where one has saved checkpoints: it would mix with them."""
    if list_checkpoints(run):
        raise FileExistsError(
            f"{run} already holds checkpoints; add --resume to continue that run, or choose "
            "another --out"
        )


def write_run_config(run: Path, config: dict[str, Any]) -> None:
    """RUN/run.json: what the run trains, and how (written whole or not at all)."""
    Path(run).mkdir(parents=True, exist_ok=True)
    text = json.dumps(config, indent=2) + "\n"
    atomic_write(Path(run) / RUN_CONFIG, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def read_run_config(run: Path, keys: list[str]) -> dict[str, Any]:
    """RUN/run.json of an existing run, with the given keys; errors name the file and the fix."""
    path = Path(run) / RUN_CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; {run} is not a run directory to resume")
    config = read_json(path, RUN_CONFIG_FIX)
    require_keys(config, keys, path, RUN_CONFIG_FIX)
    return config
