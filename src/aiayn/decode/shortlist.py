"""The lexical shortlist (Marian's `--shortlist`, CTranslate2's vocabulary map): for each source
piece, the target pieces a translation of it is likely to hold, and the most frequent target
pieces; stored beside the model as `shortlist.safetensors` (`aiayn shortlist` builds it).

At decoding, a batch's output layer is cut to the union of its source pieces' candidates, the
frequent pieces, eos and the pieces its controls name (`Shortlist.vocabulary`), and each
sentence chooses among its own only (`Shortlist.per_row`): its translation does not depend on the
sentences batched with it (`decode.shortlisted`). The file holds tensors only (safetensors: no
pickle, so a file from elsewhere cannot run code when read).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from torch import Tensor

from aiayn import layout
from aiayn.files import atomic_write

FIX = (
    "build it again with `aiayn shortlist --model MODEL --data DATA_DIR`, or delete it to "
    "decode with the full output layer"
)
NO_CANDIDATE = -1  # the padding of a source piece's row that has fewer than k candidates


@dataclass(frozen=True)
class Shortlist:
    """Candidate target pieces per source piece, and the pieces always allowed."""

    candidates: Tensor  # (V, k) long: each source piece's candidates, most probable first; -1 pad
    frequent: Tensor  # (F,) long: the most frequent target pieces
    origin: str = ""  # how it was built, in words (its file's metadata)

    @property
    def vocab_size(self) -> int:
        return self.candidates.shape[0]

    def vocabulary(self, src: Tensor, eos_id: int, extra: Iterable[int] = ()) -> Tensor:
        """The batch's output pieces: (V',) ids, ascending, on src's device.

        Args:
            src: (B, S) source ids (padding has no candidates of its own).
            extra: pieces the batch's controls need (a prefix's, a glossary term's).
        """
        pieces = list(extra)
        return self.per_row(src, eos_id, None, [pieces] * len(src)).any(0).nonzero().squeeze(1)

    def per_row(
        self, src: Tensor, eos_id: int, pad_id: int | None, extra: list[list[int]]
    ) -> Tensor:
        """(B, V) bool on src's device: each row's output pieces, its source pieces' candidates
        (none for `pad_id`), the frequent pieces, eos and its `extra` (its controls'; [] for
        none)."""
        V, cpu = self.vocab_size, src.cpu()
        candidates = self.candidates[cpu]  # (B, S, k), -1 padded
        missing = candidates < 0
        if pad_id is not None:
            missing |= (cpu == pad_id)[:, :, None]
        keep = torch.zeros(cpu.shape[0], V + 1, dtype=torch.bool)  # the last slot: the missing
        keep.scatter_(1, candidates.masked_fill(missing, V).flatten(1), True)
        keep[:, self.frequent] = True
        keep[:, eos_id] = True
        for row, pieces in enumerate(extra):
            keep[row, torch.tensor(pieces, dtype=torch.long)] = True
        return keep[:, :V].to(src.device)  # (B, V)


def write_shortlist(directory: Path, shortlist: Shortlist) -> Path:
    """`shortlist.safetensors` in the model directory, written atomically; returns its path."""
    path = Path(directory) / layout.SHORTLIST_FILE
    tensors = {
        "candidates": shortlist.candidates.to(torch.int32).contiguous(),
        "frequent": shortlist.frequent.to(torch.int32).contiguous(),
    }
    atomic_write(path, lambda tmp: save_file(tensors, str(tmp), {"origin": shortlist.origin}))
    return path


def read_shortlist(directory: Path, vocab_size: int) -> Shortlist | None:
    """The shortlist stored in a model directory (None: there is none), checked against the
    model's vocabulary: an error naming the file, the value and what to do when it does not fit."""
    path = Path(directory) / layout.SHORTLIST_FILE
    if not path.is_file():
        return None
    try:
        with safe_open(str(path), "pt") as f:
            origin = (f.metadata() or {}).get("origin", "")
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable shortlist ({e}); {FIX}") from None
    return checked(path, tensors, vocab_size, origin)


def checked(path: Path, tensors: dict[str, Tensor], vocab_size: int, origin: str) -> Shortlist:
    """A shortlist from its file's tensors, or an error saying which of them is wrong."""
    missing = [k for k in ("candidates", "frequent") if k not in tensors]
    if missing:
        raise ValueError(f"{path}: no {' or '.join(missing)} tensor; {FIX}")
    candidates, frequent = tensors["candidates"], tensors["frequent"]
    for name, t, ndim in (("candidates", candidates, 2), ("frequent", frequent, 1)):
        if t.ndim != ndim or t.dtype not in (torch.int32, torch.int64):
            raise ValueError(
                f"{path}: {name} is {t.dtype} of shape {tuple(t.shape)}, not {ndim}-D integers; "
                f"{FIX}"
            )
    if candidates.shape[0] != vocab_size:
        raise ValueError(
            f"{path}: built for a vocabulary of {candidates.shape[0]:,} pieces, but the model "
            f"has {vocab_size:,}: it belongs to another model; {FIX}"
        )
    for name, t, low in (("candidates", candidates, NO_CANDIDATE), ("frequent", frequent, 0)):
        bad = (t < low) | (t >= vocab_size)
        if bad.any():
            value = int(t[bad][0])
            raise ValueError(
                f"{path}: {name} holds piece id {value}, outside the vocabulary "
                f"(0..{vocab_size - 1}); {FIX}"
            )
    return Shortlist(candidates.long(), frequent.long(), origin)
