"""Scores: sacreBLEU's BLEU and chrF, and the length ratio that shows a search too short or long."""

import pytest

from aiayn.evaluate import score


def test_length_ratio_is_hypothesis_over_reference_length():
    scores = score(["the cat sat"], [["the cat sat on the mat"]])
    assert scores.length_ratio == pytest.approx(3 / 6)
    assert "length ratio 0.500" in str(scores)


def test_length_ratio_uses_the_closest_reference_when_there_are_several():
    scores = score(["the cat sat"], [["the cat sat on the mat"], ["a cat sat"]])
    assert scores.length_ratio == pytest.approx(1.0)


def test_references_must_match_the_hypotheses():
    with pytest.raises(ValueError, match="reference set 1 has 2 lines for 1 hypotheses"):
        score(["a"], [["a", "b"]])
