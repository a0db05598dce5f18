"""What `aiayn backtranslate` and `aiayn distill` share: a file of lines translated by any
engine into a TSV corpus, in chunks that a killed run resumes (`aiayn.decode.corpus`), with the
over-long-line policy applied to the whole input, its lines named by their number there."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiayn.commands.options.decoding import add_decoding, add_sampling, describe
from aiayn.commands.options.engine import engine_config, search_for, search_options
from aiayn.commands.options.languages import add_tgt_lang
from aiayn.commands.options.reading import read_lines
from aiayn.decode.corpus import (
    ChunkTranslate,
    CorpusJob,
    Row,
    check_out,
    directory_digest,
    file_digest,
    translate_corpus,
)

if TYPE_CHECKING:
    from aiayn.config import DecodeConfig
    from aiayn.data.tokenizer import Tokenizer
    from aiayn.engines import Translator

CHUNK_LINES = 1000  # a chunk's lines: seconds to minutes of work, a few hundred kB on disk


def add_corpus_translation(p: argparse.ArgumentParser, sampling: bool, **model: str) -> None:
    """The model and its search (with `sampling`, --sample and its settings too), --out, and
    how the work is cut into chunks."""
    add_decoding(p, **model)
    if sampling:
        add_sampling(p)
    add_tgt_lang(p)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        help="the TSV to write; finished chunks wait in OUT.partial/ until every line is done",
    )
    p.add_argument(
        "--chunk-lines",
        type=int,
        default=CHUNK_LINES,
        help="lines per chunk: the work a killed run can lose (the same command resumes it)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def read_text_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file; a NUL byte or invalid UTF-8 is an error naming the line."""
    lines = read_lines(path)
    for n, line in enumerate(lines, start=1):
        if "\0" in line:
            raise ValueError(
                f"{path}, line {n}: a NUL byte: this looks like a binary file; give UTF-8 text, "
                "one sentence a line"
            )
    return lines


def translate_file(
    args: argparse.Namespace, command: str, path: Path, lines: list[str], row: Row
) -> int:
    """Translate `lines` (read from `path`) into args.out, one `row` per line, resuming work a
    killed run of the same command left; what was done is said on stderr."""
    from aiayn.config import EngineConfig
    from aiayn.engines import open_translator
    from aiayn.engines.open import model_directory

    if args.chunk_lines < 1:
        raise ValueError(f"--chunk-lines must be at least 1, not {args.chunk_lines}")
    check_out(args.out)  # before the model loads
    given = search_options(args)
    translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    cfg, length = search_for(translator, given)
    print(f"search: {describe(cfg)}; {length}", file=sys.stderr)
    instead = long_lines(path, lines, translator.tokenizer, cfg)
    directory = model_directory(args.model, EngineConfig(engine=args.engine))
    options = {
        "command": command,
        "input (sha256)": file_digest(path),
        "model files (sha256)": directory_digest(directory),
        "--chunk-lines": args.chunk_lines,
        "--tgt-lang": args.tgt_lang,
        **flags_of(engine_config(args).to_dict()),
        **flags_of(search_settings(cfg)),
    }
    job = CorpusJob(args.out, options, args.chunk_lines, progress=not args.no_progress)
    now = translate_corpus(lines, chunk_translator(translator, cfg, instead, job), row, job)
    empty = sum(not line.strip() for line in lines)
    print(
        f"{args.out}: {len(lines):,} rows, one per input line ({now:,} translated by this run, "
        f"{empty:,} empty lines written as empty rows, which `aiayn prepare` drops and counts)",
        file=sys.stderr,
    )
    return 0


SAMPLING = ("temperature", "top_k", "top_p", "seed")  # what only sampling reads


def search_settings(cfg: DecodeConfig) -> dict[str, Any]:
    """What the output depends on of the search: under beam, not how sampling would draw."""
    values = cfg.to_dict()
    return values if cfg.sample else {k: v for k, v in values.items() if k not in SAMPLING}


def flags_of(values: dict[str, Any]) -> dict[str, Any]:
    """A config's fields by the flags that set them (the names a refusal shows)."""
    return {f"--{k.replace('_', '-')}": v for k, v in values.items()}


def chunk_translator(
    translator: Translator, cfg: DecodeConfig, instead: dict[int, str], job: CorpusJob
) -> ChunkTranslate:
    """How chunk k is translated: as `aiayn translate` does (beam: a line over the limit cut
    into chunks, LineTranslator), with the lines of `instead` replaced; sampling draws chunk k
    from a seed derived from (--seed, k), so a resumed run draws what a whole run would."""
    from aiayn.decode.sampling import derived_seed
    from aiayn.documents.lines import LineTranslator

    engine = translator if cfg.sample else LineTranslator(translator, None)

    def translate(part: list[str], k: int) -> list[str]:
        start = k * job.chunk_lines
        part = [instead.get(start + i, line) for i, line in enumerate(part)]
        if cfg.sample:
            return engine.translate(part, cfg.replace(seed=derived_seed(cfg.seed, k)))
        return engine.translate(part, cfg)

    return translate


def long_lines(
    path: Path, lines: list[str], tokenizer: Tokenizer, cfg: DecodeConfig
) -> dict[int, str]:
    """The --too-long policy over the whole input, before any work: refused (error), or named
    in one warning; {line index: what the engine gets instead} for those skipped ("") or
    truncated (sampling cuts no line into chunks: it truncates too)."""
    limit = cfg.max_input_tokens
    found: dict[int, list[int]] = {}
    for start in range(0, len(lines), CHUNK_LINES):
        for i, ids in enumerate(tokenizer.encode(lines[start : start + CHUNK_LINES])):
            if len(ids) > limit:
                found[start + i] = ids
    if not found:
        return {}
    where = ", ".join(str(i + 1) for i in list(found)[:10]) + (" ..." if len(found) > 10 else "")
    message = f"{path}: {len(found)} line(s) longer than {limit} pieces (line {where})"
    if cfg.too_long == "error":
        raise ValueError(f"{message}; raise --max-input-tokens or choose another --too-long")
    split = cfg.too_long == "split" and not cfg.sample
    what = {"skip": "skipped (an empty translation)", "truncate": "truncated"}.get(
        cfg.too_long, "cut into chunks, each translated" if split else "truncated (sampling)"
    )
    print(f"warning: {message}: {what}", file=sys.stderr)
    if split:
        return {}
    if cfg.too_long == "skip":
        return dict.fromkeys(found, "")
    return dict(zip(found, tokenizer.decode([ids[:limit] for ids in found.values()]), strict=True))
