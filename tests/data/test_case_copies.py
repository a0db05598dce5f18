"""`prepare --case-copies P`: the vocabulary also learns from upper- or title-cased copies of a
share of the lines, so that text in capitals is cut into fewer pieces; reproducibly; at 0 the
vocabulary is the one learned without the option."""

from __future__ import annotations

import json

import pytest

from aiayn.data.casing import upper_case
from aiayn.data.tokenizer import UNK_ID, Tokenizer
from tests.data.conftest import prepared_tsv as prepared
from tests.data.conftest import synthetic_pairs, write_tsv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_tsv(tmp_path_factory.mktemp("case-copies") / "c.tsv", synthetic_pairs(600))


def pieces_and_unknown(data, lines):
    ids = Tokenizer(data / "spm.model").encode(lines)
    return sum(map(len, ids)), sum(row.count(UNK_ID) for row in ids)


def vocab(data):
    """The pieces and their scores (the model file also holds the paths it was learned from)."""
    return (data / "spm.vocab").read_text(encoding="utf-8")


def test_cased_copies_cut_capitals_into_fewer_pieces(corpus, tmp_path):
    plain = prepared(corpus, tmp_path / "plain")
    cased = prepared(corpus, tmp_path / "cased", case_copies=0.3)
    sources = (plain / "test.src.txt").read_text(encoding="utf-8").splitlines()
    upper = [upper_case(line) for line in sources]
    plain_pieces, plain_unknown = pieces_and_unknown(plain, upper)
    cased_pieces, cased_unknown = pieces_and_unknown(cased, upper)
    assert cased_unknown == 0 and cased_pieces < 0.8 * plain_pieces, (plain_pieces, cased_pieces)
    assert plain_unknown > 0  # letters the corpus never has in capitals: no piece for them
    report = json.loads((cased / "report.json").read_text(encoding="utf-8"))
    assert report["vocabulary"]["case_copies"] == 0.3
    assert "cased copies of 30% of its lines" in (cased / "report.txt").read_text()


def test_the_copies_are_drawn_from_the_seed_and_zero_changes_nothing(corpus, tmp_path):
    once = prepared(corpus, tmp_path / "a", case_copies=0.3)
    again = prepared(corpus, tmp_path / "b", case_copies=0.3)
    other_seed = prepared(corpus, tmp_path / "c", case_copies=0.3, seed=2)
    assert vocab(once) == vocab(again)
    assert vocab(once) != vocab(other_seed)
    zero = prepared(corpus, tmp_path / "zero", case_copies=0.0)
    default = prepared(corpus, tmp_path / "default")
    assert vocab(zero) == vocab(default)
