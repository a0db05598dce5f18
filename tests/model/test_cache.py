"""Incremental decoding with the key/value cache equals the full forward pass."""

import pytest
import torch

from tests.conftest import TEST_DEVICE, padded_batch, tiny_model


def decode_in_chunks(model, src, tgt_in, chunk_sizes):
    """Decode `tgt_in` through the cache in chunks of the given sizes; concatenate the logits."""
    cache = model.init_cache(model.encode(src))
    logits, t = [], 0
    for size in chunk_sizes:
        out = model.decode(tgt_in[:, t : t + size], cache=cache)
        assert out.cache is not None and out.cache.length == t + size
        cache, t = out.cache, t + size
        logits.append(out.logits)
    assert t == tgt_in.shape[1]
    return torch.cat(logits, dim=1)


@pytest.mark.parametrize("chunks", [[1] * 9, [3, 1, 4, 1], [9]], ids=["steps", "mixed", "one"])
def test_cached_decoding_equals_full_pass(norm_first, chunks):
    model = tiny_model(seed=11, norm_first=norm_first)
    src = padded_batch([6, 2, 9], model.cfg, seed=1)  # source padding in the batch
    tgt_in = padded_batch([9, 4, 7], model.cfg, seed=2, start_with_bos=True)
    with torch.no_grad():
        full = model(src, tgt_in)
        cached = decode_in_chunks(model, src, tgt_in, chunks)
    torch.testing.assert_close(cached, full, rtol=0, atol=1e-5)


def test_cross_attention_keys_are_computed_once_per_source():
    model = tiny_model(seed=12)
    src = padded_batch([5, 3], model.cfg, seed=3)
    cache = model.init_cache(model.encode(src))
    step = torch.full((2, 1), model.cfg.bos_id)
    with torch.no_grad():
        after = model.decode(step, cache=cache).cache
    assert after is not None
    for before_k, after_k in zip(cache.cross_k, after.cross_k, strict=True):
        assert after_k is before_k  # reused, not recomputed
    assert after.length == 1
    assert after.keys(0).shape == (2, model.cfg.n_heads, 1, model.cfg.d_head)


def test_reorder_selects_and_repeats_rows():
    """A reordered cache continues exactly as decoding the reordered batch from the start."""
    model = tiny_model(seed=13)
    src = padded_batch([4, 7, 2], model.cfg, seed=4)
    tgt_in = padded_batch([6, 6, 6], model.cfg, seed=5, start_with_bos=True)
    order = torch.tensor([2, 0, 0, 1])
    with torch.no_grad():
        cache = model.init_cache(model.encode(src))
        cache = model.decode(tgt_in[:, :3], cache=cache).cache.reorder(order)
        continued = model.decode(tgt_in[order, 3:], cache=cache).logits
        expected = model(src[order], tgt_in[order])[:, 3:]
    torch.testing.assert_close(continued, expected, rtol=0, atol=1e-5)


def test_decode_needs_exactly_one_source_of_memory():
    model = tiny_model()
    src = padded_batch([3], model.cfg, seed=6)
    encoded = model.encode(src)
    with pytest.raises(ValueError, match="exactly one"):
        model.decode(src, encoded, cache=model.init_cache(encoded))
    with pytest.raises(ValueError, match="exactly one"):
        model.decode(src)


def test_cache_misuse_is_a_clear_error():
    model = tiny_model()
    src = padded_batch([3, 4], model.cfg, seed=7)
    cache = model.init_cache(model.encode(src))
    with pytest.raises(ValueError, match="tgt has 3 rows but the cache holds 2"):
        model.decode(torch.ones(3, 1, dtype=torch.long), cache=cache)
    with pytest.raises(IndexError, match=r"reorder indices must lie in \[0, 2\)"):
        cache.reorder(torch.tensor([0, 2]))


def test_cached_decoding_under_bf16_autocast_keeps_the_cache_in_bf16():
    model = tiny_model(seed=14)
    src = padded_batch([5, 3], model.cfg, seed=8)
    tgt_in = padded_batch([6, 6], model.cfg, seed=9, start_with_bos=True)
    with torch.no_grad(), torch.autocast(TEST_DEVICE.type, dtype=torch.bfloat16):
        cached = decode_in_chunks(model, src, tgt_in, [1, 2, 1, 2])
        full = model(src, tgt_in)
        cache = model.init_cache(model.encode(src))
        cache = model.decode(tgt_in[:, :2], cache=cache).cache
    assert cache.self_k[0].dtype == torch.bfloat16
    torch.testing.assert_close(cached.float(), full.float(), rtol=0, atol=0.05)


def test_an_all_padding_source_gives_finite_outputs_on_both_attention_paths():
    model = tiny_model(seed=15)
    src = padded_batch([4, 2], model.cfg, seed=10)
    src[1] = model.cfg.pad_id  # nothing to attend to
    tgt_in = padded_batch([3, 3], model.cfg, seed=11, start_with_bos=True)
    with torch.no_grad():
        fused = model(src, tgt_in)
        encoded = model.encode(src, need_weights=True)
        explicit = model.decode_with_weights(tgt_in, encoded)
    assert torch.isfinite(fused).all() and torch.isfinite(explicit.logits).all()
    torch.testing.assert_close(explicit.logits, fused, rtol=0, atol=1e-5)
    assert torch.all(explicit.cross_attention[0][1] == 0)


def test_beams_sharing_one_source_copy_match_replicated_sources(norm_first):
    """expand(K): K hypotheses attend to one copy of their source's keys/values; the logits
    equal those of a cache holding K copies, through reorders that move beams around."""
    model = tiny_model(seed=16, norm_first=norm_first)
    src = padded_batch([5, 3, 7], model.cfg, seed=12)
    K = 3
    tgt = padded_batch([4] * 9, model.cfg, seed=13, start_with_bos=True)  # (B*K, T)
    with torch.no_grad():
        encoded = model.encode(src)
        shared = model.init_cache(encoded).expand(K)
        copied = model.init_cache(encoded).reorder(torch.arange(3).repeat_interleave(K))
        assert shared.cross_k[0].shape[0] == 3 and copied.cross_k[0].shape[0] == 9
        moves = torch.tensor([2, 0, 0, 3, 5, 4, 8, 8, 6])  # beams move within their source
        for t in range(4):
            a = model.decode(tgt[:, t : t + 1], cache=shared)
            b = model.decode(tgt[:, t : t + 1], cache=copied)
            torch.testing.assert_close(a.logits, b.logits, rtol=0, atol=1e-5)
            shared, copied = a.cache.reorder(moves), b.cache.reorder(moves)
        # sources leave: keep sources 0 and 2 (rows 0-2 and 6-8)
        rows = torch.tensor([0, 1, 2, 6, 7, 8])
        shared = shared.reorder(rows, sources=torch.tensor([0, 2]))
        copied = copied.reorder(rows)
        a = model.decode(tgt[rows, :1], cache=shared)
        b = model.decode(tgt[rows, :1], cache=copied)
        torch.testing.assert_close(a.logits, b.logits, rtol=0, atol=1e-5)


def test_the_cache_is_written_in_place_and_grows_past_its_capacity():
    model = tiny_model(seed=17)
    src = padded_batch([5, 3], model.cfg, seed=14)
    tgt_in = padded_batch([9, 6], model.cfg, seed=15, start_with_bos=True)
    with torch.no_grad():
        full = model(src, tgt_in)
        cache = model.init_cache(model.encode(src), capacity=4)
        buffer, logits = cache.self_k[0].data_ptr(), []
        for t in range(9):
            out = model.decode(tgt_in[:, t : t + 1], cache=cache)
            cache = out.cache
            logits.append(out.logits)
            if t < 4:  # within the preallocated steps: the same buffer, written in place
                assert cache.self_k[0].data_ptr() == buffer and cache.capacity == 4
    assert cache.length == 9 and cache.capacity >= 9  # grown
    torch.testing.assert_close(torch.cat(logits, dim=1), full, rtol=0, atol=1e-5)
