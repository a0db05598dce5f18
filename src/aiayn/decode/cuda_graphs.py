"""Decoding on a GPU with CUDA graphs: the decoder step recorded once and replayed.

At batch 1 a decoder step is about a hundred small kernels, and on a GPU the time goes in
launching them from Python, not in running them (the GPU report: 126-247 target tokens/s with
beam 4 on an H100). A CUDA graph records the step's kernels once and launches them all with one
call. A graph replays on the tensors it was recorded with, so everything the step reads lives
in buffers that never move (`StaticStep`): the fixed cache of the compiled CPU path
(`decode.step_cache.StepCache`, `DecoderStep`: keys and values written in place at a position
held in a tensor), with the source length and the cache's capacity padded up to a multiple of
`PAD_MULTIPLE` (padded source positions are masked), so that one recording serves every source
of a few lengths.

CUDA graphs rather than `torch.compile(mode="reduce-overhead")`: the graph replays the very
kernels the eager step runs, so its outputs are the eager fixed step's and Inductor's minutes
of compiling (a lent GPU's time) are not spent. `GraphedModel` is a `DecodingModel`: greedy
decoding and beam search drive it unchanged. `capture=False` runs the same static-buffer step
eagerly, which is how its shape logic is tested on a CPU; capturing needs CUDA.
One search at a time: the buffers are the model's, not the search's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor

from aiayn.decode.compiled import DecoderStep
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.step_cache import StepCache
from aiayn.model import Encoded, Transformer
from aiayn.model.cache import empty_self_kv
from aiayn.model.outputs import Decoded

PAD_MULTIPLE = 16  # source lengths and cache capacities are rounded up to a multiple of this
WARM_UP_RUNS = 2  # eager runs on a side stream before recording (kernels chosen, memory pooled)


def padded_length(n: int, multiple: int = PAD_MULTIPLE) -> int:
    """n rounded up to a multiple of `multiple` (at least one multiple)."""
    if n < 1 or multiple < 1:
        raise ValueError(f"lengths are 1 or more, got {n} (multiple {multiple})")
    return -(-n // multiple) * multiple


class StaticStep:
    """One decoder step on buffers that never move, the shapes of one cache: `load` copies a
    cache's tensors and the step's tokens in (those that are not the buffers already), `run`
    runs the step on them and returns its output, which also stays in one place.

    capture=True records the step into a CUDA graph at construction (after `WARM_UP_RUNS`
    eager runs on a side stream, as torch.cuda.graphs asks) and `run` replays it; False runs
    the step eagerly on the same buffers (a CPU, tests)."""

    def __init__(self, step: DecoderStep, cache: StepCache, tokens: Tensor, capture: bool):
        self.step = step
        self.tokens = torch.zeros_like(tokens)  # (B, 1)
        self.position = torch.zeros(1, dtype=torch.long, device=tokens.device)
        self.self_k = tuple(torch.zeros_like(t) for t in cache.self_k)  # per layer (B, H, C, Dh)
        self.self_v = tuple(torch.zeros_like(t) for t in cache.self_v)
        self.cross_k = torch.zeros_like(cache.cross_k)  # (N, B / group, H, S, Dh)
        self.cross_v = torch.zeros_like(cache.cross_v)
        self.src_mask = torch.zeros_like(cache.src_mask)  # (B / group, 1, 1, S)
        self.history = None if cache.history is None else torch.zeros_like(cache.history)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.output: Tensor | None = None  # (B, 1, V) log-probabilities
        self.load(cache, tokens)  # real inputs: the warm-up writes what the step will write
        if capture:
            self.output = self._capture()

    def load(self, cache: StepCache, tokens: Tensor) -> None:
        """Copy the step's inputs into the buffers: tokens and position always, the cache's
        tensors where they are not the buffers already (a new search, or a beam's new rows)."""
        self.tokens.copy_(tokens)
        self.position.fill_(cache.length)  # a kernel, not a host-to-device copy
        pairs = [
            *zip(self.self_k + self.self_v, cache.self_k + cache.self_v, strict=True),
            (self.cross_k, cache.cross_k),
            (self.cross_v, cache.cross_v),
            (self.src_mask, cache.src_mask),
        ]
        if self.history is not None and cache.history is not None:
            pairs.append((self.history, cache.history))
        for mine, theirs in pairs:
            if mine.data_ptr() != theirs.data_ptr():
                mine.copy_(theirs)

    def holds(self, cache: StepCache) -> StepCache:
        """`cache` with the buffers in place of its tensors (what the step has written)."""
        return replace(
            cache,
            self_k=self.self_k,
            self_v=self.self_v,
            cross_k=self.cross_k,
            cross_v=self.cross_v,
            src_mask=self.src_mask,
        )

    def run(self) -> Tensor:
        """The step on what was loaded: (B, 1, V) log-probabilities, in the output buffer."""
        if self.graph is None:
            self.output = self._eager()
        else:
            self.graph.replay()
        assert self.output is not None
        return self.output

    def _eager(self) -> Tensor:
        """The step on the buffers (`DecoderStep.forward`'s arguments)."""
        k, v = list(self.self_k), list(self.self_v)
        return self.step(
            self.tokens,
            self.position,
            k,
            v,
            self.cross_k,
            self.cross_v,
            self.src_mask,
            self.history,
        )

    def _capture(self) -> Tensor:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(WARM_UP_RUNS):
                self._eager()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            output = self._eager()
        return output  # written by each replay


class GraphedModel:
    """A `Transformer` in eval mode whose decoder step is a replayed CUDA graph (module
    docstring); one graph per beam width and padded shape, recorded at its first step.

    Args:
        model: the model in its decoding precision, on a CUDA device.
        capture: False runs the same static-buffer step eagerly (any device; tests).
        multiple: source lengths and capacities are padded up to a multiple of it.
    """

    def __init__(self, model: Transformer, capture: bool = True, multiple: int = PAD_MULTIPLE):
        device = next(model.parameters()).device
        if capture and device.type != "cuda":
            raise ValueError(
                f"CUDA graphs need the model on a CUDA GPU, and it is on {device}: decode "
                "there without them (or with --compile on a CPU), or move it with --device cuda"
            )
        self.model = model.eval().requires_grad_(False)
        self.cfg = model.cfg
        self.capture = capture
        self.multiple = multiple
        self.steps: dict[tuple[int, ...], StaticStep] = {}  # by shape: one graph each

    def parameters(self) -> Iterator[Tensor]:
        return self.model.parameters()

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass (scoring found outputs), eager."""
        return self.model(src, tgt_in)

    def encode(self, src: Tensor) -> Encoded:
        return self.model.encode(src)

    def init_cache(self, encoded: Encoded, capacity: int = 16) -> StepCache:
        """An empty cache for decoding from `encoded`: the source padded up to a multiple of
        `multiple` (its padding masked) and room for `capacity` steps, rounded up likewise."""
        cross = self.model.project_memory(encoded.memory)
        S = cross[0][0].shape[2]
        pad = padded_length(S, self.multiple) - S
        cross_k = F.pad(torch.stack([k for k, _ in cross]), (0, 0, 0, pad))  # (N, B, H, S', Dh)
        cross_v = F.pad(torch.stack([v for _, v in cross]), (0, 0, 0, pad))
        src_mask = F.pad(encoded.src_mask, (0, pad), value=False)  # (B, 1, 1, S')
        C, N = padded_length(capacity, self.multiple), len(cross)
        return StepCache(
            self_k=empty_self_kv(cross_k[0], N, C, zeros=True),
            self_v=empty_self_kv(cross_v[0], N, C, zeros=True),
            cross_k=cross_k,
            cross_v=cross_v,
            src_mask=src_mask,
        )

    def decode(self, tgt: Tensor, *, cache: StepCache) -> Decoded[StepCache]:
        """One step for each row: (B, 1) ids -> (B, 1, V) log-probabilities (`normalized`)
        and the advanced cache, which holds the step's buffers."""
        if tgt.shape[1] != 1:
            raise ValueError(f"a graphed step decodes one token per row, not {tgt.shape[1]}")
        if cache.length >= cache.capacity:
            raise ValueError(f"the cache holds {cache.capacity} steps; decoding went past it")
        key = (cache.group, cache.batch_size, cache.cross_k.shape[3], cache.capacity)
        step = self.steps.get(key)
        if step is None:
            tokens = tgt.contiguous()
            step = StaticStep(DecoderStep(self.model, cache.group), cache, tokens, self.capture)
            self.steps[key] = step
        else:
            step.load(cache, tgt)
        logits = step.run().clone()  # the next replay overwrites the output buffer
        return Decoded(logits=logits, cache=step.holds(cache).written(), normalized=True)


if TYPE_CHECKING:  # held to the searches' protocol by the type checker

    def _graphed(model: GraphedModel) -> DecodingModel[StepCache]:
        return model
