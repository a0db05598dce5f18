"""One recorded search gives every length setting's own answer (evaluate/search_grid.py)."""

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search
from aiayn.evaluate.search_grid import SearchSetting, grid_search
from aiayn.model.outputs import Decoded
from tests.conftest import padded_batch, tiny_model
from tests.decode.scripted import ScriptedModel

GRID = [
    SearchSetting(alpha, kind, stop)
    for kind, stops in (("gnmt", ("bound", "k-finished")), ("power", ("k-finished",)))
    for stop in stops
    for alpha in (0.0, 0.6, 1.0, 1.4, 2.0)
]


def own_searches(model, src, cfg):
    """Each setting's 1-best by its own beam search: (B, settings) output ids."""
    per_setting = [[hyps[0].tokens for hyps in beam_search(model, src, s.apply(cfg))] for s in GRID]
    return [list(row) for row in zip(*per_setting, strict=True)]


class EndsSometimes:
    """A random tiny Transformer whose end of sentence comes with probability about e^bias at
    every step, so that its searches end at many lengths and the settings choose differently
    (left alone, a random model repeats one token to the length limit)."""

    def __init__(self, model, bias: float) -> None:
        self.model, self.cfg, self.bias = model, model.cfg, torch.tensor(bias)

    def parameters(self):
        return self.model.parameters()

    def encode(self, src):
        return self.model.encode(src)

    def init_cache(self, encoded, capacity=0):
        return self.model.init_cache(encoded, capacity=capacity)

    def decode(self, tgt, *, cache):
        decoded = self.model.decode(tgt, cache=cache)
        log_probs = torch.log_softmax(decoded.logits.float(), dim=-1)
        eos = self.cfg.eos_id
        log_probs[..., eos] = torch.logaddexp(log_probs[..., eos], self.bias)
        return Decoded(torch.log_softmax(log_probs, dim=-1), decoded.cache)


@pytest.mark.parametrize("bias", [-2.0, -3.0])
def test_every_setting_as_its_own_search_on_a_random_model(bias):
    model = EndsSometimes(tiny_model(3), bias)
    lengths = [5, 9, 3, 7, 1, 6]
    src = padded_batch(lengths, model.cfg, seed=4)
    src = torch.cat((src, torch.full((len(lengths), 1), model.cfg.pad_id)), dim=1)
    for row, n in enumerate(lengths):
        src[row, n] = model.cfg.eos_id
    cfg = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=6)
    found = grid_search(model, src, GRID, cfg)
    assert found == own_searches(model, src, cfg)
    assert sum(len({tuple(y) for y in row}) > 1 for row in found) >= 4  # the settings differ


def test_scripted_lengths_follow_alpha():
    """The script's short "b" wins at alpha 0, the longer "a a ..." at a high alpha."""
    src = torch.tensor([[3, 2]])
    cfg = DecodeConfig(beam=2, max_len_a=0.0, max_len_b=6)
    found = grid_search(ScriptedModel(), src, GRID, cfg)
    assert found == own_searches(ScriptedModel(), src, cfg)
    lengths = {s.alpha: len(y) for s, y in zip(GRID, found[0], strict=True) if s.stop == "bound"}
    assert lengths[0.0] < lengths[2.0]
