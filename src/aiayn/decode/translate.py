"""Text in, text out: tokenize, sort by length, batch, decode, detokenize, restore order."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import Tensor

from aiayn import layout
from aiayn.config import DecodeConfig
from aiayn.data.glossary import Term, in_some_form, word_forms
from aiayn.data.term_tags import with_terms
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.beam import Hypothesis, beam_search
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.controls.words import Controls, sentence_controls
from aiayn.decode.greedy import greedy_decode, greedy_hypotheses
from aiayn.decode.precision import for_decoding
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.sampling import Sampler
from aiayn.decode.shortlisted import Shortlisting
from aiayn.devices import usable_device
from aiayn.model import Transformer

Model = DecodingModel[Any]  # any model the searches drive: Transformer, CompiledModel, OnnxModel
# (B, S) source batch, the input line number of each row -> the output ids of each row
Decoder = Callable[[Model, Tensor, list[int]], list[list[int]]]
# (B, S) source batch, the input line number of each row -> the model that decodes it
Narrow = Callable[[Tensor, list[int]], Model]
R = TypeVar("R")
Insist = list[frozenset[Term]] | None  # per line, `inflect` terms held as written too


def source_batch(ids: list[list[int]], eos_id: int, pad_id: int, device) -> Tensor:
    """Sentences of ids -> (B, S) with eos appended and right padding."""
    S = max(len(x) for x in ids) + 1
    batch = np.full((len(ids), S), pad_id, dtype=np.int64)
    for row, x in enumerate(ids):
        batch[row, : len(x)] = x
        batch[row, len(x)] = eos_id
    return torch.from_numpy(batch).to(device)


def length_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut into batches of at most max_tokens padded source tokens."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        longest_if = max(longest, lengths[i] + 1)
        if current and (len(current) + 1) * longest_if > max_tokens:
            batches.append(current)
            current, longest_if = [], lengths[i] + 1
        current.append(i)
        longest = longest_if
    if current:
        batches.append(current)
    return batches


def limit_length(ids: list[list[int]], max_input: int, policy: str) -> list[list[int]]:
    """Apply the over-long-line policy: truncate to max_input pieces, skip (an empty output),
    or stop with an error; any line affected is named in a warning on stderr."""
    long = [i for i, x in enumerate(ids) if len(x) > max_input]
    if not long:
        return ids
    where = ", ".join(str(i + 1) for i in long[:10]) + (" ..." if len(long) > 10 else "")
    message = f"{len(long)} line(s) longer than {max_input} pieces (line {where})"
    if policy == "error":
        raise ValueError(f"{message}; raise --max-input-tokens or choose --too-long truncate")
    cut = policy in ("truncate", "split")  # split: what is left over a chunk's limit
    what = "truncated" if policy == "truncate" else "skipped"
    if policy == "split":
        what = "truncated (lines are cut into chunks by aiayn translate and the API, not here)"
    print(f"warning: {message}: {what}", file=sys.stderr)
    return [x[:max_input] if cut else [] if len(x) > max_input else x for x in ids]


def decode_lines(
    model: Model,
    tokenizer: Tokenizer,
    lines: list[str],
    decode: Callable[[Model, Tensor, list[int]], list[R]],
    empty: R,
    cfg: DecodeConfig = DecodeConfig(),
    distinct: bool = False,
    narrow: Narrow | None = None,
) -> list[R]:
    """`decode`'s result for each line, in input order: lines are tokenized, sorted by length
    and batched by source tokens; an empty line gets `empty` without running the model.
    `decode` is also told each row's line number (a sampler's random stream).
    distinct: a line met before is searched once and shares that result (for a search that
    depends on nothing but the line: the batches are then the same however often lines repeat).
    narrow: the model each batch is decoded with (its shortlist); None: `model` itself."""
    device = next(model.parameters()).device
    ids = limit_length(tokenizer.encode(lines), cfg.max_input_tokens, cfg.too_long)
    results: list[R] = [empty for _ in lines]
    first: dict[tuple[int, ...], int] = {}  # a line's key -> the line searched for it
    for i, x in enumerate(ids):
        if x:
            first.setdefault(tuple(x) if distinct else (i,), i)
    todo = list(first.values())
    for batch in length_batches([len(ids[i]) for i in todo], cfg.max_tokens):
        rows = [todo[j] for j in batch]
        src = source_batch([ids[i] for i in rows], model.cfg.eos_id, model.cfg.pad_id, device)
        batch_model = narrow(src, rows) if narrow else model
        for i, result in zip(rows, decode(batch_model, src, rows), strict=True):
            results[i] = result
    if distinct:
        for i, x in enumerate(ids):
            if x:
                results[i] = results[first[tuple(x)]]
    return results


def translate_lines(
    model: Model,
    tokenizer: Tokenizer,
    lines: list[str],
    cfg: DecodeConfig = DecodeConfig(),
    controls: Controls | None = None,
    shortlist: Shortlisting | None = None,
) -> list[str]:
    """Translations of `lines`, in their order, by the search `cfg` names (greedy, beam or
    sampling); an empty line gives an empty line. controls: prefixes, glossary, suppression.
    shortlist: the model's lexical shortlist, used where `cfg.shortlist` says so."""

    def search(some: list[str], controls: Controls | None, insist: Insist) -> list[str]:
        steer = per_line(controls, tokenizer, some, cfg, insist)
        once = steer is None and not cfg.sample  # nothing but the line decides its translation
        narrow = narrower(shortlist, cfg, steer)
        source = term_annotated(controls, tokenizer, some)
        nothing: list[int] = []
        found = decode_lines(
            model, tokenizer, source, decoder(cfg, steer), nothing, cfg, once, narrow
        )
        return tokenizer.decode(found)

    return with_terms_held(search, controls, tokenizer, lines, cfg, lambda text: text)


def with_terms_held(
    search: Callable[[list[str], Controls | None, Insist], list[R]],
    controls: Controls | None,
    tokenizer: Tokenizer,
    lines: list[str],
    cfg: DecodeConfig,
    best: Callable[[R], str],
) -> list[R]:
    """`search`'s result for every line; then, for a term-aware model, the lines whose best
    translation (`best`) holds an `inflect` term in no form are searched again with those terms
    held as written (the constrained search's guarantee, where the model's own placing failed).
    search: (lines, their controls, per line the terms to insist on) -> their results."""
    found = search(lines, controls, None)
    if controls is None or not may_miss_terms(controls, tokenizer):  # nothing more to do
        return found
    missed = terms_missed(controls, tokenizer, lines, [best(r) for r in found], cfg)
    if missed:
        rows = sorted(missed)
        some, insist = [lines[i] for i in rows], [missed[i] for i in rows]
        for i, again in zip(rows, search(some, controls.of_lines(rows), insist), strict=True):
            found[i] = again
    return found


def terms_missed(
    controls: Controls | None,
    tokenizer: Tokenizer,
    lines: list[str],
    outputs: list[str],
    cfg: DecodeConfig,
) -> dict[int, frozenset[Term]]:
    """The lines (by index) whose output holds some `inflect` term of the glossary in no form
    (data/glossary.py `in_some_form`), with those terms; only for a term-aware model (any other
    constrains every term), and only lines within --max-input-tokens (a longer one was cut or
    skipped, and would be again)."""
    if controls is None or controls.glossary is None or not may_miss_terms(controls, tokenizer):
        return {}
    glossary = controls.glossary
    missed: dict[int, frozenset[Term]] = {}
    for i, (line, output) in enumerate(zip(lines, outputs, strict=True)):
        terms = [t for t in glossary.terms_for(line) if not t.exact]
        have = word_forms(output) if terms else []
        lost = [t for t in terms if not in_some_form(t.target, have)]
        if lost:
            missed[i] = frozenset(lost)
    lengths = tokenizer.encode([lines[i] for i in missed])
    return {
        i: terms
        for (i, terms), n in zip(missed.items(), map(len, lengths), strict=True)
        if n <= cfg.max_input_tokens
    }


def may_miss_terms(controls: Controls, tokenizer: Tokenizer) -> bool:
    """Whether a translation may leave a glossary term out: a term-aware model given `inflect`
    terms (any other model constrains every term)."""
    glossary = controls.glossary
    return bool(glossary and tokenizer.term_aware and not all(t.exact for t in glossary.terms))


def term_annotated(controls: Controls | None, tokenizer: Tokenizer, lines: list[str]) -> list[str]:
    """The lines a term-aware model reads: each glossary term followed by its target, tagged
    (data/term_tags.py); any other model reads them as they are."""
    if controls is None or controls.glossary is None or not tokenizer.term_aware:
        return lines
    glossary = controls.glossary
    return [with_terms(line, glossary) for line in lines]


def narrower(
    shortlist: Shortlisting | None, cfg: DecodeConfig, steer: list[SentenceControls | None] | None
) -> Narrow | None:
    """Each batch's model over its shortlist (with its controls' pieces); None without one."""
    if shortlist is None or not cfg.shortlist:
        return None
    found = shortlist

    def narrow(src: Tensor, rows: list[int]) -> Model:
        return found.for_batch(src, [steer[i] for i in rows] if steer else [])

    return narrow


def per_line(
    controls: Controls | None,
    tokenizer: Tokenizer,
    lines: list[str],
    cfg: DecodeConfig,
    insist: list[frozenset[Term]] | None = None,
) -> list[SentenceControls | None] | None:
    """Each line's controls in piece ids; None where no line has one. insist: per line, the
    `inflect` terms held as written too (`with_terms_held`)."""
    if not controls:
        return None
    if cfg.sample:
        raise ValueError(
            "target prefixes, glossaries and suppressed words steer the beam search; drop --sample"
        )
    found = sentence_controls(controls, tokenizer, lines, cfg, insist)
    return found if any(found) else None


def decoder(cfg: DecodeConfig, controls: list[SentenceControls | None] | None = None) -> Decoder:
    """The 1-best decoder `cfg` names: sampling, beam search, or greedy decoding at beam 1.

    Greedy decoding stops at the first eos. Beam search at K=1 can differ: under the "bound"
    rule its one live hypothesis goes on past an eos while a longer one could still win under
    the length penalty. A batch with controls (per input line) is beam-searched, at K=1 too."""
    if cfg.sample:
        return Sampler(cfg)

    def decode(model: Model, src: Tensor, lines: list[int]) -> list[list[int]]:
        steer = [controls[i] for i in lines] if controls else None
        if cfg.beam == 1 and not (steer and any(steer)):
            return greedy_decode(model, src, cfg)
        return [hyps[0].tokens for hyps in beam_search(model, src, cfg, steer)]

    return decode


def nbest_hypotheses(
    model: Model,
    tokenizer: Tokenizer,
    lines: list[str],
    cfg: DecodeConfig,
    controls: Controls | None = None,
    shortlist: Shortlisting | None = None,
) -> list[list[tuple[str, Hypothesis]]]:
    """The cfg.nbest best (translation, hypothesis) of each line, best first; an empty line
    gets one empty hypothesis. shortlist, and terms held where missed: as `translate_lines`'s."""
    empty = [("", Hypothesis([], 0.0, 0.0))]

    def search(
        some: list[str], controls: Controls | None, insist: Insist
    ) -> list[list[tuple[str, Hypothesis]]]:
        steer = per_line(controls, tokenizer, some, cfg, insist)

        def beams(model: Model, src: Tensor, at: list[int]) -> list[list[Hypothesis]]:
            batch = [steer[i] for i in at] if steer else None
            if cfg.beam == 1 and not (batch and any(batch)):  # as `translate --beam 1`
                return greedy_hypotheses(model, src, cfg)
            return beam_search(model, src, cfg, batch)

        no_hypothesis: list[Hypothesis] = []
        narrow = narrower(shortlist, cfg, steer)
        source = term_annotated(controls, tokenizer, some)
        found = decode_lines(
            model, tokenizer, source, beams, no_hypothesis, cfg, steer is None, narrow
        )
        return [[(tokenizer.decode([h.tokens])[0], h) for h in line] or empty for line in found]

    return with_terms_held(search, controls, tokenizer, lines, cfg, lambda n: n[0][0])


def load_model(
    path: str | Path,
    device: str | torch.device = "cpu",
    precision: str = "fp32",
    compile: bool = False,
) -> tuple[Transformer | CompiledModel, Tokenizer]:
    """(model in eval mode, its tokenizer) from a run, checkpoint or model directory: what our
    own engine translates with (`aiayn.open_translator` opens every engine).

    precision: fp32; bf16 casts the weights (about 2x faster decoding on a recent CPU); int8
    makes the linear layers dynamic int8 (CPU only). Scores are normalized in float32.
    compile: a `CompiledModel`, whose decoder step runs compiled ahead of time (CPU; with int8,
    an int8 step on `decode.int8_kernel` and a dynamic int8 encoder: `decode.precision`).
    """
    directory = layout.model_dir(path)
    model = Transformer.load(directory, device=usable_device(device)).eval()
    found = (
        CompiledModel.from_float(model, precision) if compile else for_decoding(model, precision)
    )
    tokenizer = Tokenizer(directory)
    if tokenizer.vocab_size != model.cfg.vocab_size:  # a foreign spm.model: ids would not fit
        raise ValueError(
            f"{tokenizer.path} has {tokenizer.vocab_size:,} pieces but the model in {directory} "
            f"has a vocabulary of {model.cfg.vocab_size:,}: they come from different runs; put "
            "the spm.model of the data the model was trained on beside it"
        )
    return found, tokenizer
