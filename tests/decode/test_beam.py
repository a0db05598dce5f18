"""Beam search against hand-computed hypotheses on a model with scripted probabilities."""

import math

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search, length_penalty
from aiayn.decode.greedy import greedy_decode
from tests.decode.scripted import EOS, A, B, ScriptedModel

SRC = torch.tensor([[A, A, A, EOS]])  # only its length matters (the limit: 4 + 50)


def search(**options):
    return beam_search(ScriptedModel(), SRC, DecodeConfig(**options))[0]


def test_hand_computed_without_length_penalty():
    # step 1: a .6, b .4; step 2: b.eos .36 (finished), a.a .27, a.b .18, a.eos .15 (rank 3 of
    # 2K = 4: not among the K best, so not finished); step 3: a.a.eos .27 finishes -> 2 done.
    hyps = search(beam=2, length_penalty="none", nbest=2)
    assert [h.tokens for h in hyps] == [[B], [A, A]]
    assert hyps[0].score == pytest.approx(math.log(0.4 * 0.9))
    assert hyps[1].score == pytest.approx(math.log(0.6 * 0.45))


def test_hand_computed_with_the_papers_length_penalty():
    hyps = search(beam=2, length_penalty="gnmt", alpha=0.6, nbest=2)
    # lp = ((5 + |Y|) / 6)^0.6 with |Y| counting eos: 2 for "b", 3 for "a a"
    assert [h.tokens for h in hyps] == [[B], [A, A]]
    assert hyps[0].score == pytest.approx(math.log(0.36) / (7 / 6) ** 0.6)
    assert hyps[1].score == pytest.approx(math.log(0.27) / (8 / 6) ** 0.6)
    assert hyps[0].log_prob == pytest.approx(math.log(0.36))


def test_the_power_penalty_prefers_longer_outputs_here():
    hyps = search(beam=2, length_penalty="power", alpha=1.0, nbest=2)
    # log(.27) / 3 = -0.436 beats log(.36) / 2 = -0.511
    assert [h.tokens for h in hyps] == [[A, A], [B]]
    assert hyps[0].score == pytest.approx(math.log(0.27) / 3)


def test_length_penalty_forms():
    assert length_penalty(3, 0.6, "gnmt") == pytest.approx((8 / 6) ** 0.6)
    assert length_penalty(3, 0.6, "power") == pytest.approx(3**0.6)
    assert length_penalty(3, 0.6, "none") == 1.0
    with pytest.raises(ValueError, match="unknown length penalty"):
        length_penalty(3, 0.6, "log")


def test_beam_one_is_greedy():
    hyps = search(beam=1, length_penalty="none")
    assert [h.tokens for h in hyps] == greedy_decode(ScriptedModel(), SRC) == [[A, A]]


def test_nbest_lists_are_sorted_and_bounded():
    hyps = search(beam=3, nbest=3)
    assert len(hyps) == 3
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    assert len(search(beam=3, nbest=1)) == 1


@pytest.mark.parametrize(("a", "b"), [(0.0, 2), (0.0, 1), (0.5, 0)])
def test_the_length_rule(a, b):
    """At most a * source length + b output tokens, eos included."""
    limit = int(a * 4 + b)
    for beam in (1, 2, 3):
        hyps = search(beam=beam, nbest=beam, max_len_a=a, max_len_b=b)
        assert hyps and all(len(h.tokens) + 1 <= limit for h in hyps)
    greedy = greedy_decode(ScriptedModel(), SRC, DecodeConfig(max_len_a=a, max_len_b=b))
    assert len(greedy[0]) + 1 <= limit


def test_minimum_length_holds_eos_back(monkeypatch):
    import tests.decode.scripted as this

    monkeypatch.setattr(this, "SCRIPT", {(): {EOS: 0.7, A: 0.3}, (A,): {EOS: 0.8, B: 0.2}})
    assert greedy_decode(ScriptedModel(), SRC) == [[]]
    assert greedy_decode(ScriptedModel(), SRC, DecodeConfig(min_len=1)) == [[A]]
    assert greedy_decode(ScriptedModel(), SRC, DecodeConfig(min_len=2)) == [[A, B]]
    assert [h.tokens for h in search(beam=2, nbest=2, length_penalty="none")] == [[], [A]]
    assert [h.tokens for h in search(beam=2, nbest=1, min_len=2)] == [[A, B]]


def test_a_zero_limit_still_ends_every_sentence():
    assert search(beam=2, max_len_a=0.0, max_len_b=0)[0].tokens == []
    assert greedy_decode(ScriptedModel(), SRC, DecodeConfig(max_len_a=0.0, max_len_b=0)) == [[]]
