"""Term-aware training (data/term_tags.py, `prepare --terms`) and translation with a term-aware
model: terms written inline where the target uses them in any form, the tags single input-only
pieces, and at translation an `inflect` term given inline instead of constrained."""

import re

import pytest
import torch

from aiayn import Controls, DecodeConfig, open_translator
from aiayn.data.glossary import Glossary, Term, in_some_form, word_forms
from aiayn.data.lemmas import Lemmas
from aiayn.data.term_tags import TERM_TAGS, TermAnnotator, annotated, with_terms
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.controls.words import sentence_controls
from aiayn.decode.translate import term_annotated, terms_missed
from tests.conftest import tiny_model
from tests.data.conftest import prepared_tsv, synthetic_pairs, write_tsv

# Inflected uses: the termbase holds the lemma, the targets the plural
INFLECTED = [
    ("The houses are old.", "Die Häuser sind alt."),
    ("A dog sees houses.", "Ein Hund sieht Häuser."),
]


def termbase(path, *rows: str):
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_matches_keep_the_first_and_longest_of_overlapping_terms():
    g = Glossary.of([("old man", "Greis"), ("man", "Mann"), ("old", "alt")])
    line = "The old man and the man."
    found = [(line[s:e], t.target) for s, e, t in g.matches(line)]
    assert found == [("old man", "Greis"), ("man", "Mann")]
    assert (
        annotated(line, g.matches(line))
        == "The <t> old man <t=> Greis </t> and the <t> man <t=> Mann </t>."
    )


def test_a_term_is_annotated_where_the_target_uses_it_in_any_form():
    g = Glossary.of([("houses", "Haus"), ("dog", "Hund"), ("cat", "Katze")])
    annotate = TermAnnotator(g, Lemmas("de"))
    assert annotate(*INFLECTED[0]) == "The <t> houses <t=> Haus </t> are old."
    # "cat" is not in the target: no annotation for it (the model would learn to ignore terms)
    assert annotate("A cat sees houses.", "Eine Maus sieht Häuser.") == (
        "A cat sees <t> houses <t=> Haus </t>."
    )
    assert (annotate.pairs, annotate.terms) == (2, 2)


def test_the_third_column_says_exact_or_inflect(tmp_path):
    g = Glossary.load(
        termbase(tmp_path / "t.tsv", "dog\tHund", "house\tHaus\tinflect", "cat\tKatze\tEXACT")
    )
    assert [t.exact for t in g.terms] == [True, False, True]
    assert [t.exact for t in Glossary.of([("a", "b", "inflect"), ("c", "d")]).terms] == [
        False,
        True,
    ]


@pytest.fixture(scope="module")
def term_data(tmp_path_factory):
    """A prepared corpus with a termbase: two terms, one of them used inflected."""
    tmp = tmp_path_factory.mktemp("terms")
    pairs = synthetic_pairs(300, seed=5) + INFLECTED * 10
    corpus = write_tsv(tmp / "corpus.tsv", pairs)
    terms = termbase(tmp / "terms.tsv", "dog\tHund", "houses\tHaus\tinflect")
    return prepared_tsv(corpus, tmp / "data", terms=terms)


def test_prepare_terms_annotates_training_sources_only(term_data):
    train = (term_data / "train.src.txt").read_text(encoding="utf-8").splitlines()
    tgt = (term_data / "train.tgt.txt").read_text(encoding="utf-8").splitlines()
    with_dog = [s for s, t in zip(train, tgt, strict=True) if "Hund" in t]
    assert with_dog and all(re.search("<t> [Dd]og <t=> Hund </t>", s) for s in with_dog)
    assert any("<t> houses <t=> Haus </t>" in s for s in train)  # the target says "Häuser"
    for split in ("valid", "test"):
        assert "<t>" not in (term_data / f"{split}.src.txt").read_text(encoding="utf-8")
    report = (term_data / "report.txt").read_text(encoding="utf-8")
    assert "training sources annotated" in report and "terms.tsv (2 terms" in report


@pytest.fixture(scope="module")
def plain_data(tmp_path_factory):
    """A corpus prepared without --terms: its vocabulary has no tags."""
    tmp = tmp_path_factory.mktemp("no-terms")
    return prepared_tsv(write_tsv(tmp / "corpus.tsv", synthetic_pairs(200, seed=6)), tmp / "data")


def test_the_tags_are_single_input_only_pieces(term_data, plain_data):
    tok = Tokenizer(term_data)
    assert tok.term_aware
    ids = tok.encode(["See the <t> dog <t=> Hund </t> now."])[0]
    assert all(i != tok.unk_id for i in tok.piece_ids(list(TERM_TAGS)))
    assert set(tok.piece_ids(list(TERM_TAGS))) <= set(ids)
    assert "<t" not in tok.decode([ids])[0] and "</t>" not in tok.join(tok.pieces(ids))
    assert not Tokenizer(plain_data).term_aware


def test_a_term_aware_model_reads_terms_inline_and_constrains_exact_ones_only(
    term_data, plain_data
):
    tok = Tokenizer(term_data)
    g = Glossary.of([("dog", "Hund"), ("houses", "Haus", "inflect")])
    lines = ["The dog sees houses.", "A cat."]
    controls = Controls(glossary=g)
    assert term_annotated(controls, tok, lines) == [
        "The <t> dog <t=> Hund </t> sees <t> houses <t=> Haus </t>.",
        "A cat.",
    ]
    assert with_terms("A cat.", g) == "A cat."
    steer = sentence_controls(controls, tok, lines, DecodeConfig())
    (dog,) = tok.encode(["Hund"])
    assert steer[0] is not None and steer[0].terms == (tuple(dog),)  # "Haus" is not forced
    # A model without the tags: the line as it is, every term constrained
    plain = Tokenizer(plain_data)
    assert term_annotated(controls, plain, lines) == lines
    assert len(sentence_controls(controls, plain, lines, DecodeConfig())[0].terms) == 2


@pytest.fixture(scope="module")
@torch.no_grad()
def term_aware_model(term_data, tmp_path_factory):
    """A term-aware model (random weights, scrambled to say something)."""
    out = tmp_path_factory.mktemp("term-model") / "model"
    model = tiny_model(seed=2, d_model=64, vocab_size=Tokenizer(term_data).vocab_size)
    for weight in model.parameters():
        weight.add_(torch.randn_like(weight) * 0.5)
    model.save(out)
    (out / "spm.model").write_bytes((term_data / "spm.model").read_bytes())
    return out


def test_translate_with_a_term_aware_model_shows_no_tag(term_aware_model):
    """Whatever a term-aware model writes, the tags never reach the output."""
    translator = open_translator(term_aware_model)
    g = Glossary.of([("dog", "Hund", "inflect"), ("houses", "Haus")])
    lines = ["The dog sees houses.", "A big old dog."]
    found = translator.nbest(lines, DecodeConfig(beam=2, max_len_b=12), Controls(glossary=g))
    for hyps, line in zip(found, lines, strict=True):
        assert "<t" not in hyps[0].text and "</t>" not in hyps[0].text
        if "houses" in line:  # the exact term is kept as written
            assert "Haus" in hyps[0].text
    plain = translator.translate(lines, DecodeConfig(beam=1, max_len_b=12))
    assert len(plain) == 2 and not any("<t" in x for x in plain)  # no glossary: as ever


@pytest.mark.parametrize(
    ("term", "text", "used"),
    [
        ("Datei", "Öffnen Sie die Dateien.", True),
        ("Ordner", "Der Inhalt des Ordners", True),
        ("Haus", "Die HÄUSER sind alt.", True),  # case and diacritics ignored
        ("rote Datei", "die roten Dateien", True),
        ("rote Datei", "die Dateien sind rot", False),  # the words in a row, in order
        ("Datei", "Der Hund", False),
        ("Datei", "Dateiverwaltungsprogramm", False),  # more than LONGER_BY letters longer
        ("Tabelle", "Tab", False),
        ("Datei", "", False),
    ],
)
def test_a_term_is_in_some_form_by_the_shape_of_its_words(term, text, used):
    assert in_some_form(term, word_forms(text)) is used


def test_the_lines_that_missed_an_inflect_term_are_found(term_data, plain_data):
    dog, houses = Term("dog", "Hund", "t", exact=False), Term("houses", "Haus", "t")
    controls = Controls(glossary=Glossary((dog, houses)))
    lines = ["The dog sees houses.", "A dog.", "A cat.", "Dogs and a dog."]
    outputs = ["Die Hunde sehen Tiere.", "Ein Tier.", "Eine Katze.", "Hunde und ein Hund."]
    cfg = DecodeConfig()
    # houses -> Haus is exact (constrained in any case); "Hunde" is a form of "Hund"
    assert terms_missed(controls, Tokenizer(term_data), lines, outputs, cfg) == {
        1: frozenset({dog})
    }
    assert terms_missed(controls, Tokenizer(plain_data), lines, outputs, cfg) == {}
    assert (
        terms_missed(
            controls, Tokenizer(term_data), lines, outputs, cfg.replace(max_input_tokens=2)
        )
        == {}
    )  # searched cut: the cut line is not searched again
    insisted = sentence_controls(
        controls, Tokenizer(term_data), lines[1:2], cfg, [frozenset({dog})]
    )
    assert insisted[0] is not None and insisted[0].terms == tuple(
        map(tuple, Tokenizer(term_data).encode(["Hund"]))
    )


def test_an_inflect_term_the_model_left_out_is_searched_again_as_written(term_aware_model):
    """The random model writes no form of "Hund" by itself: the lines with "dog" are searched
    again with it held as written; the other line, and each line's prefix, are as they were."""
    translator = open_translator(term_aware_model)
    g = Glossary.of([("dog", "Hund", "inflect")])
    lines = ["The dog sees houses.", "A big old dog.", "A cat sees a house."]
    cfg = DecodeConfig(beam=2, max_len_b=12)
    prefixes = ("", "Ein", "")
    annotated = translator.translate(
        term_annotated(Controls(glossary=g), translator.tokenizer, lines), cfg
    )
    # the test means something
    assert not any(in_some_form("Hund", word_forms(x)) for x in annotated[:2])
    found = translator.translate(lines, cfg, Controls(glossary=g, target_prefix=prefixes))
    assert all(in_some_form("Hund", word_forms(x)) for x in found[:2])
    assert found[1].startswith("Ein")
    alone = translator.translate(lines[2:], cfg, Controls(glossary=g, target_prefix=prefixes[2:]))
    assert found[2] == alone[0]
    best = translator.nbest(lines, cfg.replace(nbest=2), Controls(glossary=g))
    assert all(in_some_form("Hund", word_forms(n[0].text)) for n in best[:2])
