"""Batch-1 decoding on static buffers (`decode.cuda_graphs`): on a CPU the step a CUDA graph
replays runs eagerly on the same buffers, so its shape logic (padded source, padded capacity,
buffers that never move) is checked here against the eager search; capturing needs CUDA."""

import copy

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.cuda_graphs import GraphedModel, padded_length
from aiayn.decode.greedy import greedy_decode
from tests.conftest import padded_batch, perturb_vectors, tiny_model

CFG = DecodeConfig(beam=4, max_len_a=1.0, max_len_b=6)


def one_source(cfg, n: int, seed: int):
    src = padded_batch([n + 1], cfg, seed)  # (1, n + 1)
    src[0, n] = cfg.eos_id
    return src


def test_lengths_are_padded_up_to_the_multiple():
    assert [padded_length(n, 16) for n in (1, 15, 16, 17, 33)] == [16, 16, 16, 32, 48]
    assert padded_length(5, 1) == 5
    with pytest.raises(ValueError, match="lengths are 1 or more"):
        padded_length(0)


def test_capturing_is_refused_off_a_gpu(on_cpu):
    with pytest.raises(ValueError, match="CUDA graphs need the model on a CUDA GPU"):
        GraphedModel(tiny_model())


@pytest.mark.parametrize("n", [3, 7, 16])
def test_the_static_step_searches_as_the_model_does_at_batch_1(norm_first, on_cpu, n):
    """Greedy and beam 4 (beams reordered through the history table) on a source padded from
    n + 1 tokens to the multiple: the eager model's outputs and scores."""
    model = tiny_model(norm_first=norm_first)
    perturb_vectors(model)
    static = GraphedModel(copy.deepcopy(model), capture=False, multiple=8)
    src = one_source(model.cfg, n, seed=n)
    assert greedy_decode(static, src, CFG) == greedy_decode(model, src, CFG)
    for stop in ("bound", "k-finished"):
        cfg = CFG.replace(stop=stop, nbest=2)
        ours, theirs = beam_search(static, src, cfg), beam_search(model, src, cfg)
        assert [[h.tokens for h in s] for s in ours] == [[h.tokens for h in s] for s in theirs]
        assert [h.score for h in ours[0]] == pytest.approx([h.score for h in theirs[0]], abs=1e-5)


def test_the_padded_cache_steps_as_the_unpadded_one_on_the_same_buffers(on_cpu):
    """One step's log-probabilities on the padded cache equal the fixed step's on the exact
    lengths; the buffers are made once per shape and the cache then holds them."""
    model = tiny_model()
    perturb_vectors(model)
    static = GraphedModel(copy.deepcopy(model), capture=False, multiple=8)
    exact = CompiledModel(copy.deepcopy(model), compile=False)
    src = one_source(model.cfg, 4, seed=1)  # 5 tokens: padded to 8
    tokens = padded_batch([3], model.cfg, seed=2, start_with_bos=True)  # (1, 3)
    with torch.no_grad():
        padded = static.init_cache(static.encode(src), capacity=5)
        plain = exact.init_cache(exact.encode(src), capacity=5)
        assert padded.cross_k.shape[3] == 8 and padded.capacity == 8
        assert padded.src_mask[0, 0, 0].tolist() == [True] * 5 + [False] * 3
        buffers = None
        for t in range(tokens.shape[1]):
            a = static.decode(tokens[:, t : t + 1], cache=padded)
            b = exact.decode(tokens[:, t : t + 1], cache=plain)
            torch.testing.assert_close(a.logits, b.logits, atol=1e-5, rtol=1e-5)
            padded, plain = a.cache, b.cache
            assert buffers is None or padded.self_k[0].data_ptr() == buffers
            buffers = padded.self_k[0].data_ptr()
        assert len(static.steps) == 1 and padded.length == 3
        with pytest.raises(ValueError, match="one token per row"):
            static.decode(tokens[:, :2], cache=padded)
