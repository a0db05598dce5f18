"""On a real (trained, tiny) model: the cache changes nothing, nor do batch mates."""

from dataclasses import dataclass

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search, length_penalty
from aiayn.decode.greedy import greedy_decode, greedy_hypotheses
from aiayn.decode.rules import FORCED_EOS_SCORE
from aiayn.evaluate.search_grid import grid_search
from aiayn.model.outputs import Decoded
from tests.conftest import seeded
from tests.decode.test_search_grid import GRID, own_searches
from tests.train.test_learns import reverse_batch, train_reversal


@pytest.fixture(scope="module")
def model():
    trained, _ = train_reversal(300)  # partly trained: confident on some tokens, not all
    return trained


@pytest.fixture(scope="module")
def sources(model):
    src, _, _ = reverse_batch(seeded(5), 12, model.cfg)
    return src  # (12, S), lengths 3..7, right-padded


@dataclass(frozen=True)
class Prefix:
    """An uncached 'cache': the source side and the whole output so far."""

    memory: torch.Tensor
    src_mask: torch.Tensor
    tokens: torch.Tensor

    def expand(self, k):
        return Prefix(
            *(t.repeat_interleave(k, dim=0) for t in (self.memory, self.src_mask, self.tokens))
        )

    def reorder(self, i, sources=None):  # every row carries its own source here
        return Prefix(self.memory[i], self.src_mask[i], self.tokens[i])


class Uncached:
    """The same model decoding without a cache: the whole prefix is re-run at every step."""

    def __init__(self, model):
        self.model, self.cfg = model, model.cfg

    def encode(self, src):
        return self.model.encode(src)

    def init_cache(self, encoded, capacity=0):
        empty = torch.zeros(encoded.memory.shape[0], 0, dtype=torch.long)
        return Prefix(encoded.memory, encoded.src_mask, empty)

    def decode(self, last, cache):
        from aiayn.model import Encoded

        tokens = torch.cat((cache.tokens, last), dim=1)
        full = self.model.decode(tokens, Encoded(cache.memory, cache.src_mask))
        return Decoded(full.logits[:, -1:], Prefix(cache.memory, cache.src_mask, tokens))


def beam4(model, src):
    return [[h.tokens for h in hyps] for hyps in beam_search(model, src, DecodeConfig(nbest=4))]


def test_cached_and_uncached_decoding_agree(model, sources):
    assert greedy_decode(model, sources) == greedy_decode(Uncached(model), sources)
    assert beam4(model, sources) == beam4(Uncached(model), sources)


def test_a_sentence_decodes_alone_as_in_a_batch(model, sources):
    batch_greedy = greedy_decode(model, sources)
    batch_beam = beam4(model, sources)
    # The outputs differ from one sentence to the next (reversals of different sources), so a
    # sentence given its neighbour's translation would be caught.
    assert len({tuple(h) for h in batch_greedy}) >= len(sources) - 1
    for i in range(len(sources)):
        n = int((sources[i] != model.cfg.pad_id).sum())
        alone = sources[i : i + 1, :n]
        assert greedy_decode(model, alone) == [batch_greedy[i]]
        assert beam4(model, alone) == [batch_beam[i]]


def test_beam_one_is_greedy_on_a_real_model(model, sources):
    one = beam_search(model, sources, DecodeConfig(beam=1, length_penalty="none"))
    assert [h[0].tokens for h in one] == greedy_decode(model, sources)


def test_greedy_hypotheses_are_scored_as_beam_search_scores(model, sources):
    """A beam of 1 in the server and `--nbest` decodes greedily, as `translate --beam 1` does;
    its score (summed as the search goes) equals beam search's where the two find the same."""
    cfg = DecodeConfig(beam=1)
    greedy = greedy_hypotheses(model, sources, cfg)
    assert [h[0].tokens for h in greedy] == greedy_decode(model, sources, cfg)
    one = beam_search(model, sources, cfg)
    same = [(g[0], b[0]) for g, b in zip(greedy, one, strict=True) if g[0].tokens == b[0].tokens]
    assert len(same) >= len(sources) - 2
    assert len({round(g.score, 3) for g, _ in same}) > len(same) // 2  # scores that differ
    for g, b in same:
        assert g.log_prob == pytest.approx(b.log_prob, abs=1e-4)
        assert g.score == pytest.approx(b.score, abs=1e-4)
        assert g.score == pytest.approx(g.log_prob / length_penalty(len(g.tokens) + 1, 0.6))


@pytest.mark.parametrize("max_len_b", [2, 50])
def test_greedy_log_probs_are_a_teacher_forced_pass_over_its_outputs(model, sources, max_len_b):
    """The sums kept during the search are what one pass over the found outputs gives (eos
    included, a forced one at least FORCED_EOS_SCORE), also where sentences leave the batch at
    different steps (max_len_b 50) or all stop at a short limit (2: eos forced)."""
    cfg = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=max_len_b)
    found = greedy_hypotheses(model, sources, cfg)
    pad, bos, eos = model.cfg.pad_id, model.cfg.bos_id, model.cfg.eos_id
    for i, (h,) in enumerate(found):
        y = torch.tensor([[bos, *h.tokens]])
        with torch.no_grad():
            lp = torch.log_softmax(
                model(sources[i : i + 1][sources[i : i + 1] != pad][None], y), -1
            )
        picked = (
            lp[0].gather(-1, torch.tensor([*h.tokens, eos])[:, None]).clamp(min=FORCED_EOS_SCORE)
        )
        assert h.log_prob == pytest.approx(float(picked.sum()), abs=1e-3)
    if max_len_b == 2:
        assert {len(h.tokens) for (h,) in found} == {1}  # eos forced at step 2, in every row


@pytest.mark.parametrize("beam", [2, 4])
def test_one_recorded_search_answers_every_length_setting(model, sources, beam):
    """evaluate/search_grid.py: each setting's 1-best as its own beam search finds it."""
    cfg = DecodeConfig(beam=beam, max_len_a=2.0, max_len_b=3)
    found = grid_search(model, sources, GRID, cfg)
    assert found == own_searches(model, sources, cfg)
