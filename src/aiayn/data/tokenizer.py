"""Text <-> piece ids: the joint SentencePiece model that `aiayn prepare` learned, with fixed
special ids. Everything that reads or writes pieces at run time goes through `Tokenizer`."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sentencepiece as spm

from aiayn.data.case_markup import EVERY_MARKER, capitalised, mark, markup_of, unmark
from aiayn.data.sources import DataError
from aiayn.layout import TOKENIZER_FILE

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3  # the same ids as ModelConfig's defaults
# SentencePiece draws from one random seed per process: a draw holds it from seeding to the end
_SAMPLING = threading.Lock()


class Tokenizer:
    """Text <-> piece ids with the joint model (pad 0, bos 1, eos 2, unk 3).

    Everything that needs the SentencePiece model asks this class, never the processor itself.
    A model learned with `prepare --case-markup` (it holds the case markers) reads text through
    case_markup.mark: words lower-cased, their capitals marker pieces; with "truecase" a word in
    capitals is written in the casing whose pieces the vocabulary knows best (truecased).
    """

    _KNOWN_CASINGS = 100_000  # words whose chosen casing is kept (a server's input is unbounded)

    def __init__(self, model_file: str | Path) -> None:
        path = Path(model_file)
        if path.is_dir():
            path = path / TOKENIZER_FILE
        if not path.is_file():
            raise DataError(f"{path}: no SentencePiece model here; run `aiayn prepare` first")
        self.path = path
        try:
            self._sp = spm.SentencePieceProcessor(model_file=str(path))
        except (RuntimeError, OSError) as err:  # found by the fuzzed readers: a bare traceback
            reason = (str(err).splitlines() or ["unreadable"])[0]
            raise DataError(
                f"{path}: not a SentencePiece model ({reason}): damaged or cut short; copy it "
                "again from the data directory (`aiayn prepare` wrote it)"
            ) from None
        if (self._sp.pad_id(), self._sp.bos_id(), self._sp.eos_id()) != (PAD_ID, BOS_ID, EOS_ID):
            raise DataError(f"{path}: special ids differ from pad=0, bos=1, eos=2")
        unk = self._sp.unk_id()
        self._markup = markup_of(m for m in EVERY_MARKER if self._sp.piece_to_id(m) != unk)
        self._casings: dict[str, str] = {}

    @property
    def vocab_size(self) -> int:
        return self._sp.get_piece_size()

    @property
    def unk_id(self) -> int:
        return self._sp.unk_id()

    @property
    def case_markup(self) -> str:
        """How capitals are written as markers: "all", "upper", "truecase" (`prepare
        --case-markup`) or ""."""
        return self._markup

    def encode(self, texts: list[str]) -> list[list[int]]:
        return self._encode(texts, {})

    def sample(self, texts: list[str], alpha: float, seed: int) -> list[list[int]]:
        """The texts' ids in a segmentation drawn at random (subword regularisation): a BPE
        model leaves out each merge with probability alpha (BPE-dropout), a unigram model
        draws from its segmentations smoothed by alpha (Kudo 2018). The same texts, alpha and
        seed give the same ids, in any thread; alpha 0 on a BPE model gives `encode`'s ids.
        Case markers and language tags stay whole pieces, as `encode` writes them."""
        with _SAMPLING:
            spm.set_random_generator_seed(seed)
            # one thread: lines shared out among threads would draw in an order that varies
            options = {"enable_sampling": True, "alpha": alpha, "nbest_size": -1, "num_threads": 1}
            return self._encode(texts, options)

    def _encode(self, texts: list[str], options: dict[str, Any]) -> list[list[int]]:
        """Texts -> ids, SentencePiece called with `options` (sampling)."""
        if not self._markup:
            return self._sp.encode(texts, out_type=int, **options)
        recase = self.truecased if self._markup == "truecase" else None
        marked = [mark(text, self._markup, recase) for text in texts]
        rests = self._sp.encode([rest for _, rest in marked], out_type=int, **options)
        leads = (self._sp.piece_to_id(lead) for lead, _ in marked)
        return [lead + rest for lead, rest in zip(leads, rests, strict=True)]

    def truecased(self, word: str) -> str:
        """The lower-cased word as it is written lower-cased or with a capital first letter,
        whichever the vocabulary spells in fewer pieces, then in earlier-learnt merges (BPE's
        scores): the form its learning text held more often ("god" -> "God", "said" -> "said").
        The same word gets the same casing on every line, so a region reads as ordinary text."""
        if (known := self._casings.get(word)) is not None:
            return known
        forms = list(dict.fromkeys((word, capitalised(word))))
        costs = [
            (len(ids), -sum(self._sp.get_score(i) for i in ids))
            for ids in self._sp.encode(forms, out_type=int)
        ]
        if len(self._casings) >= self._KNOWN_CASINGS:
            self._casings.clear()
        best = self._casings[word] = forms[costs.index(min(costs))]
        return best

    def decode(self, ids: list[list[int]]) -> list[str]:
        if not self._markup:
            return self._sp.decode(ids)
        return [
            self.join(self.pieces(i for i in line if not self._sp.is_control(i))) for line in ids
        ]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The pieces that the ids name (`<s>`, `▁The`, `og`...): for attention plots and
        engines that take pieces."""
        return self._sp.id_to_piece([int(i) for i in ids])

    def piece_ids(self, pieces: list[str]) -> list[int]:
        """The ids of the pieces (the inverse of `pieces`)."""
        return self._sp.piece_to_id(pieces)

    def join(self, pieces: list[str]) -> str:
        """The text that a sequence of pieces spells."""
        if not self._markup:
            return self._sp.decode_pieces(pieces)
        lead = list(itertools.takewhile(lambda p: p in EVERY_MARKER, pieces))
        return unmark("".join(lead) + self._sp.decode_pieces(pieces[len(lead) :]))
