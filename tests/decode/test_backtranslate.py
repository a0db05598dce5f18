"""`aiayn backtranslate` and `aiayn distill` on a run trained for a few steps: one row per input
line, the translations `aiayn translate` gives, and a killed run resumed to the same bytes."""

from pathlib import Path

import pytest

import aiayn.commands.options.corpus as corpus
from aiayn.cli import main

SHORT = ["--max-len-a", "0", "--max-len-b", "5", "--no-progress"]  # seconds on a CPU
BEAM = ["--beam", "2", *SHORT]
SAMPLE = ["--sample", "--seed", "7", *SHORT]
LINES = ["Der Hund sieht eine Katze.", "", "Ein alter Mann liest.", "Rot.", "Das Haus ist groß."]


class Killed(BaseException):
    """A kill, as the chunk loop sees it."""


def translated(run: Path, lines: list[str], flags: list[str], tmp: Path) -> list[str]:
    """What `aiayn translate` writes for these lines."""
    (tmp / "in.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    out = tmp / "translate.txt"
    argv = ["translate", "--model", str(run), "--input", str(tmp / "in.txt"), "--output", str(out)]
    assert main([*argv, *flags]) == 0
    return out.read_text(encoding="utf-8").splitlines()


def backtranslate(run: Path, tmp: Path, out: Path, flags: list[str]) -> list[list[str]]:
    (tmp / "mono.de").write_text("".join(f"{line}\n" for line in LINES), encoding="utf-8")
    argv = ["backtranslate", "--model", str(run), "--input", str(tmp / "mono.de")]
    assert main([*argv, "--out", str(out), "--chunk-lines", "2", *flags]) == 0
    return [row.split("\t") for row in out.read_text(encoding="utf-8").split("\n")[:-1]]


def test_backtranslate_writes_translate_s_output_beside_each_line(tiny_run, tmp_path):
    rows = backtranslate(tiny_run, tmp_path, tmp_path / "bt.tsv", BEAM)
    assert [target for _, target in rows] == LINES  # aligned: the empty line is an empty row
    assert [source for source, _ in rows] == translated(tiny_run, LINES, BEAM, tmp_path)
    assert rows[1] == ["", ""]


@pytest.mark.parametrize("flags", [BEAM, SAMPLE], ids=["beam", "sampling"])
def test_a_killed_run_resumed_writes_what_a_whole_run_writes(
    flags, tiny_run, tmp_path, monkeypatch
):
    whole = backtranslate(tiny_run, tmp_path, tmp_path / "whole.tsv", flags)
    build = corpus.chunk_translator

    def killed_at_chunk_1(*args):
        translate = build(*args)

        def once(part: list[str], k: int) -> list[str]:
            if k == 1:
                raise Killed
            return translate(part, k)

        return once

    out = tmp_path / "bt.tsv"
    monkeypatch.setattr(corpus, "chunk_translator", killed_at_chunk_1)
    with pytest.raises(Killed):
        backtranslate(tiny_run, tmp_path, out, flags)
    assert not out.exists() and (tmp_path / "bt.tsv.partial" / "chunk-000000.tsv").is_file()
    monkeypatch.setattr(corpus, "chunk_translator", build)
    assert backtranslate(tiny_run, tmp_path, out, flags) == whole
    assert not (tmp_path / "bt.tsv.partial").exists()


def test_distill_writes_the_teacher_s_beam_translations(tiny_run, tiny_data, tmp_path):
    sources = (tiny_data / "train.src.txt").read_text(encoding="utf-8").splitlines()[:5]
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.src.txt").write_text("".join(f"{s}\n" for s in sources), encoding="utf-8")
    out = tmp_path / "distilled.tsv"
    argv = ["distill", "--teacher", str(tiny_run), "--data", str(data), "--out", str(out)]
    assert main([*argv, *BEAM]) == 0
    rows = [row.split("\t") for row in out.read_text(encoding="utf-8").splitlines()]
    assert [source for source, _ in rows] == sources
    assert [target for _, target in rows] == translated(tiny_run, sources, BEAM, tmp_path)


def test_partial_work_under_beam_does_not_depend_on_how_sampling_would_draw():
    from aiayn.config import DecodeConfig

    beam = corpus.search_settings(DecodeConfig(seed=5))
    assert "seed" not in beam and "top_k" not in beam and beam["beam"] == 4
    assert corpus.search_settings(DecodeConfig(sample=True, seed=5))["seed"] == 5
