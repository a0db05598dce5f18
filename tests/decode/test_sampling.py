import math

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.greedy import greedy_decode
from aiayn.decode.sampling import filter_logits, sample_decode
from tests.conftest import padded_batch, tiny_model


def test_filter_logits():
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.15, 0.1]]))
    kept = lambda out: torch.isfinite(out[0]).tolist()  # noqa: E731
    assert kept(filter_logits(logits, top_k=2, top_p=1.0)) == [True, True, False, False]
    assert kept(filter_logits(logits, top_k=0, top_p=0.7)) == [True, True, False, False]
    assert kept(filter_logits(logits, top_k=0, top_p=0.75)) == [True, True, False, False]
    assert kept(filter_logits(logits, top_k=0, top_p=0.76)) == [True, True, True, False]
    assert kept(filter_logits(logits, top_k=0, top_p=0.4)) == [True, False, False, False]
    out = filter_logits(logits, top_k=3, top_p=0.9)
    assert out[0, 0] == logits[0, 0] and out[0, 3] == -math.inf


def test_top_k_one_is_greedy_and_seeds_repeat():
    model = tiny_model(seed=71)
    src = padded_batch([6, 4, 8], model.cfg, seed=1)
    src[0, 5], src[1, 3], src[2, 7] = 2, 2, 2  # end each with eos
    top_1 = DecodeConfig(top_k=1, max_len_b=10)
    assert sample_decode(model, src, top_1) == greedy_decode(model, src, top_1)
    a = sample_decode(model, src, DecodeConfig(seed=3, max_len_b=10))
    assert a == sample_decode(model, src, DecodeConfig(seed=3, max_len_b=10))
    assert a != sample_decode(model, src, DecodeConfig(seed=4, max_len_b=10))


def test_bad_sampling_options():
    with pytest.raises(ValueError, match="temperature > 0"):
        DecodeConfig(temperature=0)
    with pytest.raises(ValueError, match="0 < top_p <= 1"):
        DecodeConfig(top_p=0)


def test_a_sampled_line_does_not_depend_on_its_batch_mates():
    """Each sentence draws from the stream of (seed, its line number): alone, or in a batch
    with others in any order, it gets the same sample."""
    model = tiny_model(seed=72)
    src = padded_batch([6, 4, 8, 5], model.cfg, seed=2)
    for row, n in enumerate([6, 4, 8, 5]):
        src[row, n - 1] = 2  # end each with eos
    opts = DecodeConfig(seed=5, max_len_b=12)
    together = sample_decode(model, src, opts, lines=[10, 11, 12, 13])
    assert len({tuple(x) for x in together}) > 1, "the samples should differ from each other"
    for row in range(4):
        alone = sample_decode(model, src[row : row + 1], opts, lines=[10 + row])
        assert alone == [together[row]]
    reversed_batch = sample_decode(model, src.flip(0), opts, lines=[13, 12, 11, 10])
    assert reversed_batch == together[::-1]
    # Another line number is another stream.
    assert sample_decode(model, src, opts, lines=[20, 21, 22, 23]) != together


def test_translating_in_other_batches_gives_the_same_samples(tiny_run):
    from aiayn.decode.translate import load_model, translate_lines

    model, tokenizer = load_model(tiny_run)
    lines = ["a b c d", "e f", "a a b b c c", "d e f a", "b"]
    sampling = DecodeConfig(sample=True, seed=1, max_len_b=8)
    one_batch = translate_lines(model, tokenizer, lines, sampling.replace(max_tokens=4096))
    one_each = translate_lines(model, tokenizer, lines, sampling.replace(max_tokens=8))
    assert len(set(one_batch)) > 1, "the samples should differ from each other"
    assert one_batch == one_each


def test_a_finished_row_with_every_token_banned_does_not_stop_the_batch():
    """A row past its length limit writes eos while its batch mates go on; once the n-gram ban
    has seen eos repeated, every token of that row is banned. It is finished: its draw is
    ignored, and must not fail (it did: "probability tensor contains nan")."""
    model = tiny_model(seed=71)
    src = padded_batch([2, 9, 9], model.cfg, seed=1)
    src[0, 1], src[1, 8], src[2, 8] = 2, 2, 2  # end each with eos
    cfg = DecodeConfig(sample=True, seed=3, no_repeat_ngram=2, max_len_a=1.0, max_len_b=0)
    out = sample_decode(model, src, cfg)
    assert len(out[0]) <= 2 and all(len(row) <= 9 for row in out)
    assert out == sample_decode(model, src, cfg)
