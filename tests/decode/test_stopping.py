"""The two stopping rules of beam search, on a model with scripted probabilities.

"bound" (the paper's) stops once no live hypothesis can beat the n-th best finished one under the
length penalty; "k-finished" (fairseq's) stops once K hypotheses have finished, which can end the
search before a longer, better hypothesis is found.
"""

import math

import pytest

import tests.decode.scripted as scripted
from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search
from aiayn.decode.greedy import greedy_decode
from tests.decode.scripted import EOS, A, B, ScriptedModel
from tests.decode.test_beam import SRC

# "a a a" is the best translation under |Y|^1 (log .2835 / 4 = -0.315), but "b" and "" end
# early: after step 2 two hypotheses have finished ("b" -0.746, "" -0.916).
SCRIPT = {
    (): {EOS: 0.40, A: 0.35, B: 0.25},
    (A,): {A: 0.90, EOS: 0.05, B: 0.05},
    (B,): {EOS: 0.90, B: 0.10},
    (A, A): {A: 0.90, EOS: 0.10},
}  # anything else: eos


class CountingModel(ScriptedModel):
    """Counts decoder steps, to show where the search stopped."""

    def __init__(self) -> None:
        self.steps = 0

    def decode(self, tgt, *, cache):
        self.steps += 1
        return super().decode(tgt, cache=cache)


@pytest.fixture(autouse=True)
def script(monkeypatch):
    monkeypatch.setattr(scripted, "SCRIPT", SCRIPT)


def search(model=None, **options):
    return beam_search(model or ScriptedModel(), SRC, DecodeConfig(beam=2, **options))[0]


def test_the_papers_rule_finds_the_longer_better_translation():
    bound = search(stop="bound", length_penalty="power", alpha=1.0, nbest=2)
    assert [h.tokens for h in bound] == [[A, A, A], [B]]
    assert bound[0].score == pytest.approx(math.log(0.35 * 0.9 * 0.9) / 4)
    assert bound[1].score == pytest.approx(math.log(0.25 * 0.9) / 2)


def test_stopping_at_k_finished_keeps_the_short_one():
    first_k = search(stop="k-finished", length_penalty="power", alpha=1.0, nbest=2)
    assert [h.tokens for h in first_k] == [[B], []]
    assert first_k[0].score == pytest.approx(math.log(0.25 * 0.9) / 2)


def test_without_a_penalty_the_bound_stops_as_soon_as_nothing_can_win():
    # After step 1 "" has log P log .4; every live hypothesis is already below it, and log P
    # only falls: the search ends after one step, where k-finished needs a second.
    bound, first_k = CountingModel(), CountingModel()
    assert [h.tokens for h in search(bound, stop="bound", length_penalty="none")] == [[]]
    assert [h.tokens for h in search(first_k, stop="k-finished", length_penalty="none")] == [[]]
    assert (bound.steps, first_k.steps) == (1, 2)


def test_the_bound_serves_the_nth_best_for_nbest():
    # The second best needs "a a a" (log .2835), which k-finished never reaches: it stops with
    # "b" (log .225) in second place.
    bound = search(stop="bound", length_penalty="none", nbest=2)
    first_k = search(stop="k-finished", length_penalty="none", nbest=2)
    assert [h.tokens for h in bound] == [[], [A, A, A]]
    assert [h.tokens for h in first_k] == [[], [B]]


def test_the_bound_never_stops_while_a_live_hypothesis_can_still_win():
    """Against exhaustive search over the script: with a beam wide enough to keep every live
    hypothesis, the bound rule returns the true best under each length penalty."""
    for penalty, alpha in (("none", 0.0), ("power", 1.0), ("gnmt", 0.6), ("gnmt", 2.0)):
        hyp = beam_search(
            ScriptedModel(), SRC, DecodeConfig(beam=6, length_penalty=penalty, alpha=alpha)
        )[0][0]
        assert hyp.tokens == exhaustive_best(penalty, alpha), (penalty, alpha)


def exhaustive_best(penalty: str, alpha: float) -> list[int]:
    from aiayn.decode.beam import length_penalty

    best, best_score, todo = None, -math.inf, [((), 0.0)]
    while todo:
        prefix, log_p = todo.pop()
        for token, p in scripted.next_probs(prefix).items():
            if token == EOS:
                score = (log_p + math.log(p)) / length_penalty(len(prefix) + 1, alpha, penalty)
                if score > best_score:
                    best, best_score = list(prefix), score
            else:
                todo.append(((*prefix, token), log_p + math.log(p)))
    return best


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown stopping rule 'early'"):
        DecodeConfig(stop="early")
    with pytest.raises(ValueError, match=r"need 1 <= nbest \(3\) <= beam \(2\)"):
        DecodeConfig(beam=2, nbest=3)


def test_both_rules_give_finished_hypotheses_best_first():
    """Not a scripted case: on a tiny random model both rules still give finished hypotheses
    within the length limit, best first."""
    from tests.conftest import padded_batch, tiny_model

    model = tiny_model(seed=5)
    src = padded_batch([5, 3], model.cfg, seed=9)
    for stop in ("bound", "k-finished"):
        for hyps in beam_search(model, src, DecodeConfig(beam=3, nbest=3, max_len_b=6, stop=stop)):
            assert len(hyps) == 3 and all(len(h.tokens) < 5 + 6 for h in hyps)
            assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)


def test_beam_one_is_not_greedy_under_the_bound_rule():
    # Greedy stops at the first eos (.40 at step 1); beam search at K=1 keeps its one live
    # hypothesis going while it could still win under the length penalty, and "a a a" does.
    # This is why `aiayn translate --beam 1` (and every engine's translate) decodes greedily.
    greedy = greedy_decode(ScriptedModel(), SRC, DecodeConfig(beam=1))
    one = beam_search(
        ScriptedModel(), SRC, DecodeConfig(beam=1, length_penalty="power", alpha=1.0)
    )[0]
    assert greedy == [[]]
    assert [h.tokens for h in one] == [[A, A, A]]
