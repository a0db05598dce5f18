"""--no-repeat-ngram (decode/rules.py `block_repeats`): on scores by hand, and on a scripted
model that would repeat itself forever."""

import math

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.rules import block_repeats
from aiayn.decode.sampling import Sampler
from aiayn.model.outputs import Decoded
from tests.decode.scripted import CFG, EOS, PrefixCache, ScriptedModel, V, first_output

A, B = 3, 4


def banned(outputs: list[list[int]], n: int) -> list[set[int]]:
    """The tokens `block_repeats` bans after each row of outputs."""
    scores = block_repeats(torch.zeros(len(outputs), 8), torch.tensor(outputs), n)
    return [set((row == -math.inf).nonzero().flatten().tolist()) for row in scores]


def test_the_token_that_would_repeat_an_ngram_is_banned():
    assert banned([[3, 4, 3]], 2) == [{4}]  # "3 4" came before: no 4 after this 3
    assert banned([[3, 4, 3, 4]], 3) == [{3}]  # "3 4 3" came before
    assert banned([[3, 5, 3, 6, 3]], 2) == [{5, 6}]  # every follower of a past "3"
    assert banned([[3, 4, 5, 6]], 2) == [set()]  # nothing repeated yet
    assert banned([[3, 3]], 1) == [{3}]  # n = 1: no token twice
    assert banned([[3, 4], [4, 4]], 2) == [set(), {4}]  # row by row


def test_nothing_is_banned_while_the_output_is_shorter_than_n():
    scores = torch.randn(2, 8)
    for t in range(3):
        outputs = torch.full((2, t), 3)
        assert torch.equal(block_repeats(scores, outputs, 4), scores)


def test_bf16_scores_stay_bf16():
    scores = torch.zeros(1, 8, dtype=torch.bfloat16)
    out = block_repeats(scores, torch.tensor([[3, 4, 3]]), 2)
    assert out.dtype == torch.bfloat16 and out[0, 4] == -math.inf


class LoopingModel(ScriptedModel):
    """Prefers "a b" forever: P(a) = 0.5 after b or at the start, P(b) = 0.5 after a; the rest of
    the mass on the other word (0.3) and eos (0.2)."""

    def decode(self, tgt, *, cache: PrefixCache) -> Decoded[PrefixCache]:
        prefix = torch.cat((cache.prefix, tgt), dim=1)
        logits = torch.full((prefix.shape[0], V), -math.inf)
        for row, tokens in enumerate(prefix[:, 1:].tolist()):
            likely = B if tokens and tokens[-1] == A else A
            logits[row, likely], logits[row, A + B - likely], logits[row, EOS] = (
                math.log(0.5),
                math.log(0.3),
                math.log(0.2),
            )
        return Decoded(logits[:, None], PrefixCache(prefix))


def has_repeated_ngram(tokens: list[int], n: int) -> bool:
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(set(grams)) < len(grams)


SRC = torch.tensor([[A, B, A, EOS]])  # its limit: 3 + 7 = 10 output tokens


@pytest.mark.parametrize("search", ["greedy", "beam"])
@pytest.mark.parametrize("n", [2, 3])
def test_a_looping_model_stops_repeating(search, n):
    off = DecodeConfig(beam=1 if search == "greedy" else 3, max_len_b=7, alpha=2.0)
    on = off.replace(no_repeat_ngram=n)

    def run(cfg):
        return first_output(LoopingModel(), SRC, search, cfg)

    assert has_repeated_ngram(run(off), n)  # "a b a b ..." to the limit
    found = run(on)
    assert not has_repeated_ngram(found, n)
    if search == "greedy":  # the most probable tokens that are allowed: a b, then no "a b" again
        assert found[:2] == [A, B]


def test_sampling_never_draws_a_banned_token():
    cfg = DecodeConfig(sample=True, max_len_b=7, no_repeat_ngram=2, seed=3)
    for seed in range(20):
        out = Sampler(cfg.replace(seed=seed))(LoopingModel(), SRC, [0])[0]
        assert not has_repeated_ngram(out, 2)


def test_no_repeat_ngram_is_checked():
    with pytest.raises(ValueError, match="no_repeat_ngram"):
        DecodeConfig(no_repeat_ngram=-1)
    assert CFG.eos_id == EOS
