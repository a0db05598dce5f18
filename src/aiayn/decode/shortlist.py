"""The lexical shortlist (Marian's `--shortlist`, CTranslate2's vocabulary map): for each source
piece, the target pieces a translation of it is likely to hold, and the most frequent target
pieces; stored beside the model as `shortlist.safetensors` (`aiayn shortlist` builds it).

At decoding, a batch's output layer is cut to the union of its source pieces' candidates, the
frequent pieces, eos and the pieces its controls name (`Shortlist.vocabulary`), and each
sentence chooses among its own only (`Shortlist.per_row`): its translation does not depend on the
sentences batched with it (`decode.shortlisted`). The file holds tensors only (safetensors: no
pickle, so a file from elsewhere cannot run code when read).

A multilingual model's shortlist has a table per target language (Marian's and Bergamot's
shortlists are per language pair): "house" has other candidates in German than in Russian, and
one table over all would split each source piece's k candidates between the languages. A
sentence reads the table of the language its source's tag asks for (`<2de>`, `data.languages`);
one that names no language, or several, reads them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
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
    """Candidate target pieces per source piece, and the pieces always allowed: one table (a
    bilingual model; built from (V, k) and (F,) tensors) or one per target language, each
    named by its tag piece."""

    candidates: Tensor  # (L, V, k) int: each source piece's candidates, most probable first; -1 pad
    frequent: Tensor  # (L, F) int: the most frequent target pieces
    origin: str = ""  # how it was built, in words (its file's metadata)
    tags: Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))  # (L,) or (0,)

    def __post_init__(self) -> None:
        if self.candidates.ndim == 2:  # one table: a bilingual model's
            object.__setattr__(self, "candidates", self.candidates[None])
            object.__setattr__(self, "frequent", self.frequent[None])

    @property
    def vocab_size(self) -> int:
        return self.candidates.shape[1]

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
        (none for `pad_id`) and the frequent pieces in its language's table, eos and its
        `extra` (its controls'; [] for none)."""
        V, cpu = self.vocab_size, src.cpu()
        keep = torch.zeros(cpu.shape[0], V + 1, dtype=torch.bool)  # the last slot: the missing
        pad = None if pad_id is None else (cpu == pad_id)[:, :, None]  # (B, S, 1)
        if len(self.tags) == 0:  # one table, read by every row
            candidates = self.candidates[0][cpu].long()  # (B, S, k), -1 padded
            missing = candidates < 0 if pad is None else (candidates < 0) | pad
            keep.scatter_(1, candidates.masked_fill(missing, V).flatten(1), True)
            keep[:, self.frequent[0].long()] = True
        else:
            read = self.tables_read(cpu)  # (B, L)
            found = self.candidates[:, cpu].long()  # (L, B, S, k)
            missing = (found < 0) | ~read.T[:, :, None, None]
            missing = missing if pad is None else missing | pad[None]
            keep.scatter_(1, found.masked_fill(missing, V).transpose(0, 1).flatten(1), True)
            frequent = self.frequent.long()[None].expand(len(cpu), -1, -1)  # (B, L, F)
            keep.scatter_(1, frequent.masked_fill(~read[:, :, None], V).flatten(1), True)
        keep[:, eos_id] = True
        for row, pieces in enumerate(extra):
            keep[row, torch.tensor(pieces, dtype=torch.long)] = True
        return keep[:, :V].to(src.device)  # (B, V)

    def tables_read(self, src: Tensor) -> Tensor:
        """(B, S) source ids -> (B, L) bool: the tables per language each row reads. One tag:
        its language's; none or several: all."""
        named = (src[:, :, None] == self.tags.to(src.device)).any(1)  # (B, L)
        one = named.sum(1, keepdim=True) == 1  # (B, 1)
        return named | ~one

    def merged(self) -> tuple[list[list[int]], list[int]]:
        """Every language's tables as one: per source piece its candidates in any language
        (the first language's, then the next's), and the pieces frequent in every language."""
        V = self.vocab_size
        per_piece = self.candidates.transpose(0, 1).reshape(V, -1).tolist()  # (V, L k)
        rows = [list(dict.fromkeys(p for p in row if p >= 0)) for row in per_piece]
        common = set(self.frequent[0].tolist()).intersection(*self.frequent[1:].tolist())
        return rows, [p for p in self.frequent[0].tolist() if p in common]


def write_shortlist(directory: Path, shortlist: Shortlist) -> Path:
    """`shortlist.safetensors` in the model directory, written atomically; returns its path.
    One table is stored as (V, k) and (F,); tables per language as (L, V, k), (L, F) and the
    (L,) tag pieces that name them."""
    path = Path(directory) / layout.SHORTLIST_FILE
    one = len(shortlist.tags) == 0
    tensors = {
        "candidates": shortlist.candidates[0] if one else shortlist.candidates,
        "frequent": shortlist.frequent[0] if one else shortlist.frequent,
        **({} if one else {"tags": shortlist.tags}),
    }
    tensors = {k: v.to(torch.int32).contiguous() for k, v in tensors.items()}
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
    tags = tensors.get("tags")
    per_language = tags is not None  # one table per target language, each named by its tag
    shapes = [("candidates", candidates, 3 if per_language else 2)]
    shapes += [("frequent", frequent, 2 if per_language else 1)]
    shapes += [("tags", tags, 1)] if tags is not None else []
    for name, t, ndim in shapes:
        if t.ndim != ndim or t.dtype not in (torch.int32, torch.int64):
            raise ValueError(
                f"{path}: {name} is {t.dtype} of shape {tuple(t.shape)}, not {ndim}-D integers"
                f"{' (a table per language: tags names them)' if per_language else ''}; {FIX}"
            )
    if tags is not None and not len(tags) == len(candidates) == len(frequent):
        raise ValueError(
            f"{path}: {len(tags)} language tags for {len(candidates)} candidate tables and "
            f"{len(frequent)} frequent lists: one of each per language; {FIX}"
        )
    if candidates.shape[-2] != vocab_size:
        raise ValueError(
            f"{path}: built for a vocabulary of {candidates.shape[-2]:,} pieces, but the model "
            f"has {vocab_size:,}: it belongs to another model; {FIX}"
        )
    named = [("candidates", candidates, NO_CANDIDATE), ("frequent", frequent, 0)]
    for name, t, low in named + ([("tags", tags, 0)] if tags is not None else []):
        bad = (t < low) | (t >= vocab_size)
        if bad.any():
            value = int(t[bad][0])
            raise ValueError(
                f"{path}: {name} holds piece id {value}, outside the vocabulary "
                f"(0..{vocab_size - 1}); {FIX}"
            )
    if tags is None:  # one table: small, kept as the indices it is used as
        return Shortlist(candidates.long(), frequent.long(), origin)
    # a table per language: (L, V, k) is large (51 MB at 8 languages, 32,000 pieces, k 50)
    return Shortlist(candidates.to(torch.int32), frequent.to(torch.int32), origin, tags.long())
