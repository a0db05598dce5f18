"""Protected spans: found by kind, taken out of the sentence, put back verbatim at their aligned
places in every path (documents, line mode), and a placeholder a model lost or doubled repaired
and counted."""

import re

import pytest

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.inline import Span, Tagged, source_nodes, text_of
from aiayn.documents.lines import LineTranslator
from aiayn.documents.protect import (
    Protected,
    Protector,
    repair_placeholders,
    repair_warning,
    restore,
)

QUIET = DocumentOptions(progress=False)
KINDS = [
    "/text/sbasic/shared/01050200.xhp",
    "C:\\Program Files\\x",
    "config.json",
    "docs/guide.md",
    "https://example.org/a?b=1",
    "www.example.org",
    "help@example.org",
    "OutputFileExtension",
    "snake_case",
    "os.path.join()",
    "dotted.names()",
    "3.14",
    "v2.0.1",
    "1,000",
    "%s",
    "%1$s",
    "%(name)s",
    "%d",
    "{name}",
    "{0}",
    "${var}",
    "$[officename]",
]


@pytest.mark.parametrize("span", KINDS)
def test_each_kind_is_found_whole(span):
    text = f"Then {span} is used here."
    (found,) = Protector().spans(text)
    assert text[found[0] : found[1]] == span


@pytest.mark.parametrize(
    "text", ["and/or the end.", "We meet e.g. today.", "I saw 3 cats, OK?", "50% sure, 9% done"]
)
def test_ordinary_words_are_not_protected(text):
    assert Protector().spans(text) == []


def test_a_sentence_written_back_untranslated_is_byte_identical():
    protector = Protector()
    for text in [
        "Open /a/b.xhp to see it.",
        "Edit config.json, then run C:\\Program Files\\x now",
        "See (https://x.org/a) and my_var.",
        "config.json",
    ]:
        reduced = protector.tagged(Tagged(text))
        assert not any(k in reduced.text for k in ("/a/b", "config", "x.org", "my_var"))
        assert text_of(restore(source_nodes(reduced))) == text


def test_a_span_across_a_tag_edge_is_left_alone_and_one_inside_a_tag_goes_inside_it():
    text = "Read the config.json file now"
    bold = Span(9, 21, "b")  # <b>config.json </b>
    assert Protector().tagged(Tagged(text, (Span(4, 14, "b"),))).text == text
    inside = Protector().tagged(Tagged(text, (bold,)))
    (tag,) = inside.spans
    assert tag.payload == "b" and [c.payload.text for c in tag.children] == ["config.json"]


def test_documents_put_each_span_back_at_its_aligned_place(scripted):
    # reversed words, attention says so: the path goes before the word "to" became
    out, _ = translate_document(scripted, "Open /a/b.xhp to see.\n", "text", DecodeConfig(), QUIET)
    assert out == "SEE. /a/b.xhp TO OPEN\n"
    # searched as it is first ("/A/B.XHP" came back changed), then with the span taken out
    assert scripted.calls == [["Open /a/b.xhp to see."], ["Open  to see."]]


def test_a_document_sentence_whose_spans_the_model_carried_is_searched_once(scripted):
    options = DocumentOptions(progress=False, protect=Protector(("TKT-\\d+",)))
    text = "See TKT-42 today.\n\nOpen it.\n"
    out, _ = translate_document(scripted, text, "text", DecodeConfig(), options)
    assert out == "TODAY. TKT-42 SEE\n\nIT. OPEN\n"
    assert [sorted(call) for call in scripted.calls] == [["Open it.", "See TKT-42 today."]]


def test_punctuation_the_span_touched_touches_it_again(scripted):
    out, _ = translate_document(
        scripted, "Run it (config.json) now.\n", "text", DecodeConfig(), QUIET
    )
    # reversed: "NOW. ) ( IT RUN"; the span before ")" touches it, not "." before it
    assert out == "NOW. config.json) ( IT RUN\n"


def test_no_protect_sends_the_spans_to_the_model(scripted):
    options = DocumentOptions(progress=False, protect=None)
    out, _ = translate_document(
        scripted, "Open /a/b.xhp to see.\n", "text", DecodeConfig(), options
    )
    assert out == "SEE. TO /A/B.XHP OPEN\n"


def test_line_mode_keeps_spans_and_leaves_plain_lines_to_the_engine(scripted):
    lines = LineTranslator(scripted, Protector())
    out = lines.translate(["A dog sleeps.", "Print %s for {name} now."], DecodeConfig())
    assert out[0] == "SLEEPS. DOG A"
    assert sorted(re.findall(r"%s|\{name\}", out[1])) == ["%s", "{name}"]
    assert "NOW." in out[1] and "PRINT" in out[1]
    # searched as they are first; the line whose spans came back changed ("%S", "{NAME}")
    # is searched again without them, and only it
    assert scripted.calls == [["A dog sleeps.", "Print %s for {name} now."], ["Print  for  now."]]


def test_spans_the_model_carried_are_not_searched_again(scripted):
    lines = LineTranslator(scripted, Protector(("TKT-\\d+",)))
    (out,) = lines.translate(["See TKT-42 today."], DecodeConfig())
    assert out == "TODAY. TKT-42 SEE"  # upper case leaves "TKT-42" as it was
    assert scripted.calls == [["See TKT-42 today."]]


def test_a_users_pattern_is_protected_too(scripted):
    lines = LineTranslator(scripted, Protector(("tkt-\\d+",)))
    (out,) = lines.translate(["See tkt-42 today."], DecodeConfig())
    assert "tkt-42" in out and "tkt-42" not in scripted.calls[-1][0]


def test_a_lost_placeholder_is_put_back_at_its_aligned_place_and_counted():
    found = repair_placeholders("Er öffnet heute", ["config.json", "%s"], [3, 1])
    assert found.text == "Er %s öffnet heute config.json"
    assert (found.lost, found.doubled) == (2, 0)


def test_a_doubled_placeholder_is_kept_once_and_counted():
    found = repair_placeholders("⟨p0⟩ öffnet ⟨p0⟩ ⟨p1⟩", ["config.json", "%s"], [0, 1])
    assert found.text == "config.json öffnet %s"
    assert (found.lost, found.doubled) == (0, 1)


def test_repairs_are_said_in_a_warning():
    assert "2 placeholder(s) lost" in repair_warning("in.txt", lost=2, doubled=1)
    assert "1 doubled" in repair_warning("in.txt", lost=2, doubled=1)
    assert repair_warning("in.txt", 0, 0) == ""


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [(("TKT-(",), "--protect 'TKT-(': not a regular expression"), (("x*",), "empty string")],
)
def test_a_bad_pattern_is_named(patterns, expected):
    with pytest.raises(ValueError, match=re.escape(expected)):
        Protector(patterns)


def test_a_bad_line_of_a_protect_file_is_named(tmp_path):
    path = tmp_path / "patterns.txt"
    path.write_text("# tickets\nTKT-\\d+\n\n[unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"patterns.txt, line 4: '\[unclosed'"):
        Protector.load(files=(path,))
    path.write_text("# tickets\nTKT-\\d+\n", encoding="utf-8")
    assert len(Protector.load(files=(path,), builtin=False).patterns) == 1


def test_the_payload_says_what_it_touched():
    (span,) = Protector().tagged(Tagged("x (config.json) y")).spans
    assert span.payload == Protected("config.json", "(", ")")


def test_the_command_line_keeps_spans_in_line_mode_and_markdown(talking_model, tmp_path):
    from aiayn.cli import main

    spans = ("/text/sbasic/shared/01050200.xhp", "OutputFileExtension", "TKT-42", "%1$s")
    text = "Set OutputFileExtension in /text/sbasic/shared/01050200.xhp for TKT-42 and %1$s now.\n"
    for fmt, name in (("lines", "in.txt"), ("markdown", "in.md")):
        (tmp_path / name).write_text(text, encoding="utf-8")
        argv = ["translate", "--model", str(talking_model), "--input", str(tmp_path / name)]
        out = tmp_path / f"out-{name}"
        flags = ["--format", fmt, "--protect", "TKT-\\d+", "--beam", "2", "--max-len-b", "8"]
        assert main([*argv, *flags, "--output", str(out), "--no-progress"]) == 0
        assert all(s in out.read_text(encoding="utf-8") for s in spans), fmt
    assert main([*argv, "--no-protect", "--output", str(out), "--beam", "2"]) == 0
    assert "OutputFileExtension" not in out.read_text(encoding="utf-8")
