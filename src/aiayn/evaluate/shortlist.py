"""Building a lexical shortlist from word alignments of the training pairs, and measuring it.

As Marian's lexical shortlists: eflomal (`data.batches.alignments`, the aligner guided
alignment uses, on the pieces themselves) links each training target piece to source pieces;
counting the links gives p(target piece | source piece), and each source piece keeps its k
most probable target pieces. The F most frequent target pieces are always in, for the function
words and punctuation no single source piece predicts. A multilingual directory gets both per
target language (each pair's direction, `{split}.dir.npy`), named by the language's tag piece:
Marian and Bergamot build a shortlist per language pair. Coverage, measured on the validation
split: the share of a sentence's reference pieces (or of the model's own greedy output) that
its shortlist holds, and the shortlist's mean size.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from aiayn import layout
from aiayn.config import DecodeConfig, ModelConfig
from aiayn.data.batches import alignments
from aiayn.data.batches.directions import load_directions
from aiayn.data.data_dir import DataDir
from aiayn.data.languages import tag
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.greedy import greedy_decode
from aiayn.decode.shortlist import NO_CANDIDATE, Shortlist
from aiayn.decode.translate import length_batches, load_model, source_batch


@dataclass(frozen=True)
class Lexicon:
    """Aligned training pieces per target language (one for bilingual data): for each source
    piece its target pieces by link count, best first (`table`, up to `k_max` each), and every
    target piece by frequency (`by_frequency`); `tags` name the languages (empty: bilingual)."""

    table: torch.Tensor  # (L, V, k_max) int32, -1 padded
    by_frequency: torch.Tensor  # (L, V) long, the most frequent target piece first
    tags: torch.Tensor  # (L,) long tag pieces, or (0,) for one table

    def shortlist(self, k: int, frequent: int) -> Shortlist:
        """The top-k candidates per source piece and the `frequent` most frequent pieces."""
        per = " per target language" if len(self.tags) else ""
        origin = (
            f"eflomal links of the training pairs{per}: top {k} per source piece, {frequent} "
            "frequent"
        )
        table, common = self.table[:, :, :k].clone(), self.by_frequency[:, :frequent].clone()
        return Shortlist(table, common, origin, self.tags)


def aligned_pieces(data: DataDir) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source piece, target piece, pair) of every eflomal link of the training pairs (aligned
    first and stored in the data directory if they are not yet)."""
    V = data.meta.vocab_size
    src, src_at = load_ids(data.ids("train", "src"), V)
    tgt, tgt_at = load_ids(data.ids("train", "tgt"), V)
    n = len(src_at) - 1
    links, offsets = alignments.ensure(data, n)  # (M, 2) (target, source) positions
    sentence = np.repeat(np.arange(n), np.diff(offsets))  # (M,)
    s = np.asarray(src)[src_at[sentence] + links[:, 1]]
    t = np.asarray(tgt)[tgt_at[sentence] + links[:, 0]]
    return s.astype(np.int64), t.astype(np.int64), sentence


def target_languages(data: DataDir, n_pairs: int) -> tuple[np.ndarray, torch.Tensor]:
    """Each training pair's target language (an index into the tags) and the (L,) tag pieces
    of the languages; (zeros, (0,)) for bilingual data."""
    names = data.meta.directions
    found = load_directions(data, "train", n_pairs)
    if found is None:
        return np.zeros(n_pairs, dtype=np.int64), torch.zeros(0, dtype=torch.long)
    targets = sorted({name.split("-")[1] for name in names})
    tags = Tokenizer(data.tokenizer).piece_ids([tag(lang) for lang in targets])
    of_direction = np.array([targets.index(name.split("-")[1]) for name in names])
    return of_direction[found], torch.tensor(tags, dtype=torch.long)


def lexicon(data: DataDir, k_max: int = 200) -> Lexicon:
    """The aligned counts of `data`'s training pairs as a `Lexicon`."""
    V = data.meta.vocab_size
    s, t, sentence = aligned_pieces(data)
    tgt, tgt_at = load_ids(data.ids("train", "tgt"), V)
    language, tags = target_languages(data, len(tgt_at) - 1)
    L = max(len(tags), 1)
    table = top_targets(language[sentence] * V + s, t, V, k_max, rows=L * V)
    in_language = np.repeat(language, np.diff(tgt_at))  # (target pieces,)
    counts = np.bincount(in_language * V + np.asarray(tgt).astype(np.int64), minlength=L * V)
    by_frequency = np.argsort(-counts.reshape(L, V), axis=1, kind="stable")  # (L, V)
    return Lexicon(table.view(L, V, k_max), torch.from_numpy(by_frequency), tags)


def top_targets(
    s: np.ndarray, t: np.ndarray, V: int, k: int, rows: int | None = None
) -> torch.Tensor:
    """(rows, k) int32: for each source key (a piece, default rows V), the target pieces most
    often linked to it, most first (ties: the lower id); -1 where it has fewer."""
    pairs, counts = np.unique(s * V + t, return_counts=True)  # sorted by (s, t)
    source, target = pairs // V, pairs % V
    order = np.lexsort((target, -counts, source))  # by source, then count descending
    source, target = source[order], target[order]
    first = np.searchsorted(source, source, side="left")  # each source's first row
    rank = np.arange(len(source)) - first
    keep = rank < k
    table = np.full((V if rows is None else rows, k), NO_CANDIDATE, dtype=np.int32)
    table[source[keep], rank[keep]] = target[keep]
    return torch.from_numpy(table)


@dataclass(frozen=True)
class Coverage:
    """How well a shortlist holds what a decoder emits, over a set of sentences."""

    covered: float  # share of the output pieces (eos not counted) inside their shortlist
    sentences: float  # share of sentences whose every piece is inside
    mean_size: float  # the mean shortlist size of a one-sentence batch, V'


def coverage(
    shortlist: Shortlist, sources: list[list[int]], outputs: list[list[int]], eos_id: int
) -> Coverage:
    """The coverage of `outputs` (pieces, one list per sentence) by the shortlist of each
    sentence's `sources` pieces."""
    inside = total = whole = size = 0
    for src, out in zip(sources, outputs, strict=True):
        vocab = shortlist.vocabulary(torch.tensor([src], dtype=torch.long), eos_id)  # (V',)
        hit = torch.isin(torch.tensor(out, dtype=torch.long), vocab)
        inside, total = inside + int(hit.sum()), total + len(out)
        whole += bool(hit.all())
        size += len(vocab)
    n = max(len(sources), 1)
    return Coverage(inside / max(total, 1), whole / n, size / n)


KS = (10, 20, 50, 100, 200)  # candidates per source piece tried by `aiayn shortlist --choose`
FREQUENT = (0, 100, 250, 500, 1000)  # most frequent target pieces tried
GOAL = 0.995  # the share of the model's greedy output pieces a chosen shortlist must hold


@dataclass(frozen=True)
class GridRow:
    k: int
    frequent: int
    references: Coverage  # of the validation references
    greedy: Coverage | None  # of the model's own greedy outputs, where they were decoded


def measure(
    lex: Lexicon,
    sources: list[list[int]],
    references: list[list[int]],
    outputs: list[list[int]] | None,
    eos_id: int,
    ks: tuple[int, ...] = KS,
    frequent: tuple[int, ...] = FREQUENT,
) -> list[GridRow]:
    """Coverage of references and greedy outputs (None: not decoded) for every (k, frequent)
    of the grid."""
    rows = []
    for k in ks:
        for f in frequent:
            shortlist = lex.shortlist(k, f)
            rows.append(
                GridRow(
                    k,
                    f,
                    coverage(shortlist, sources, references, eos_id),
                    None if outputs is None else coverage(shortlist, sources, outputs, eos_id),
                )
            )
    return rows


def choose(rows: list[GridRow], goal: float = GOAL) -> GridRow:
    """The row with the smallest mean shortlist among those that hold `goal` of the greedy
    output pieces (the most covering one where none does)."""
    measured = [(r, r.greedy) for r in rows if r.greedy is not None]
    good = [(r, g) for r, g in measured if g.covered >= goal]
    if not good:
        return max(measured, key=lambda m: (m[1].covered, -m[1].mean_size))[0]
    return min(good, key=lambda m: (m[1].mean_size, -m[1].covered))[0]


def validation_pieces(
    directory: Path, data: DataDir, n: int | None, device: str, decode: bool
) -> tuple[list[list[int]], list[list[int]], list[list[int]] | None, int]:
    """The validation split's source and reference pieces (the first n pairs), the model's
    greedy outputs of the sources where `decode`, and the model's eos id; an error when the
    model and the data have different vocabularies."""
    cfg = ModelConfig.load_json(directory / layout.CONFIG_FILE)
    if cfg.vocab_size != data.meta.vocab_size:
        raise ValueError(
            f"{data.root} has a vocabulary of {data.meta.vocab_size:,} pieces but the model in "
            f"{directory} has {cfg.vocab_size:,}: give the data the model was trained on"
        )
    sides = [load_ids(data.ids("valid", side), cfg.vocab_size) for side in ("src", "tgt")]
    sources, references = (
        [np.asarray(ids[a:b]).tolist() for a, b in itertools.pairwise(at)][:n] for ids, at in sides
    )
    if not decode:
        return sources, references, None, cfg.eos_id
    model, _ = load_model(directory, device)
    greedy = DecodeConfig(beam=1)
    outputs: list[list[int]] = [[] for _ in sources]
    for batch in length_batches([len(x) for x in sources], greedy.max_tokens):
        src = source_batch([sources[i] for i in batch], cfg.eos_id, cfg.pad_id, device)
        for i, out in zip(batch, greedy_decode(model, src, greedy), strict=True):
            outputs[i] = out
    return sources, references, outputs, cfg.eos_id
