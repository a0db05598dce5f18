"""A corpus translated in resumable chunks (decode/corpus.py), on a translation function that
reverses each line: rows in input order, a killed run resumed to the same bytes, every line
translated once, and partial work from other options refused by name."""

from pathlib import Path

import pytest

from aiayn.decode.corpus import CorpusJob, chunk_file, translate_corpus, work_dir

LINES = [f"line {i}" for i in range(7)] + ["", "a\ttab"]


class Killed(BaseException):
    """What a kill looks like to the loop: it stops between two statements."""


def reverse(calls: list[int], kill_at: int | None = None):
    def translate(part: list[str], k: int) -> list[str]:
        if k == kill_at:
            raise Killed
        calls.append(len(part))
        return [line[::-1] for line in part]

    return translate


def job(out: Path, **options) -> CorpusJob:
    return CorpusJob(out, {"--beam": 4, **options}, chunk_lines=2, progress=False)


def pair(line: str, translation: str) -> str:
    return f"{translation}\t{line}"


def test_rows_follow_the_input(tmp_path):
    calls: list[int] = []
    out = tmp_path / "bt.tsv"
    assert translate_corpus(LINES, reverse(calls), pair, job(out)) == len(LINES)
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows[:2] == ["0 enil\tline 0", "1 enil\tline 1"]
    assert rows[7] == "\t"  # an empty line stays, as an empty row
    assert rows[8] == "bat a\ta tab"  # a tab inside a line is a space in its column
    assert len(rows) == len(LINES) and calls == [2, 2, 2, 2, 1]
    assert not work_dir(out).exists()


def test_a_killed_run_resumes_to_the_same_output(tmp_path):
    whole = tmp_path / "whole.tsv"
    translate_corpus(LINES, reverse([]), pair, job(whole))
    out = tmp_path / "bt.tsv"
    with pytest.raises(Killed):
        translate_corpus(LINES, reverse([], kill_at=2), pair, job(out))
    assert not out.exists()  # the output appears only complete
    assert chunk_file(work_dir(out), 1).is_file() and not chunk_file(work_dir(out), 2).exists()
    calls: list[int] = []
    assert translate_corpus(LINES, reverse(calls), pair, job(out)) == 5
    assert calls == [2, 2, 1]  # only the chunks that were missing
    assert out.read_bytes() == whole.read_bytes()


def test_partial_work_from_other_options_is_refused_by_name(tmp_path):
    out = tmp_path / "bt.tsv"
    with pytest.raises(Killed):
        translate_corpus(LINES, reverse([], kill_at=1), pair, job(out))
    said = r"other options \(--beam 4 then, 2 now\); rerun the command"
    with pytest.raises(ValueError, match=said):
        translate_corpus(LINES, reverse([]), pair, job(out, **{"--beam": 2}))
    assert chunk_file(work_dir(out), 0).is_file()  # the work is kept


def test_chunks_without_their_options_are_refused(tmp_path):
    out = tmp_path / "bt.tsv"
    with pytest.raises(Killed):
        translate_corpus(LINES, reverse([], kill_at=1), pair, job(out))
    (work_dir(out) / "options.json").unlink()
    with pytest.raises(FileNotFoundError, match="cannot be matched to these options"):
        translate_corpus(LINES, reverse([]), pair, job(out))


def test_a_finished_output_is_never_overwritten(tmp_path):
    out = tmp_path / "bt.tsv"
    out.write_text("hours of work\n")
    with pytest.raises(FileExistsError, match="exists already"):
        translate_corpus(LINES, reverse([]), pair, job(out))
    assert out.read_text() == "hours of work\n"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        translate_corpus(LINES, reverse([]), pair, job(tmp_path / "no" / "bt.tsv"))
