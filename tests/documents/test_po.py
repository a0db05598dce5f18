"""gettext catalogues (documents/po.py): untranslated entries only, plural forms by the
header, placeholders and accelerators kept, entries marked fuzzy, the rest untouched."""

import re

import polib
import pytest

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.po import PLACEHOLDER, Accelerator, render, translated
from aiayn.engines.copy import CopyTranslator
from tests.documents.conftest import WordTokenizer
from tests.documents.localisation_samples import PO

QUIET = DocumentOptions(progress=False)


def run(translator, text: str, options: DocumentOptions = QUIET) -> polib.POFile:
    out, _ = translate_document(translator, text, "po", DecodeConfig(), options)
    return polib.pofile(out)


def forms(entry: polib.POEntry) -> list[str]:
    return [entry.msgstr] if not entry.msgid_plural else list(entry.msgstr_plural.values())


def test_a_copy_comes_back_as_the_catalogue_with_its_entries_marked_fuzzy():
    before, after = polib.pofile(PO), run(CopyTranslator(WordTokenizer()), PO)
    assert after.header == before.header and after.metadata == before.metadata
    assert len(after) == len(before)
    assert [e.msgid for e in after] == [e.msgid for e in before]
    empty = {e.msgid for e in before if not e.obsolete and not translated(e)}
    assert len(empty) == 6
    for old, new in zip(before, after, strict=True):
        assert (new.msgctxt, new.occurrences, new.comment, new.obsolete) == (
            old.msgctxt,
            old.occurrences,
            old.comment,
            old.obsolete,
        )
        if old.msgid in empty:
            assert new.flags == ["fuzzy", *old.flags]
            wanted = [old.msgid] if not old.msgid_plural else [old.msgid] + [old.msgid_plural] * 2
            assert forms(new) == wanted  # nplurals=3: [0] from msgid, [1] and [2] from the plural
        else:  # already translated, fuzzy or not, and obsolete: as they were
            assert (new.flags, forms(new)) == (old.flags, forms(old))


def test_placeholders_and_accelerators_survive_a_reordering(scripted):
    after = run(scripted, PO)
    for entry in after:
        if "fuzzy" not in entry.flags or entry.msgid == "A fuzzy one":
            continue
        for source, found in zip([entry.msgid, entry.msgid_plural], forms(entry), strict=False):
            assert sorted(PLACEHOLDER.findall(found)) == sorted(PLACEHOLDER.findall(source))
            for marker in "_&~":
                assert found.count(marker) == source.count(marker), (source, found)
    asked = {line for call in scripted.calls for line in call}
    assert not any(re.search(r"%|\{|\$\[|<|_F|&x", line) for line in asked)  # none reached it
    assert "File" in asked and "Exit the program" in asked


def test_one_plural_form_takes_msgid_plural():
    one = PO.replace("nplurals=3; plural=(n==1 ? 0 : n==2 ? 1 : 2);", "nplurals=1; plural=0;")
    entry = next(e for e in run(CopyTranslator(WordTokenizer()), one) if e.msgid_plural)
    assert entry.msgstr_plural == {0: "Deleted %d files in %s."}


def test_retranslate_translates_every_entry_but_the_obsolete(scripted):
    options = DocumentOptions(progress=False, retranslate=True)
    after = run(scripted, PO, options)
    done = next(e for e in after if e.msgid == "Already done")
    assert done.msgstr == "DONE ALREADY" and "fuzzy" in done.flags
    assert next(e for e in after if e.obsolete).msgstr == ""


def test_an_accelerator_goes_to_the_same_letter_else_the_first_and_is_dropped_without_one():
    skipped = [0]
    key = Accelerator("&", "x")
    assert render([(key, None), "Exit"], skipped) == "E&xit"
    assert render([(key, None), "Beenden"], skipped) == "&Beenden"
    assert render(["Beenden", " ", (key, None)], skipped) == "&Beenden"  # the word before
    assert render([(key, None), "42"], skipped) == "42" and skipped == [1]


def test_a_damaged_catalogue_is_an_error_naming_its_line():
    damaged = PO.replace('msgid "_File"', 'msgid "_File')  # polib alone would drop the entry
    line = PO.splitlines().index('msgid "_File"') + 1
    with pytest.raises(ValueError, match=rf"x.po: line {line}: .*a quote missing.*msgfmt"):
        translate_document(
            CopyTranslator(WordTokenizer()),
            damaged,
            "po",
            DecodeConfig(),
            DocumentOptions(progress=False, name="x.po"),
        )
