"""Text <-> piece ids: the joint SentencePiece model that `aiayn prepare` learned, with fixed
special ids. Everything that reads or writes pieces at run time goes through `Tokenizer`."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

from aiayn.data.bpe_dropout import dropout_merges, words
from aiayn.data.bt_tag import BT_TAG
from aiayn.data.case_markup import EVERY_MARKER, capitalised, mark, markup_of, unmark
from aiayn.data.sources import DataError
from aiayn.data.term_tags import TERM_TAGS
from aiayn.layout import TOKENIZER_FILE

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3  # the same ids as ModelConfig's defaults
WORD_START = "▁"  # SentencePiece's mark of a word's start (a space)

INPUT_ONLY = frozenset((BT_TAG, *TERM_TAGS))  # pieces no output shows


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
        # Input-only pieces that no output may show: the <BT> tag of back-translated sources,
        # the tags around a term of term-aware training (data/term_tags.py).
        terms = self._sp.piece_to_id(list(TERM_TAGS))
        self.term_aware = unk not in terms  # a model that learned the term tags
        self._input_only = {i for i in [self._sp.piece_to_id(BT_TAG), *terms] if i != unk}
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
        if not self._markup:
            return self._encoded(texts)
        recase = self.truecased if self._markup == "truecase" else None
        marked = [mark(text, self._markup, recase) for text in texts]
        rests = self._encoded([rest for _, rest in marked])
        leads = (self._sp.piece_to_id(lead) for lead, _ in marked)
        return [lead + rest for lead, rest in zip(leads, rests, strict=True)]

    def _encoded(self, texts: list[str]) -> list[list[int]]:
        """SentencePiece's ids of each text; one text alone is encoded as a string, a list
        through its thread pool (~0.1 ms more per call: a server's or batch 1's line)."""
        if len(texts) == 1:
            return [self._sp.encode(texts[0], out_type=int)]
        return self._sp.encode(texts, out_type=int)

    def sample(self, texts: list[str], alpha: float, seed: int) -> list[list[int]]:
        """The texts' ids in a segmentation drawn at random: BPE-dropout (bpe_dropout.py),
        each merge left out with probability alpha, the draws from a generator seeded with
        `seed`: the same texts, alpha and seed give the same ids in any process or thread,
        and alpha 0 gives `encode`'s. Case markers, language tags and unknown pieces stay as
        `encode` writes them; only runs of ordinary pieces are segmented anew."""
        rng = np.random.default_rng(seed)
        return [self._dropped(ids, alpha, rng) for ids in self.encode(texts)]

    def _dropped(self, ids: list[int], alpha: float, rng: np.random.Generator) -> list[int]:
        scores = self._merges
        out: list[int] = []
        run: list[str] = []  # ordinary pieces, segmented anew together
        for i, piece in zip([*ids, None], [*self._sp.id_to_piece(ids), None], strict=True):
            if piece is not None and piece in scores:
                run.append(piece)
                continue
            chars = list("".join(run))
            if all(c in scores for c in chars):
                for word in words(chars, WORD_START):
                    out += self._sp.piece_to_id(dropout_merges(word, scores, alpha, rng))
            else:  # a character the vocabulary lacks: the pieces as they were
                out += self._sp.piece_to_id(run)
            run = []
            if i is not None:
                out.append(i)
        return out

    @functools.cached_property
    def _merges(self) -> dict[str, float]:
        """The pieces BPE merges into, with their scores (higher merges first)."""
        model = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]  # generated
        model.ParseFromString(self._sp.serialized_model_proto())
        if model.trainer_spec.model_type != model.trainer_spec.BPE:
            raise DataError(
                f"{self.path}: not a BPE vocabulary (SentencePiece model type "
                f"{model.trainer_spec.model_type}); subword_sampling samples BPE merges: "
                "train on a data directory from `aiayn prepare`, or set subword_sampling=0"
            )
        normal = model.SentencePiece.NORMAL
        return {p.piece: p.score for p in model.pieces if p.type == normal}

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
        if self._input_only:
            ids = [[i for i in line if i not in self._input_only] for line in ids]
        if not self._markup:
            return [self._sp.decode(ids[0])] if len(ids) == 1 else self._sp.decode(ids)
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
        """The text that a sequence of pieces spells (input-only pieces left out)."""
        pieces = [p for p in pieces if p not in INPUT_ONLY]
        if not self._markup:
            return self._sp.decode_pieces(pieces)
        lead = list(itertools.takewhile(lambda p: p in EVERY_MARKER, pieces))
        return unmark("".join(lead) + self._sp.decode_pieces(pieces[len(lead) :]))
