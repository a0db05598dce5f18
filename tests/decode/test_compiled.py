"""The fixed-shape decoder step (`FixedKVCache`, `CompiledModel`) and int8 weight-only layers."""

import copy
import os

import pytest
import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search, select
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.greedy import greedy_decode, most_probable
from aiayn.decode.precision import Int8Linear, for_decoding
from aiayn.decode.sampling import Sampler
from aiayn.decode.token_by_token import token_by_token
from aiayn.model import FixedKVCache
from aiayn.model.cache import empty_self_kv
from tests.conftest import padded_batch, perturb_vectors, seeded, tiny_model

CFG = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=6)


def sources(cfg, lengths=(7, 3, 5), seed=3):
    """(B, S) sources ending in eos, right-padded, of different lengths (sentences that end
    at different steps, so the searches drop and reorder rows)."""
    src = padded_batch([n + 1 for n in lengths], cfg, seed)
    for i, n in enumerate(lengths):
        src[i, n] = cfg.eos_id
    return src


def step_by_step(model, src, cfg):
    """Greedy outputs found a step at a time (a compiled model's `greedy_decode` runs its whole
    loop compiled instead: `test_greedy_loop`)."""
    return token_by_token(model, src, most_probable, cfg).tokens


def test_a_fixed_cache_step_gives_the_logits_of_the_growing_cache(norm_first):
    model = tiny_model(norm_first=norm_first)
    perturb_vectors(model)
    src = sources(model.cfg)
    tgt = padded_batch([6, 6, 6], model.cfg, seed=4, start_with_bos=True)  # (B, 6)
    with torch.no_grad():
        encoded = model.encode(src)
        growing = model.init_cache(encoded, capacity=2)  # grows past 2 on the way
        fixed = FixedKVCache(
            self_k=empty_self_kv(growing.cross_k[0], len(growing.cross_k), 9, zeros=True),
            self_v=empty_self_kv(growing.cross_v[0], len(growing.cross_v), 9, zeros=True),
            cross_k=growing.cross_k,
            cross_v=growing.cross_v,
            src_mask=growing.src_mask,
            position=torch.zeros(1, dtype=torch.long),
        )
        for t in range(tgt.shape[1]):
            a = model.decode(tgt[:, t : t + 1], cache=growing)
            b = model.decode(tgt[:, t : t + 1], cache=fixed)
            torch.testing.assert_close(b.logits, a.logits, atol=1e-5, rtol=1e-5)
            growing, fixed = a.cache, b.cache
        assert int(fixed.position) == tgt.shape[1]
    with pytest.raises(ValueError, match="one step at a time"):
        model.decode(tgt[:, :2], cache=fixed)


def test_the_fixed_step_uncompiled_searches_as_the_model_does(norm_first, on_cpu):
    """Greedy decoding (rows dropped as sentences end), beam search (beams reordered, sources
    dropped) and sampling drive a CompiledModel as they drive the model: the same outputs."""
    model = tiny_model(norm_first=norm_first)
    perturb_vectors(model)
    fixed = CompiledModel(copy.deepcopy(model), compile=False)
    src = sources(model.cfg)
    assert greedy_decode(fixed, src, CFG) == greedy_decode(model, src, CFG)
    for stop in ("bound", "k-finished"):
        cfg = CFG.replace(stop=stop, nbest=2)
        ours, theirs = beam_search(fixed, src, cfg), beam_search(model, src, cfg)
        assert [[h.tokens for h in s] for s in ours] == [[h.tokens for h in s] for s in theirs]
        for s, t in zip(ours, theirs, strict=True):
            assert [h.score for h in s] == pytest.approx([h.score for h in t], abs=1e-5)
    sample = CFG.replace(sample=True, seed=5)
    assert Sampler(sample)(fixed, src, [0, 1, 2]) == Sampler(sample)(model, src, [0, 1, 2])


def test_two_stage_selection_keeps_the_best_2k_continuations():
    g = seeded(0)
    for K, V in ((4, 50), (3, 5), (2, 2)):
        scores = torch.randn(6, K, generator=g)
        log_probs = torch.randn(6 * K, V, generator=g).log_softmax(-1)
        best, beam, token = select(scores, log_probs, K)
        total = (scores[:, :, None] + log_probs.view(6, K, V)).view(6, -1)
        expected = total.topk(2 * K, dim=-1).values
        torch.testing.assert_close(best, expected)
        torch.testing.assert_close(total.gather(1, beam * V + token), best)


def test_int8_weight_only_layers_are_close_to_float_and_slice_by_rows(on_cpu):
    torch.manual_seed(0)
    linear = nn.Linear(64, 96).to(torch.bfloat16)
    int8 = Int8Linear(linear)
    x = torch.randn(5, 64, dtype=torch.bfloat16)
    exact = linear(x).float()
    got = int8(x).float()
    assert int8.weight.dtype == torch.int8 and got.dtype == torch.float32
    assert (got - exact).norm() / exact.norm() < 0.02  # a 127-level grid per row
    torch.testing.assert_close(int8.rows(x, 32, 64), int8(x)[:, 32:64])


def test_int8_weight_only_model_agrees_with_float(on_cpu):
    model = tiny_model()
    perturb_vectors(model)
    src = sources(model.cfg)
    int8 = for_decoding(copy.deepcopy(model), "int8", weight_only=True)
    assert all(not isinstance(m, nn.Linear) for m in int8.modules())
    logits = int8(src, src).float()
    expected = model(src, src)
    assert (logits - expected).norm() / expected.norm() < 0.05


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_compiled_int8_encodes_with_a_dynamic_int8_encoder_close_to_float(on_cpu, precision):
    """`--compile --precision int8`: a weight-only int8 step, and an encoder of its own whose
    linear layers are dynamic int8 (no decoder held twice); its memory is close to the float
    encoder's and in the step's dtype. Other precisions encode with the step's model."""
    model = tiny_model()
    perturb_vectors(model)
    src = sources(model.cfg)
    expected = model.encode(src).memory
    compiled = CompiledModel.from_float(copy.deepcopy(model), precision, compile=False)
    memory = compiled.encode(src).memory
    assert memory.dtype == compiled.model.src_embed.weight.dtype
    assert (memory.float() - expected).norm() / expected.norm() < 0.05
    if precision == "fp32":
        assert compiled.encoder is None
        return
    assert compiled.encoder is not None and len(compiled.encoder.decoder_layers) == 0
    dynamic = [m for m in compiled.encoder.modules() if isinstance(m, DynamicLinear)]
    assert len(dynamic) == 4 * model.cfg.n_encoder_layers  # W^QKV, W^O, and the two of the FFN
    assert any(isinstance(m, Int8Linear) for m in compiled.model.decoder_layers.modules())


@pytest.mark.slow
def test_the_compiled_step_decodes_as_the_uncompiled_one_and_is_kept_on_disk(tmp_path, on_cpu):
    """Compiled by AOTInductor (about 20 s per beam width): greedy and beam outputs equal to
    the uncompiled step's in float32, for batches and lengths it was not exported with; a
    second CompiledModel of the same weights loads the files; other weights get new files."""
    model = tiny_model()
    perturb_vectors(model)
    reference = CompiledModel(copy.deepcopy(model), compile=False)
    compiled = CompiledModel(copy.deepcopy(model), cache_dir=tmp_path)
    compiled.step(1)  # built outside inference mode, as the server does before serving
    for src in (sources(model.cfg), sources(model.cfg, lengths=(12,), seed=8)):
        assert step_by_step(compiled, src, CFG) == step_by_step(reference, src, CFG)
        ours, theirs = beam_search(compiled, src, CFG), beam_search(reference, src, CFG)
        assert [s[0].tokens for s in ours] == [s[0].tokens for s in theirs]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and all(f.endswith(".pt2") for f in files)
    stamps = {p: os.stat(p).st_mtime_ns for p in tmp_path.iterdir()}
    again = CompiledModel(copy.deepcopy(model), cache_dir=tmp_path)
    src = sources(model.cfg)
    assert step_by_step(again, src, CFG) == step_by_step(reference, src, CFG)
    assert {p: os.stat(p).st_mtime_ns for p in tmp_path.iterdir()} == stamps  # loaded
    perturb_vectors(model)
    assert CompiledModel(model, cache_dir=tmp_path)._path(1).name not in files


def test_a_server_runs_an_unbuilt_beam_size_uncompiled_instead_of_compiling(tmp_path, on_cpu):
    compiled = CompiledModel(tiny_model(), cache_dir=tmp_path)
    compiled.build_on_demand = False  # as `aiayn serve --compile` sets after its warm-up
    src = sources(compiled.cfg)
    reference = CompiledModel(tiny_model(), compile=False)
    assert greedy_decode(compiled, src, CFG) == greedy_decode(reference, src, CFG)
    assert list(tmp_path.iterdir()) == []  # nothing was compiled
