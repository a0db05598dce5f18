"""Greedy decoding as one compiled loop (`GreedyLoop`, `CompiledModel.greedy`): the outputs and
scores of the step by step search, over the whole output layer and over a shortlist's cut."""

import copy

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode import int8_kernel
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.greedy import greedy_decode, greedy_hypotheses, most_probable
from aiayn.decode.greedy_loop import LOOP_ROWS, GreedyLoop, LoopCut
from aiayn.decode.rules import (
    OverBudgetError,
    block_repeats,
    block_repeats_in,
    block_stutter,
    block_stutter_in,
)
from aiayn.decode.shortlisted import ShortlistModel, cut, output_rows
from aiayn.decode.token_by_token import Walked, token_by_token
from tests.conftest import perturb_vectors, tiny_model
from tests.decode.test_compiled import sources

# limits of 0.5 * S + 2 end the rows at different steps; eos barred for the first two
CFG = DecodeConfig(beam=1, max_len_a=0.5, max_len_b=2, min_len=2)


def shortlisted(model: CompiledModel, seed: int = 1) -> ShortlistModel:
    """The model over a random third of its pieces (eos among them), each source row allowed
    a random four fifths of those: rows normalized over different pieces."""
    V = model.cfg.vocab_size
    chosen = torch.rand(V, generator=torch.Generator().manual_seed(seed)) < 0.33
    chosen[model.cfg.eos_id] = True
    vocab = chosen.nonzero().squeeze(1)  # (V',)
    own = torch.rand(3, len(vocab), generator=torch.Generator().manual_seed(seed + 1)) < 0.8
    own[:, (vocab == model.cfg.eos_id).nonzero().squeeze(1)] = True
    return ShortlistModel(model, model.model, cut(output_rows(model.model), vocab), vocab, own)


def eager_loop(
    model: CompiledModel, src: torch.Tensor, cut: LoopCut | None, cfg: DecodeConfig = CFG
) -> Walked:
    """`GreedyLoop` run eagerly (`torch.while_loop` runs its body in Python) on the arguments
    `CompiledModel.greedy` gives the compiled one."""
    guards = (cfg.no_repeat_ngram, cfg.stutter_guard)
    loop = GreedyLoop(model.model, None if cut is None else cut.kind, guards)
    out, total = loop(*model.loop_inputs(src, cfg, cut))
    eos, pad = model.cfg.eos_id, model.cfg.pad_id
    return Walked([[t for t in row if t not in (eos, pad)] for row in out.tolist()], total.tolist())


@pytest.mark.parametrize(
    ("precision", "guards"),
    [("fp32", (0, 0)), ("int8", (0, 0)), ("fp32", (2, 0)), ("fp32", (3, 2))],
)
@torch.inference_mode()
def test_the_loop_decodes_and_scores_as_the_step_by_step_search(on_cpu, precision, guards):
    """Eagerly, the loop's outputs and summed scores are token_by_token's, with rows that end
    at different steps, eos barred at first: over the whole layer and over a cut with rows
    of their own pieces (weight-only int8: int8 cut rows), with and without the guards."""
    base = tiny_model()
    perturb_vectors(base)
    model = CompiledModel.from_float(base, precision, compile=False)
    src = sources(model.cfg)
    short = shortlisted(model)
    cfg = CFG.replace(no_repeat_ngram=guards[0], stutter_guard=guards[1])
    for searched, loop_cut in ((model, None), (short, short.loop_cut())):
        step_by_step = token_by_token(searched, src, most_probable, cfg, scored=True)
        found = eager_loop(model, src, loop_cut, cfg)
        if any(guards):  # they had something to ban
            assert found.tokens != token_by_token(searched, src, most_probable, CFG).tokens
        assert found.tokens == step_by_step.tokens
        assert len({len(t) for t in found.tokens}) > 1  # the rows ended apart
        assert found.log_probs == pytest.approx(step_by_step.log_probs, rel=1e-5)
    int8_kind = "packed" if int8_kernel.available() else "int8"
    assert short.loop_cut().kind == (int8_kind if precision == "int8" else "float")


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_guards_on_a_fixed_buffer_ban_what_the_guards_ban(n):
    """At every step t, over every prefix of outputs that repeat and stutter, with a buffer
    longer than the outputs and one as short as a step: the same scores as the guards over
    the outputs so far."""
    g = torch.Generator().manual_seed(n)
    outputs = torch.randint(0, 4, (6, 12), generator=g)  # four pieces: repeats and stutter
    outputs[0] = torch.tensor([5, 6] * 6)  # a unit of two, back to back
    for C in (12, 1):
        for t in range(1, C + 1):
            buffer = outputs[:, :C]
            scores = torch.randn(6, 8, generator=g)
            t_ = torch.tensor(t)
            so_far = buffer[:, : t - 1]
            assert torch.equal(
                block_repeats_in(scores, buffer, t_, n), block_repeats(scores, so_far, n)
            )
            assert torch.equal(
                block_stutter_in(scores, buffer, t_, n), block_stutter(scores, so_far, n)
            )


def test_no_loop_uncompiled_past_a_servers_warm_up_or_for_a_large_batch(tmp_path, on_cpu):
    assert CompiledModel(tiny_model(), compile=False).loop(None) is None
    model = CompiledModel(tiny_model(), cache_dir=tmp_path)
    many = sources(model.cfg, lengths=(3,) * (LOOP_ROWS + 1))  # more rows than a loop takes
    assert model.greedy(many, CFG, scored=False) is None
    model.build_on_demand = False
    assert model.greedy(sources(model.cfg), CFG, scored=False) is None
    assert list(tmp_path.iterdir()) == []  # nothing was compiled


@pytest.mark.slow
def test_the_compiled_loop_decodes_as_the_steps_and_is_kept_on_disk(tmp_path, on_cpu):
    """Compiled by AOTInductor (about 25 s a loop): in float32, greedy outputs and scores of
    the uncompiled steps, over the whole layer and a cut (with the guards), for batches it
    was not exported with; loaded again from disk; a deadline already past stops it."""
    base = tiny_model()
    perturb_vectors(base)
    reference = CompiledModel(copy.deepcopy(base), compile=False)
    model = CompiledModel(copy.deepcopy(base), cache_dir=tmp_path)
    for src in (sources(model.cfg), sources(model.cfg, lengths=(12,), seed=8)):
        ours, theirs = greedy_hypotheses(model, src, CFG), greedy_hypotheses(reference, src, CFG)
        assert [h[0].tokens for h in ours] == [h[0].tokens for h in theirs]
        assert [h[0].score for h in ours] == pytest.approx([h[0].score for h in theirs], 1e-4)
    src = sources(model.cfg)
    guarded = CFG.replace(no_repeat_ngram=2, stutter_guard=2)
    assert greedy_decode(shortlisted(model), src, guarded) == greedy_decode(
        shortlisted(reference), src, guarded
    )
    assert set(model._loops) == {(None, (0, 0)), ("float", (2, 2))}
    names = sorted(p.name for p in tmp_path.iterdir())
    assert [n.split("-")[:4] for n in names] == [
        ["loop", k, "fp32", g] for k, g in (("float", "r2s2"), ("full", "r0s0"))
    ]
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    again = CompiledModel(copy.deepcopy(base), cache_dir=tmp_path)
    assert greedy_decode(again, src, CFG) == greedy_decode(reference, src, CFG)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == stamps  # loaded
    with pytest.raises(OverBudgetError, match="deadline"):
        again.greedy(src, DecodeConfig(beam=1, deadline=1e-9), scored=False)
