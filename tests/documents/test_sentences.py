"""The sentence splitter on hard cases, and sentences cut with the tags that lie in them."""

import pytest

from aiayn.documents.inline import Span, Tagged
from aiayn.documents.segment import sentences_of, split_sentences
from tests.documents.hard_sentences import CASES


@pytest.mark.parametrize(("language", "text", "expected"), CASES, ids=[c[1][:30] for c in CASES])
def test_hard_cases(language, text, expected):
    assert split_sentences(text, language) == expected


def test_a_tag_across_a_sentence_end_joins_the_sentences():
    text = "One dog. Two cats. Three birds."
    bold = Span(4, 17, "b")  # "dog. Two cats"
    got = sentences_of(Tagged(text, (bold,)))
    assert [s.text for s in got] == ["One dog. Two cats.", "Three birds."]
    assert got[0].spans == (Span(4, 17, "b"),)
    assert got[1].spans == ()


def test_tags_are_shifted_into_their_sentence():
    text = "One dog. Two cats."
    got = sentences_of(Tagged(text, (Span(13, 17, "i"), Span(18, 18, "img", void=True))))
    assert [s.text for s in got] == ["One dog.", "Two cats."]
    assert got[1].spans == (Span(4, 8, "i"), Span(9, 9, "img", void=True))
