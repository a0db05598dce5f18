"""A joint SentencePiece BPE vocabulary for source and target, with fixed special ids."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import sentencepiece as spm

from aiayn.data.sources import DataError

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3  # the same ids as ModelConfig's defaults
MODEL_FILE = "spm.model"


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
    character_coverage: float = 1.0,
) -> Path:
    """Learn one BPE model on the given text files (source and target together).

    At most `max_sentences` lines, sampled, are read, so that memory stays bounded; the
    trainer runs in a child process, which gives all of its memory back when it ends.
    """
    from aiayn.data.binarize import fresh_processes

    args = ([str(f) for f in files], str(out_dir), vocab_size, max_sentences, threads,
            character_coverage)  # fmt: skip
    with ProcessPoolExecutor(1, fresh_processes()) as pool:
        return pool.submit(_train_bpe, *args).result()


def _train_bpe(
    files: list[str],
    out_dir: str,
    vocab_size: int,
    max_sentences: int,
    threads: int,
    character_coverage: float,
) -> Path:
    prefix = Path(out_dir) / MODEL_FILE.removesuffix(".model")
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
            input_sentence_size=max_sentences,
            shuffle_input_sentence=True,
            num_threads=threads,
            minloglevel=2,
        )
    except RuntimeError as err:
        reason = str(err).rstrip(".")
        raise DataError(
            f"SentencePiece could not learn a {vocab_size:,}-piece vocabulary from "
            f"{', '.join(map(str, files))}: {reason}. Choose a smaller --vocab-size"
        ) from None
    return prefix.with_suffix(".model")


class Tokenizer:
    """Text <-> piece ids with the joint model (pad 0, bos 1, eos 2, unk 3)."""

    def __init__(self, model_file: str | Path) -> None:
        path = Path(model_file)
        if path.is_dir():
            path = path / MODEL_FILE
        if not path.is_file():
            raise DataError(f"{path}: no SentencePiece model here; run `aiayn prepare` first")
        self.path = path
        self.sp = spm.SentencePieceProcessor(model_file=str(path))
        if (self.sp.pad_id(), self.sp.bos_id(), self.sp.eos_id()) != (PAD_ID, BOS_ID, EOS_ID):
            raise DataError(f"{path}: special ids differ from pad=0, bos=1, eos=2")

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, texts: list[str]) -> list[list[int]]:
        return self.sp.encode(texts, out_type=int)

    def decode(self, ids: list[list[int]]) -> list[str]:
        return self.sp.decode(ids)

    def pieces(self, text: str) -> list[str]:
        return self.sp.encode(text, out_type=str)
