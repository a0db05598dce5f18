"""A joint SentencePiece BPE vocabulary for source and target, with fixed special ids."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import sentencepiece as spm

from aiayn.data.case_markup import (
    EVERY_MARKER,
    capitalised,
    mark,
    markers,
    markup_of,
    unmark,
    write_marked,
)
from aiayn.data.casing import title_case, upper_case
from aiayn.data.sources import DataError, count_lines
from aiayn.layout import TOKENIZER_FILE

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3  # the same ids as ModelConfig's defaults


def default_vocab_size(n_train_pairs: int) -> int:
    """A vocabulary that suits the corpus: small corpora cannot fill (or learn) a large one."""
    if n_train_pairs < 50_000:
        return 8_000
    if n_train_pairs < 500_000:
        return 16_000
    return 32_000  # the paper used ~37k shared for 4.5M EN-DE pairs


def train_bpe(
    files: Sequence[Path],
    out_dir: Path,
    vocab_size: int,
    max_sentences: int = 1_000_000,
    threads: int = 2,
    seed: int = 1,
    exact: bool = True,
    character_coverage: float = 1.0,
    user_symbols: Sequence[str] = (),
    case_copies: float = 0.0,
    case_markup: str = "",
) -> tuple[Path, int]:
    """Learn one BPE model on the given text files (source and target together).

    At most about `max_sentences` lines, sampled with `seed`, are learned from, so that memory
    stays bounded; the trainer runs in a child process, which gives all of its memory back
    when it ends.
    `exact=False` lets the vocabulary come out smaller when the data cannot fill it.
    `user_symbols` (the `<2de>` language tags) are each kept as one piece.
    `case_copies` (a fraction P): the vocabulary also learns from an upper- or title-cased copy
    of a seeded P of the lines, so that capitals get pieces of their own (`prepare
    --case-copies`; for training with case_augment).
    `case_markup` ("all", "upper" or "truecase"): the vocabulary learns lower-cased words and
    the case markers, and the Tokenizer then writes capitals as markers (`prepare
    --case-markup`, case_markup.py).

    Returns:
        The model file and its vocabulary size.
    """
    from aiayn.data.binarize import fresh_processes

    sample = Path(out_dir) / ".bpe-sample.txt"
    cased = Path(out_dir) / ".bpe-cased.txt"
    lowered = Path(out_dir) / ".bpe-lower.txt"
    inputs = [str(f) for f in files]
    try:
        if sum(count_lines(f) for f in files) > max_sentences:
            write_sample(files, sample, max_sentences, seed)
            inputs = [str(sample)]
        if case_copies:
            write_case_copies([Path(f) for f in inputs], cased, case_copies, seed)
            inputs.append(str(cased))
        if case_markup:
            write_marked([Path(f) for f in inputs], lowered, case_markup)
            inputs, user_symbols = [str(lowered)], (*user_symbols, *markers(case_markup))
        args = (inputs, str(out_dir), vocab_size, threads, exact, character_coverage, user_symbols)
        with ProcessPoolExecutor(1, fresh_processes()) as pool:
            model_file = pool.submit(_train_bpe, *args).result()
    finally:
        sample.unlink(missing_ok=True)
        cased.unlink(missing_ok=True)
        lowered.unlink(missing_ok=True)
    return model_file, Tokenizer(model_file).vocab_size


def write_sample(files: Sequence[Path], out: Path, n: int, seed: int) -> None:
    """About n lines drawn uniformly from the files, reproducibly from the seed, streamed.

    (SentencePiece's own sampling ignores its seed, so the vocabulary would vary run to run.)
    """
    p = n / sum(count_lines(f) for f in files)
    rng = np.random.default_rng(seed)
    with open(out, "w", encoding="utf-8") as sample:
        for lines in chunks(files):
            keep = rng.random(len(lines)) < p
            sample.writelines(line for line, k in zip(lines, keep, strict=True) if k)


def write_case_copies(files: Sequence[Path], out: Path, p: float, seed: int) -> None:
    """An upper- or title-cased copy (drawn half and half) of about a fraction p of the lines,
    chosen reproducibly from the seed, streamed."""
    rng = np.random.default_rng(seed + 1)  # not the sample's draws
    with open(out, "w", encoding="utf-8") as copies:
        for lines in chunks(files):
            chosen, upper = rng.random(len(lines)) < p, rng.random(len(lines)) < 0.5
            copies.writelines(
                (upper_case(line) if up else title_case(line))
                for line, pick, up in zip(lines, chosen, upper, strict=True)
                if pick
            )


def chunks(files: Sequence[Path], size: int = 100_000) -> Iterator[list[str]]:
    """The files' lines, a list of at most `size` at a time (memory stays bounded)."""
    for path in files:
        with open(path, encoding="utf-8") as f:
            while lines := list(itertools.islice(f, size)):
                yield lines


def _train_bpe(
    files: list[str],
    out_dir: str,
    vocab_size: int,
    threads: int,
    exact: bool,
    character_coverage: float,
    user_symbols: Sequence[str] = (),
) -> Path:
    prefix = Path(out_dir) / TOKENIZER_FILE.removesuffix(".model")
    try:
        spm.SentencePieceTrainer.train(
            input=files,
            model_prefix=str(prefix),
            model_type="bpe",
            vocab_size=vocab_size,
            character_coverage=character_coverage,
            pad_id=PAD_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            unk_id=UNK_ID,
            num_threads=threads,
            hard_vocab_limit=exact,
            user_defined_symbols=list(user_symbols),
            minloglevel=2,
        )
    except RuntimeError as err:
        reason = str(err).rstrip(".")
        advice = (
            "choose a smaller --vocab-size"
            if "too high" in reason
            else (
                "choose a larger --vocab-size" if "required_chars" in reason else "check the input"
            )
        )
        raise DataError(
            f"SentencePiece could not learn a {vocab_size:,}-piece vocabulary from "
            f"{', '.join(map(str, files))}: {reason}; {advice}"
        ) from None
    return prefix.with_suffix(".model")


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
        if not self._markup:
            return self._sp.encode(texts, out_type=int)
        recase = self.truecased if self._markup == "truecase" else None
        marked = [mark(text, self._markup, recase) for text in texts]
        rests = self._sp.encode([rest for _, rest in marked], out_type=int)
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
