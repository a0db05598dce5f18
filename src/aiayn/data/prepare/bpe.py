"""Learning the joint SentencePiece BPE vocabulary of source and target (`aiayn prepare`), with
fixed special ids; optionally from cased copies or with capitals as markers."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import sentencepiece as spm

from aiayn.data.case_markup import markers, write_marked
from aiayn.data.casing import title_case, upper_case
from aiayn.data.prepare.workers import fresh_processes
from aiayn.data.sources import DataError, count_lines
from aiayn.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Tokenizer
from aiayn.layout import TOKENIZER_FILE


def default_vocab_size(n_train_pairs: int) -> int:
    """A vocabulary that suits the corpus: small corpora cannot fill (or learn) a large one. 8,000
    below 50,000 pairs (`learn_bpe` shrinks a default size to what the text holds): 2,000 lost
    about 2.5 test BLEU on 2,000 Bible verses (issue 56's learning curve, benchmarks/README.md),
    though Sennrich & Zhang (2019) found fewer merges better for little text at convergence."""
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
