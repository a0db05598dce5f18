"""--stutter-guard (decode/rules.py `block_stutter`): on scores by hand, and on a scripted model
that would stutter forever."""

import math

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.rules import block_stutter
from aiayn.model.outputs import Decoded
from tests.decode.scripted import EOS, PrefixCache, ScriptedModel, V, first_output

A, B = 3, 4


def banned(outputs: list[list[int]], copies: int) -> list[set[int]]:
    """The tokens `block_stutter` bans after each row of outputs."""
    scores = block_stutter(torch.zeros(len(outputs), 8), torch.tensor(outputs), copies)
    return [set((row == -math.inf).nonzero().flatten().tolist()) for row in scores]


def test_the_token_that_would_complete_one_copy_too_many_is_banned():
    assert banned([[5, 3, 3, 3]], 3) == [{3}]  # a one-piece unit, three times
    assert banned([[3, 4, 3, 4, 3, 4, 3]], 3) == [{4}]  # "3 4" three times, then "3"
    assert banned([[3, 4, 5, 3, 4, 5, 3, 4]], 2) == [{5}]  # "3 4 5" twice, then "3 4"
    assert banned([[3, 3, 4, 3, 3]], 2) == [{3}]  # "3 3": the unit of one piece, twice
    assert banned([[3, 3, 3], [4, 3, 3]], 3) == [{3}, set()]  # row by row


def test_runs_within_the_copies_allowed_are_left_alone():
    assert banned([[3, 3, 4, 4]], 3) == [set()]
    assert banned([[3, 4, 3, 4, 3]], 3) == [set()]  # twice and a start: a third may follow
    assert banned([[3, 4, 5, 6, 3, 4, 5, 6, 3, 4, 5]], 2) == [set()]  # a unit of 4 is not watched
    assert banned([[3, 4, 3]], 1) == [{3, 4}]  # one copy: no "3 3", no "3 4 3 4"


def test_off_changes_nothing_and_bf16_stays_bf16():
    scores = torch.randn(2, 8)
    assert torch.equal(block_stutter(scores, torch.full((2, 5), 3), 0), scores)
    out = block_stutter(torch.zeros(1, 8, dtype=torch.bfloat16), torch.tensor([[3, 3]]), 2)
    assert out.dtype == torch.bfloat16 and out[0, 3] == -math.inf


def test_a_negative_guard_is_refused_by_name():
    with pytest.raises(ValueError, match="stutter_guard must be 0"):
        DecodeConfig(stutter_guard=-1)


class StutteringModel(ScriptedModel):
    """Prefers B after anything (0.6), then A (0.25), then eos (0.15): left alone it writes
    "B B B ..." to its length limit."""

    def decode(self, tgt, *, cache: PrefixCache) -> Decoded[PrefixCache]:
        prefix = torch.cat((cache.prefix, tgt), dim=1)
        logits = torch.full((prefix.shape[0], V), -math.inf)
        logits[:, B], logits[:, A], logits[:, EOS] = math.log(0.6), math.log(0.25), math.log(0.15)
        return Decoded(logits[:, None], PrefixCache(prefix))


def longest_run(tokens: list[int]) -> int:
    run = best = 0
    for i, x in enumerate(tokens):
        run = run + 1 if i and x == tokens[i - 1] else 1
        best = max(best, run)
    return best


@pytest.mark.parametrize("search", ["greedy", "beam"])
@pytest.mark.parametrize("copies", [2, 3])
def test_a_stuttering_model_stops_at_the_copies_allowed(search, copies):
    src = torch.tensor([[A, B, A, EOS]])  # its limit: 3 + 7 = 10 output tokens
    off = DecodeConfig(beam=1 if search == "greedy" else 3, max_len_b=7, alpha=2.0)
    on = off.replace(stutter_guard=copies)

    def run(cfg):
        return first_output(StutteringModel(), src, search, cfg)

    assert longest_run(run(off)) > copies  # the premise: unguarded, it stutters
    guarded = run(on)
    assert longest_run(guarded) == copies and B in guarded
