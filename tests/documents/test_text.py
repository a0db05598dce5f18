"""Plain text: paragraphs and blank lines kept, soft wraps joined, each distinct sentence
translated once in one search."""

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document

QUIET = DocumentOptions(progress=False)


def test_paragraphs_and_blank_lines_are_kept(scripted):
    doc = "  One dog. Two\ncats.\n\n\n   \nThree birds.\r\nFour.\r\n\n"
    out, n = translate_document(scripted, doc, "text", DecodeConfig(), QUIET)
    assert out == "  DOG. ONE CATS. TWO\n\n\n   \nBIRDS. THREE FOUR.\r\n\n"
    assert n == 4


def test_each_distinct_sentence_is_translated_once_in_one_call(scripted):
    doc = "A cat. A dog.\n\nA cat. A cow.\n"
    out, _ = translate_document(scripted, doc, "text", DecodeConfig(), QUIET)
    assert out == "CAT. A DOG. A\n\nCAT. A COW. A\n"
    assert len(scripted.calls) == 1 and sorted(scripted.calls[0]) == ["A cat.", "A cow.", "A dog."]


def test_text_without_letters_is_kept_as_it_is(scripted):
    out, _ = translate_document(scripted, "1.\n\nA dog.\n", "text", DecodeConfig(), QUIET)
    assert out == "1.\n\nDOG. A\n"
