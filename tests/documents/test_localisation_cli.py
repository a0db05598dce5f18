"""`aiayn translate --format po|xliff|srt` and `--dry-run` end to end: a copy gives the input
back (byte for byte, or entry for entry where the writer reflows), the tiny model keeps every
entry, placeholder, inline id and timing."""

from pathlib import Path

import polib
import pytest
import srt as subrip

from aiayn.documents.po import PLACEHOLDER
from aiayn.documents.skeleton import html_skeleton, markdown_skeleton
from tests.documents.localisation_samples import PO, SRT, XLIFF_12, XLIFF_20
from tests.documents.test_cli import ROOT, translate
from tests.documents.test_html import PAGE
from tests.documents.test_xliff import ids, inner, pairs

DRY = ("--dry-run", "--no-progress")


def test_dry_run_gives_text_subtitles_and_lines_back_byte_for_byte(talking_model, tmp_path):
    text = "The dog sees a cat. A cat runs.\n\n\n  The bird sings.\n"
    assert translate(talking_model, tmp_path, "a.txt", text, "--format", "text", *DRY) == text
    assert translate(talking_model, tmp_path, "a.srt", SRT, "--format", "srt", *DRY) == SRT
    lines = "One line.\n\nAnother one here.\n"
    assert translate(talking_model, tmp_path, "l.txt", lines, *DRY) == lines


def test_dry_run_keeps_markdown_and_html_structure(talking_model, tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = translate(talking_model, tmp_path, "README.md", readme, "--format", "markdown", *DRY)
    assert markdown_skeleton(out) == markdown_skeleton(readme)
    out = translate(talking_model, tmp_path, "page.html", PAGE, "--format", "html", *DRY)
    assert html_skeleton(out) == html_skeleton(PAGE)


def test_dry_run_fills_po_and_xliff_with_their_sources(talking_model, tmp_path):
    out = polib.pofile(translate(talking_model, tmp_path, "m.po", PO, "--format", "po", *DRY))
    fuzzy = [e for e in out if e.flags[:1] == ["fuzzy"] and e.msgid != "A fuzzy one"]
    assert len(fuzzy) == 6 and len(out) == len(polib.pofile(PO))
    for e in fuzzy:
        found = [e.msgstr] if not e.msgid_plural else list(e.msgstr_plural.values())
        assert found[0] == e.msgid and found[1:] == [e.msgid_plural] * len(found[1:])
    for name, document in (("a.xlf", XLIFF_12), ("b.xliff", XLIFF_20)):
        out = translate(talking_model, tmp_path, name, document, "--format", "xliff", *DRY)
        made = [(s, t) for s, t in pairs(out) if t is not None and t.get("state") != "final"]
        assert len(made) == 2 and all(inner(s) == inner(t) for s, t in made)


def test_the_tiny_model_keeps_every_entry_placeholder_id_and_timing(talking_model, tmp_path):
    out = polib.pofile(translate(talking_model, tmp_path, "m.po", PO, "--format", "po"))
    before = polib.pofile(PO)
    assert [e.msgid for e in out] == [e.msgid for e in before]
    for old, new in zip(before, out, strict=True):
        assert set(old.flags) <= set(new.flags)
        if new.flags[:1] == ["fuzzy"] and "fuzzy" not in old.flags and new.msgstr:
            assert sorted(PLACEHOLDER.findall(new.msgstr)) == sorted(PLACEHOLDER.findall(old.msgid))
    for name, document in (("a.xlf", XLIFF_12), ("b.xliff", XLIFF_20)):
        out = translate(talking_model, tmp_path, name, document, "--format", "xliff")
        for source, target in pairs(out):
            if target is not None:
                assert ids(target) == ids(source)
    old, new = (
        subrip.parse(SRT),
        subrip.parse(translate(talking_model, tmp_path, "s.srt", SRT, "--format", "srt")),
    )
    for a, b in zip(old, new, strict=True):
        assert (a.index, a.start, a.end) == (b.index, b.start, b.end)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--dry-run", "--nbest", "2"), "--dry-run copies each sentence once"),
        (("--format", "html", "--retranslate"), "--retranslate is for --format po or xliff"),
        (("--dry-run", "--suppress", "cat"), "cannot follow --target-prefix, --glossary"),
    ],
)
def test_misuse_is_refused(talking_model, tmp_path: Path, capsys, flags, message):
    (tmp_path / "a.txt").write_text("A cat.\n", encoding="utf-8")
    from aiayn.cli import main

    argv = ["translate", "--model", str(talking_model), "--input", str(tmp_path / "a.txt")]
    assert main([*argv, *flags]) != 0
    assert message in capsys.readouterr().err
