"""The step rules every search shares: no eos before min_len tokens, only eos at the limit."""

import math

import torch

from aiayn.decode.rules import FORCED_EOS_SCORE, apply_rules, max_lengths

EOS = 2


def test_eos_is_held_back_until_min_len_tokens_are_out():
    scores = torch.zeros(2, 5)
    nowhere = torch.tensor([False, False])
    for t in (1, 2):
        assert (apply_rules(scores, t, nowhere, min_len=2, eos_id=EOS)[:, EOS] == -math.inf).all()
    assert (apply_rules(scores, 3, nowhere, min_len=2, eos_id=EOS) == 0).all()


def test_the_limit_leaves_only_eos_even_an_impossible_one():
    scores = torch.tensor([[0.0, -1.0, -math.inf, -2.0], [0.0, -1.0, -0.5, -2.0]])
    ruled = apply_rules(scores, 4, torch.tensor([True, False]), min_len=0, eos_id=EOS)
    assert ruled[0].argmax() == EOS and ruled[0, EOS] == FORCED_EOS_SCORE
    assert (ruled[0, [0, 1, 3]] == -math.inf).all()
    assert torch.equal(ruled[1], scores[1]), "a row below its limit is untouched"


def test_the_limit_counts_real_source_tokens():
    src = torch.tensor([[5, 6, 7, 2], [5, 2, 0, 0]])  # the second is padded
    assert max_lengths(src, pad_id=0, max_len_a=1.0, max_len_b=3).tolist() == [7, 5]
    assert max_lengths(src, pad_id=0, max_len_a=0.0, max_len_b=0).tolist() == [1, 1]


def test_finished_rows_leave_the_batch_in_few_reorders():
    """Row r ends at step r + 1. Dropping each finished row at once would re-allocate the
    cache at 7 of the 8 steps; dropping them once they are half the batch does it 3 times
    (8 -> 4 -> 2 -> 1 rows), and every row still ends at its own eos."""
    from aiayn.config import DecodeConfig
    from aiayn.decode.greedy import greedy_decode
    from aiayn.model.outputs import Decoded
    from tests.decode.scripted import CFG, EOS, A, PrefixCache

    reorders = []

    class CountingCache(PrefixCache):
        def reorder(self, indices, sources=None):
            reorders.append(len(indices))
            return CountingCache(self.prefix.index_select(0, indices))

    class EndsAtItsRow:
        """Column 0 of the cache carries each row's number r; eos is certain at step r + 1."""

        cfg = CFG

        def encode(self, src):
            return src

        def init_cache(self, src, capacity=0):
            return CountingCache(src[:, :1] - 5)  # the row numbers, 0 .. B-1

        def decode(self, tgt, *, cache):
            prefix = torch.cat((cache.prefix, tgt), dim=1)
            t = prefix.shape[1] - 1  # the step being decoded
            logits = torch.full((prefix.shape[0], 1, 5), -math.inf)
            ends = prefix[:, 0] + 1 == t
            logits[ends, 0, EOS], logits[~ends, 0, A] = 0.0, 0.0
            return Decoded(logits, CountingCache(prefix))

    src = torch.tensor([[5 + r, 5, EOS] for r in range(8)])  # (8, 3)
    out = greedy_decode(EndsAtItsRow(), src, DecodeConfig(beam=1))
    assert out == [[A] * r for r in range(8)]
    assert reorders == [4, 2, 1]


def test_the_output_cap_bounds_every_search():
    """The server's budget of output tokens: a * S + b, at most the cap (eos included), for
    beam search, greedy decoding and sampling alike."""
    from aiayn.config import DecodeConfig
    from aiayn.decode.beam import beam_search
    from aiayn.decode.greedy import greedy_decode
    from aiayn.decode.sampling import Sampler
    from tests.conftest import padded_batch, tiny_model

    src = torch.tensor([[5, 6, 7, 2], [5, 2, 0, 0]])
    assert max_lengths(src, 0, 1.0, 50, cap=6).tolist() == [6, 6]
    assert max_lengths(src, 0, 1.0, 3, cap=6).tolist() == [6, 5]  # under the cap: unchanged
    model = tiny_model(3)
    src = padded_batch([9, 5], model.cfg, seed=4)
    src[:, -1] = model.cfg.eos_id  # no eos inside a sentence: it is the last token here
    free = DecodeConfig(beam=3, min_len=20)  # eos held back: each output runs to its limit
    capped = free.replace(max_output_tokens=6)
    assert all(len(h[0].tokens) >= 20 for h in beam_search(model, src, free))
    assert all(len(h[0].tokens) == 5 for h in beam_search(model, src, capped))
    assert all(len(y) == 5 for y in greedy_decode(model, src, capped))
    assert all(len(y) <= 5 for y in Sampler(capped.replace(sample=True))(model, src, [0, 1]))


def test_a_search_past_its_deadline_stops_with_a_clear_error():
    import time

    import pytest

    from aiayn.config import DecodeConfig
    from aiayn.decode.beam import beam_search
    from aiayn.decode.greedy import greedy_decode
    from aiayn.decode.rules import OverBudgetError
    from tests.conftest import padded_batch, tiny_model

    model = tiny_model(3)
    src = padded_batch([6], model.cfg, seed=4)
    past = DecodeConfig(beam=2, deadline=time.monotonic() - 1)
    with pytest.raises(OverBudgetError, match="deadline at output step 1"):
        beam_search(model, src, past)
    with pytest.raises(OverBudgetError):
        greedy_decode(model, src, past)
    later = past.replace(deadline=time.monotonic() + 3600)
    assert beam_search(model, src, later) == beam_search(model, src, past.replace(deadline=0))
