"""Decoding with a compiled decoder step (`--compile`): the fast path at batch 1 and in the server.

At batch 1 an eager decoder step is about a hundred small PyTorch operations, each through the
Python interpreter and the dispatcher: that overhead, not the arithmetic, is most of the step.
`CompiledModel` exports the model's own `decode`, on a `FixedKVCache` (self-attention buffers
of a fixed capacity, written in place at a position held in a tensor), with `torch.export` and
compiles it ahead of time with AOTInductor: fused C++ kernels with the weights frozen in, called
without Python in between. Its shapes are dynamic (rows, source length, capacity), so one
compiled step per beam width serves every batch.

Like `OnnxModel`, it is a `DecodingModel` (`decode.protocols`): greedy decoding, beam search
and sampling drive it unchanged. The search's bookkeeping and the encoder stay eager, except
in plain greedy decoding, which compiles the whole search as one loop (`greedy`,
`decode.greedy_loop`). How a step is built, kept on disk and loaded again is
`decode.compile_cache`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from aiayn.config import DecodeConfig
from aiayn.decode.compile_cache import compile_module, compile_step, default_cache_dir, step_digest
from aiayn.decode.greedy_loop import (
    LOOP_ROWS,
    GreedyLoop,
    LoopCut,
    full_inputs,
    loop_example,
    loop_shapes,
)
from aiayn.decode.precision import Int8Linear, for_decoding, int8_encoder
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.rules import check_deadline, max_lengths
from aiayn.decode.step_cache import StepCache
from aiayn.decode.token_by_token import Walked, strip
from aiayn.model import AttentionMaps, Encoded, FixedKVCache, KVCache, Transformer
from aiayn.model.cache import empty_self_kv
from aiayn.model.outputs import Decoded


class DecoderStep(nn.Module):
    """One decoder step on a fixed cache, the function that is compiled: (B, 1) tokens at
    position P -> (B, 1, V) float32 log-probabilities (normalized logits: the same argmax and
    the same samples), the keys/values written into the buffers in place. With `states`, the
    (B, 1, D) decoder states instead, for an output layer cut to a shortlist (decode.shortlisted).
    """

    def __init__(self, model: Transformer, group: int, states: bool = False) -> None:
        super().__init__()
        self.model = model
        self.group = group
        self.states = states

    def forward(
        self,
        tokens: Tensor,
        position: Tensor,
        self_k: list[Tensor],
        self_v: list[Tensor],
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor,
        history: Tensor | None = None,
    ) -> Tensor:
        cache = FixedKVCache(
            self_k=tuple(self_k),
            self_v=tuple(self_v),
            cross_k=tuple(cross_k.unbind(0)),
            cross_v=tuple(cross_v.unbind(0)),
            src_mask=src_mask,
            position=position,
            group=self.group,
            history=history,
        )
        if self.states:
            states = self.model.decode_states(tokens, cache=cache).states  # (B, 1, D)
            assert states is not None
            return states
        logits = self.model.decode(tokens, cache=cache).logits  # (B, 1, V)
        assert logits is not None  # projected
        return torch.log_softmax(logits.float(), dim=-1)  # fused with the output projection


def step_inputs(cache: StepCache, tokens: Tensor) -> tuple:
    """A step's arguments, as `DecoderStep.forward` takes them."""
    position = torch.full((1,), cache.length, dtype=torch.long, device=tokens.device)
    return (
        tokens,
        position,
        list(cache.self_k),
        list(cache.self_v),
        cache.cross_k,
        cache.cross_v,
        cache.src_mask,
        cache.history,
    )


class CompiledModel:
    """A `Transformer` in eval mode whose decoder step runs compiled (see the module docstring).

    Args:
        model: the model in its decoding precision (`for_decoding(..., weight_only=True)`), on
            the CPU; its weights are frozen into the compiled steps.
        precision: its name, part of the compiled steps' names on disk.
        cache_dir: where compiled steps are kept (`default_cache_dir()` when None).
        compile: False runs the same fixed-shape step eagerly (for tests and comparisons).
        encoder: what encodes instead of `model` (int8: `int8_encoder`); its memory is cast to
            the model's dtype.
    """

    def __init__(
        self,
        model: Transformer,
        precision: str = "fp32",
        cache_dir: str | Path | None = None,
        compile: bool = True,
        encoder: Transformer | None = None,
    ) -> None:
        on_cpu(model)
        self.model = model.eval().requires_grad_(False)
        self.encoder = encoder
        self.cfg = model.cfg
        self.precision = precision
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.compile = compile
        self.build_on_demand = True  # compile a beam size's step at its first use
        # (beam width, states) -> compiled step (`DecoderStep`)
        self._steps: dict[tuple[int, bool], Callable[..., Tensor]] = {}
        # (the output layer's cut (None: the whole layer), guards) -> compiled greedy loop
        self._loops: dict[tuple[str | None, tuple[int, int]], Callable[..., list[Tensor]]] = {}
        self._digest: str | None = None  # of what shapes the compiled steps (`_path`)
        if compile and not hasattr(torch._inductor, "aoti_load_package"):
            raise ValueError(
                f"--compile needs PyTorch's AOTInductor packages (2.6 or later); this is "
                f"{torch.__version__}: upgrade PyTorch or decode without --compile"
            )

    @classmethod
    def from_float(
        cls,
        model: Transformer,
        precision: str,
        cache_dir: str | Path | None = None,
        compile: bool = True,
    ) -> CompiledModel:
        """What `--compile --precision P` decodes with, from the float32 model (changed in
        place): the step in `for_decoding(..., weight_only=True)`'s precision; with int8, the
        encoder in dynamic int8 (`int8_encoder`)."""
        encoder = int8_encoder(on_cpu(model)) if precision == "int8" else None
        step_model = for_decoding(model, precision, weight_only=True)
        return cls(step_model, precision, cache_dir, compile, encoder)

    def parameters(self) -> Iterator[Tensor]:
        return self.model.parameters()

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass (scoring found outputs), eager: `Transformer.forward`."""
        return self.model(src, tgt_in)

    def attention_maps(self, src: Tensor, tgt_in: Tensor) -> AttentionMaps:
        """Every attention weight of a teacher-forced pass, eager (for plots and the server)."""
        return self.model.attention_maps(src, tgt_in)

    def encode(self, src: Tensor) -> Encoded:
        """The encoder, eager: (B, S) source ids -> `Encoded`."""
        if self.encoder is None:
            return self.model.encode(src)
        encoded = self.encoder.encode(src)
        dtype = self.model.src_embed.weight.dtype
        return replace(encoded, memory=encoded.memory.to(dtype))

    def init_cache(self, encoded: Encoded, capacity: int = 16) -> StepCache:
        """An empty cache for decoding from `encoded`, with room for `capacity` steps (fixed:
        decoders pass their length limit)."""
        cross = self.model.project_memory(encoded.memory)
        cross_k = torch.stack([k for k, _ in cross])  # (N, B, H, S, Dh)
        cross_v = torch.stack([v for _, v in cross])
        N = len(cross)
        return StepCache(
            self_k=empty_self_kv(cross_k[0], N, capacity, zeros=True),
            self_v=empty_self_kv(cross_v[0], N, capacity, zeros=True),
            cross_k=cross_k,
            cross_v=cross_v,
            src_mask=encoded.src_mask,
        )

    def decode(self, tgt: Tensor, *, cache: StepCache) -> Decoded[StepCache]:
        """One step for each row: (B, 1) ids -> (B, 1, V) log-probabilities (`normalized`)
        and the advanced cache."""
        self.check_step(tgt, cache)
        step = self.step(cache.group)
        logits = step(*step_inputs(cache, tgt.contiguous()))  # (B, 1, V)
        return Decoded(logits=logits, cache=cache.written(), normalized=True)

    def decode_states(self, tgt: Tensor, *, cache: StepCache) -> Decoded[StepCache]:
        """`decode` without the output layer: (B, 1) ids -> (B, 1, D) decoder states and the
        advanced cache (a shortlist's cut output layer projects them)."""
        self.check_step(tgt, cache)
        step = self.step(cache.group, states=True)
        states = step(*step_inputs(cache, tgt.contiguous()))  # (B, 1, D)
        return Decoded(logits=None, cache=cache.written(), states=states)

    def check_step(self, tgt: Tensor, cache: StepCache) -> None:
        """One token per row, within the cache's capacity."""
        if tgt.shape[1] != 1:
            raise ValueError(f"a compiled step decodes one token per row, not {tgt.shape[1]}")
        if cache.length >= cache.capacity:
            raise ValueError(f"the cache holds {cache.capacity} steps; decoding went past it")

    def warm_up(
        self, beams: Iterable[int], states: bool = False, guards: tuple[int, int] = (0, 0)
    ) -> None:
        """Compile (or load) the steps of these beam sizes now; any other size then runs
        eagerly rather than stall a caller for a compile (a server, once it serves).
        states: also the steps that stop before the output layer (a shortlist decodes with
        them: without them a server with a shortlist would run every step uncompiled).
        guards: greedy's loops for this (no_repeat_ngram, stutter_guard), the search's."""
        for beam in sorted(set(beams)):
            self.step(beam)
            if states:
                self.step(beam, states=True)
        if 1 in beams:  # greedy decoding's whole loop, over the layer and over its cuts
            self.loop(None, guards)
            if states:
                self.loop(cut_kind(self.model.out_proj), guards)
        self.build_on_demand = False

    def step(self, group: int, states: bool = False) -> Callable[..., Tensor]:
        """The compiled step for `group` hypotheses per source (with `states`: the one that
        returns decoder states): loaded, or compiled once. With `build_on_demand` False (a
        server, once its usual beam sizes are built), a beam size not built yet runs the same
        step eagerly rather than stall for a compile."""
        if (group, states) not in self._steps:
            step = DecoderStep(self.model, group, states)
            if not (self.compile and self.build_on_demand):
                return step
            self._steps[group, states] = compile_step(step, self._path(group, states))
        return self._steps[group, states]

    def loop(
        self, cut: str | None, guards: tuple[int, int] = (0, 0)
    ) -> Callable[..., list[Tensor]] | None:
        """The compiled greedy search over the whole output layer (None) or a shortlist's cut
        of it (`LoopCut.kind`), under these guards (no_repeat_ngram, stutter_guard): loaded,
        or compiled once; None where it is not to be built now (uncompiled, or a server past
        its warm-up: the step by step search runs)."""
        if (cut, guards) not in self._loops:
            if not (self.compile and self.build_on_demand):
                return None
            loop = GreedyLoop(self.model, cut, guards)
            name = f"loop-{cut or 'full'}-{self.precision}-r{guards[0]}s{guards[1]}"
            built = compile_module(loop, loop_example(loop), loop_shapes(loop), self._file(name))
            self._loops[cut, guards] = built
        return self._loops[cut, guards]

    def greedy(
        self, src: Tensor, cfg: DecodeConfig, scored: bool, cut: LoopCut | None = None
    ) -> Walked | None:
        """`token_by_token(self, src, most_probable, cfg, scored)`'s outputs from one compiled
        call (`GreedyLoop`), over the whole output layer or `cut`; None where there is no loop
        (`loop`) or where src has more than `LOOP_ROWS` sentences. cfg's length limits, min_len
        and guards hold; its deadline is checked before and after (the loop is at most its
        length limit's steps)."""
        if len(src) > LOOP_ROWS:
            return None
        run = self.loop(None if cut is None else cut.kind, (cfg.no_repeat_ngram, cfg.stutter_guard))
        if run is None:
            return None
        check_deadline(cfg.deadline, 0)
        out, total = run(*self.loop_inputs(src, cfg, cut))
        check_deadline(cfg.deadline, out.shape[1])
        tokens = [strip(row, self.cfg.eos_id, self.cfg.pad_id) for row in out.tolist()]
        return Walked(tokens, total.tolist() if scored else None)

    def loop_inputs(self, src: Tensor, cfg: DecodeConfig, cut: LoopCut | None = None) -> tuple:
        """`GreedyLoop.forward`'s arguments to decode src (B, S) under cfg: src encoded into
        an empty cache of room for the longest limit, the limits, min_len, the output layer."""
        special = self.cfg
        limit = max_lengths(
            src, special.pad_id, cfg.max_len_a, cfg.max_len_b, cfg.max_output_tokens
        )
        cache = self.init_cache(self.encode(src), capacity=int(limit.max()))
        outputs = cut.inputs() if cut is not None else full_inputs(self.model, len(src))
        return (
            list(cache.self_k),
            list(cache.self_v),
            cache.cross_k,
            cache.cross_v,
            cache.src_mask,
            limit,
            torch.tensor([cfg.min_len]),
            *outputs,
        )

    def _path(self, group: int, states: bool = False) -> Path:
        """The compiled step's file: named by everything that shapes it (`step_digest`)."""
        kind = "states-" if states else ""
        return self._file(f"step-{kind}{self.precision}-beam{group}")

    def _file(self, name: str) -> Path:
        """A compiled function's file: its name and everything that shapes it (`step_digest`)."""
        if self._digest is None:
            self._digest = step_digest(self.model, self.precision)
        return self.cache_dir / f"{name}-{self._digest}.pt2"


def on_cpu(model: Transformer) -> Transformer:
    """The model, or an error where it is not on the CPU."""
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("--compile runs on a CPU only for now (it is untested on a GPU)")
    return model


if TYPE_CHECKING:  # the stand-ins, held to the searches' protocols by the type checker

    def _transformer(model: Transformer) -> DecodingModel[KVCache]:
        return model

    def _compiled(model: CompiledModel) -> DecodingModel[StepCache]:
        return model


def cut_kind(layer: nn.Module | None) -> str:
    """The kind of cut (`LoopCut.kind`) a shortlist makes of this output layer."""
    if isinstance(layer, Int8Linear):
        return "int8" if layer.packed is None else "packed"
    return "float"
