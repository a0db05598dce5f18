"""SubRip subtitles (documents/srt.py): numbers and timings untouched, each subtitle's lines
joined for translation and broken again into at most as many, tags kept."""

import pytest
import srt as subrip

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.srt import inline_nodes, rebalance, render
from aiayn.engines.copy import CopyTranslator
from tests.documents.conftest import WordTokenizer
from tests.documents.localisation_samples import SRT

QUIET = DocumentOptions(progress=False)


def run(translator, text: str, options: DocumentOptions = QUIET) -> str:
    return translate_document(translator, text, "srt", DecodeConfig(), options)[0]


def test_a_copy_is_the_file_byte_for_byte():
    assert run(CopyTranslator(WordTokenizer()), SRT) == SRT
    crlf = SRT.replace("\n", "\r\n")
    assert run(CopyTranslator(WordTokenizer()), crlf) == crlf


def test_a_translation_keeps_numbers_timings_tags_and_line_counts(scripted):
    before, after = list(subrip.parse(SRT)), list(subrip.parse(run(scripted, SRT)))
    for old, new in zip(before, after, strict=True):
        assert (new.index, new.start, new.end) == (old.index, old.start, old.end)
        assert 1 <= new.content.count("\n") + 1 <= old.content.count("\n") + 1
        for tag in ("<i>", "</i>", "<b>", "</b>", '<font color="red">', "</font>", "{\\an8}"):
            assert new.content.count(tag) == old.content.count(tag)
    assert after[1].content.startswith("- ") and "\n- " in after[1].content  # two speakers
    assert after[2].content.startswith("{\\an8}")


def test_lines_break_where_the_source_broke_in_proportion():
    nodes, _ = inline_nodes("aaaa bbbb cccc dddd eeee ffff")
    assert render(rebalance(nodes, [9, 19])) == "aaaa bbbb\ncccc dddd eeee ffff"
    assert render(rebalance(nodes, [14, 14])) == "aaaa bbbb cccc\ndddd eeee ffff"
    assert render(rebalance(["one"], [5, 5, 5])) == "one"  # no space: one line


def test_an_unclosed_tag_is_closed_at_the_subtitles_end_with_a_warning(capsys):
    broken = SRT.replace("<i>you</i>", "<i>you")
    out = run(CopyTranslator(WordTokenizer()), broken)
    assert "How are <i>you today?</i>" in out
    assert "line 3: <i> closed at the subtitle's end" in capsys.readouterr().err


def test_a_damaged_file_is_an_error_naming_its_line():
    damaged = SRT.replace("00:00:04,000 --> 00:00:06,000", "00:00:04,000 -> 00:00:06,000")
    with pytest.raises(ValueError, match=r"s.srt: line 6: not a subtitle .*'2'"):
        run(CopyTranslator(WordTokenizer()), damaged, DocumentOptions(name="s.srt"))
