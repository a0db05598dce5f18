"""`aiayn distill`: a teacher's beam-search translations of a data directory's training sources,
the corpus its student learns from (sequence-level knowledge distillation, Kim & Rush 2016)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aiayn.commands.options.corpus import add_corpus_translation, read_text_lines, translate_file


def add(commands) -> None:
    p = commands.add_parser(
        "distill",
        help="translate a data directory's training sources with a teacher: "
        "source<TAB>teacher_translation lines for `aiayn prepare`",
    )
    add_corpus_translation(
        p,
        sampling=False,
        model_flag="--teacher",
        model_help="the teacher: a run, checkpoint or model directory",
    )
    p.add_argument(
        "--data",
        type=Path,
        required=True,
        help="a directory written by `aiayn prepare`: its train.src.txt is translated",
    )
    p.set_defaults(run=run_distill)


def run_distill(args: argparse.Namespace) -> int:
    from aiayn.layout import DataFiles

    path = DataFiles(args.data).text("train", "src")
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: missing; --data names a directory written by `aiayn prepare` (its "
            "training sources are what the teacher translates)"
        )
    lines = read_text_lines(path)
    return translate_file(args, "distill", path, lines, teacher_pair)


def teacher_pair(line: str, translation: str) -> str:
    """The row of a training source: the teacher's translation is the student's target."""
    return f"{line}\t{translation}"
