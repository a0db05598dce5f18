"""The search's controls in piece ids: target prefixes, suppressed sequences, glossary terms."""

import math
from dataclasses import replace

import pytest
import torch

from aiayn.config import DecodeConfig
from aiayn.decode.beam import beam_search
from aiayn.decode.controls.steering import SentenceControls
from aiayn.model.outputs import Decoded
from tests.conftest import padded_batch, perturb_vectors, tiny_model
from tests.decode.scripted import EOS, PrefixCache, ScriptedModel

SEARCH = DecodeConfig(max_len_a=1.0, max_len_b=8)


@pytest.fixture(scope="module")
def model():
    found = tiny_model(seed=3)
    perturb_vectors(found, scale=1.0)  # outputs of their own for each source
    with torch.no_grad():
        for w in found.parameters():
            w.add_(torch.randn_like(w) * 0.3)
    return found


@pytest.fixture(scope="module")
def src(model):
    lengths = [5, 7, 6, 4, 7, 3]
    batch = padded_batch(lengths, model.cfg, seed=4)
    batch = torch.cat((batch, torch.full((len(lengths), 1), model.cfg.pad_id)), dim=1)
    for i, n in enumerate(lengths):
        batch[i, n] = model.cfg.eos_id
    return batch


def outputs(model, src, controls=None, cfg=SEARCH):
    return [hyps[0] for hyps in beam_search(model, src, cfg, controls)]


def contains(tokens, seq):
    n = len(seq)
    return any(tuple(tokens[i : i + n]) == tuple(seq) for i in range(len(tokens) - n + 1))


class OneStepAtATime:
    """The same model, decoding one step per call: a prefix then goes piece by piece."""

    def __init__(self, model):
        self.model, self.cfg = model, model.cfg

    def parameters(self):
        return self.model.parameters()

    def encode(self, src):
        return self.model.encode(src)

    def init_cache(self, encoded, capacity=16):
        return self.model.init_cache(encoded, capacity)

    def decode(self, tgt, *, cache):
        assert tgt.shape[1] == 1
        return self.model.decode(tgt, cache=cache)

    def __call__(self, src, tgt_in):
        return self.model(src, tgt_in)


def test_outputs_start_with_their_prefix(model, src):
    plain = outputs(model, src)
    prefixes = [(7, 8, 9), (), (5,), (10, 11), (12, 13, 14, 15, 16), (20,)]
    found = outputs(model, src, [SentenceControls(prefix=p) for p in prefixes])
    for p, h, before in zip(prefixes, found, plain, strict=True):
        assert tuple(h.tokens[: len(p)]) == p
        if not p:  # no prefix: the ordinary search
            assert h.tokens == before.tokens
    assert any(
        h.tokens[len(p) :] != b.tokens for p, h, b in zip(prefixes, found, plain, strict=True)
    )


def test_the_one_pass_prefix_gives_what_forcing_each_piece_gives(model, src):
    prefixes = [(7, 8, 9), (4, 4), (5, 6, 7, 8), (10, 11), (12, 13, 14), (20, 21)]
    controls = [SentenceControls(prefix=p) for p in prefixes]
    once = outputs(model, src, controls)
    stepped = outputs(OneStepAtATime(model), src, controls)
    assert [h.tokens for h in once] == [h.tokens for h in stepped]
    for a, b in zip(once, stepped, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-5)


def test_a_prefix_longer_than_the_limit_still_fits():
    model = ScriptedModel()
    src = torch.tensor([[3, EOS]])
    found = outputs(
        model, src, [SentenceControls(prefix=(4,) * 6)], DecodeConfig(max_len_a=0.0, max_len_b=2)
    )
    assert found[0].tokens == [4] * 6


def test_suppressed_sequences_never_appear(model, src):
    plain = outputs(model, src)
    single = plain[0].tokens[0]
    pair = tuple(plain[1].tokens[:2])
    suppress = ((single,), pair)
    found = outputs(model, src, [SentenceControls(suppress=suppress)] * len(plain))
    for h in found:
        assert single not in h.tokens and not contains(h.tokens, pair)
    assert found[1].tokens != plain[1].tokens
    # a multi-piece sequence blocks only itself: its first piece alone may stay
    only_pair = outputs(model, src, [SentenceControls(suppress=(pair,))] * len(plain))
    assert all(not contains(h.tokens, pair) for h in only_pair)
    assert any(pair[0] in h.tokens for h in only_pair)


def test_every_term_appears_and_unconstrained_batch_mates_are_untouched(model, src):
    """fp32: a sentence without terms gets, bit for bit, what it gets in a batch without any."""
    plain = outputs(model, src)
    terms = [((30,), (31, 32)), None, ((40, 41, 42),), None, ((50,),), None]
    controls = [None if t is None else SentenceControls(terms=t) for t in terms]
    found = outputs(model, src, controls)
    for t, h, before in zip(terms, found, plain, strict=True):
        if t is None:
            assert (h.tokens, h.score, h.log_prob) == (before.tokens, before.score, before.log_prob)
        else:
            assert all(contains(h.tokens, term) for term in t), (t, h.tokens)
            assert not all(contains(before.tokens, term) for term in t)


@pytest.mark.parametrize(
    "search",
    [
        DecodeConfig(max_len_b=8, stop="k-finished"),
        DecodeConfig(max_len_b=8, length_penalty="power", alpha=1.0),
        DecodeConfig(max_len_b=8, length_penalty="none", beam=2),
        DecodeConfig(max_len_b=8, nbest=3),
    ],
    ids=["k-finished", "power", "no-penalty-beam-2", "nbest"],
)
def test_terms_hold_under_every_stopping_rule_and_length_penalty(model, src, search):
    controls = [SentenceControls(terms=((30,), (31, 32)))] * src.shape[0]
    for hyps in beam_search(model, src, search, controls):
        assert 1 <= len(hyps) <= search.nbest
        # the best meets them; lower n-best entries may be ones the limit ended (best effort)
        assert contains(hyps[0].tokens, (30,)) and contains(hyps[0].tokens, (31, 32))
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)


def test_a_prefix_that_meets_a_term_counts_it(model, src):
    """Met in the prefix, the term asks nothing more: the search is the prefix's alone."""
    met = outputs(model, src, [SentenceControls(prefix=(30, 31), terms=((30, 31),))] * 6)
    prefix_only = outputs(model, src, [SentenceControls(prefix=(30, 31))] * 6)
    assert [h.tokens for h in met] == [h.tokens for h in prefix_only]
    unmet = outputs(model, src, [SentenceControls(prefix=(30, 31), terms=((33,),))] * 6)
    assert all(33 in h.tokens[2:] for h in unmet)


# A scripted model where the term D is unlikely everywhere: beam 2 keeps A and B at the
# first step, and every later step's D is behind two likelier pieces
PAD, BOS, A, B, C, D = 0, 1, 3, 4, 5, 6
SCRIPT = {
    (): {A: 0.5, B: 0.3, C: 0.16, D: 0.04},
    (A,): {EOS: 0.6, B: 0.3, D: 0.1},
    (B,): {EOS: 0.7, A: 0.25, D: 0.05},
    (C,): {EOS: 0.8, D: 0.2},
}


class Unlikely(ScriptedModel):
    def __init__(self, script=SCRIPT):
        self.script = script
        self.cfg = ScriptedModel.cfg.replace(vocab_size=7)

    def decode(self, tgt, *, cache):
        prefix = torch.cat((cache.prefix, tgt), dim=1)
        logits = torch.full((prefix.shape[0], 7), -math.inf)
        for row, tokens in enumerate(prefix[:, 1:].tolist()):
            for token, p in self.script.get(tuple(tokens), {EOS: 1.0}).items():
                logits[row, token] = math.log(p)
        return Decoded(logits[:, None], PrefixCache(prefix))


def test_the_search_reaches_a_term_the_unconstrained_beam_prunes():
    model = Unlikely()
    src = torch.tensor([[A, A, EOS]])
    cfg = DecodeConfig(beam=2, max_len_a=0.0, max_len_b=4, length_penalty="none")
    plain = outputs(model, src, None, cfg)[0]
    assert plain.tokens == [A]  # the ordinary search never holds D in its beam of 2
    found = outputs(model, src, [SentenceControls(terms=((D,),))], cfg)[0]
    assert D in found.tokens
    # the most probable output with D (by hand from SCRIPT: A D 0.05 beats D 0.04, C D 0.032)
    assert found.tokens == [A, D] and found.log_prob == pytest.approx(math.log(0.5 * 0.1))


def test_a_completed_term_is_not_glued_to_the_next_piece(model, src):
    """With `glue` (the pieces that go on a word), what follows a term starts a new word."""
    glue = torch.ones(model.cfg.vocab_size, dtype=torch.bool)
    starts = [EOS, 40, 41]  # the only pieces that may follow a term here
    glue[starts] = False
    controls = [SentenceControls(terms=((30,),), glue=glue)] * src.shape[0]
    for h in outputs(model, src, controls):
        at = h.tokens.index(30)
        assert at + 1 == len(h.tokens) or h.tokens[at + 1] in starts


# The term D costs log 0.01 wherever it goes; after it, "D eos" is the model's likelier ending
# and "D A A eos" a longer, less likely one
DILUTE = {
    (): {A: 0.99, D: 0.01},
    (A,): {EOS: 0.9, A: 0.1},
    (D,): {EOS: 0.6, A: 0.3, B: 0.1},
    (D, A): {A: 0.75, EOS: 0.25},
}


@pytest.mark.parametrize("stop", ["bound", "k-finished"])
def test_a_longer_output_cannot_dilute_a_terms_cost(stop):
    """The length penalty divides the model's own choices, not the term's pieces: with the
    term's log 0.01 divided too, "D A A" (log 0.01 * 0.3 * 0.75 over 4) would beat "D" (log
    0.01 * 0.6 over 2) though, without the term's cost, the short ending is the better one."""
    src = torch.tensor([[A, A, EOS]])
    cfg = DecodeConfig(beam=4, max_len_a=0.0, max_len_b=6, length_penalty="power", alpha=1.0)
    found = outputs(
        Unlikely(DILUTE), src, [SentenceControls(terms=((D,),))], replace(cfg, stop=stop)
    )[0]
    assert found.tokens == [D]
    assert found.score == pytest.approx(math.log(0.6) / 2 + math.log(0.01))
    assert found.log_prob == pytest.approx(math.log(0.01 * 0.6))


def test_an_output_without_its_term_is_taken_only_when_none_has_it():
    """At the length limit every hypothesis ends, one that has not met its term too (its eos
    forced at a score of -1e4); under a strong length penalty (20^3 = 8,000) even that score
    would beat "D", whose term's log 0.1 is not divided: such an output is a last resort."""
    script = {(): {A: 0.9, D: 0.1}} | {(A,) * n: {A: 0.99, EOS: 0.01} for n in range(1, 20)}
    src = torch.tensor([[A, A, EOS]])
    cfg = DecodeConfig(beam=2, max_len_a=0.0, max_len_b=20, length_penalty="power", alpha=3.0)
    assert outputs(Unlikely(script), src, None, cfg)[0].tokens == [A] * 19
    assert outputs(Unlikely(script), src, [SentenceControls(terms=((D,),))], cfg)[0].tokens == [D]
    # nothing with the term finishes: the best effort is still an output
    never = {(): {A: 1.0}} | {(A,) * n: {A: 1.0} for n in range(1, 20)}
    assert outputs(Unlikely(never), src, [SentenceControls(terms=((D,),))], cfg)[0].tokens
