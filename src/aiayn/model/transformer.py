"""The Transformer: embeddings, encoder and decoder stacks, output projection; save and load."""

from __future__ import annotations

import math
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from aiayn.config import ModelConfig
from aiayn.files import atomic_write
from aiayn.layout import CONFIG_FILE, WEIGHTS_FILE
from aiayn.model.attention import MultiHeadAttention
from aiayn.model.cache import FixedKVCache, KVCache, empty_self_kv
from aiayn.model.dropout import Dropout, word_dropout
from aiayn.model.layers import DecoderLayer, EncoderLayer, LayerSpec, layers_of
from aiayn.model.masks import decoder_mask, padding_mask
from aiayn.model.outputs import AttentionMaps, Decoded, Encoded
from aiayn.model.positional import inverse_frequencies, sinusoidal_encoding
from aiayn.model.weights import check_size, describe_mismatch

OwnCache = TypeVar("OwnCache", KVCache, FixedKVCache)  # the caches `Transformer.decode` takes


@dataclass(frozen=True)
class DecoderSource(Generic[OwnCache]):
    """What a decoder pass attends to besides its own steps, and where those steps start."""

    cross: list[tuple[Tensor, Tensor]]  # per layer the memory's keys and values, (B, H, S, Dh)
    src_mask: Tensor  # (B, 1, 1, S)
    start: int | Tensor  # P: the first step's position, an int or a fixed-shape cache's (1,)
    tgt_mask: Tensor | None  # None (causal by `is_causal`), (T, P+T) or (C,)
    is_causal: bool
    cache: OwnCache | None  # the cache to write the new steps to, with room for them


@dataclass(frozen=True)
class DecoderStack(Generic[OwnCache]):
    """The decoder stack's output for T new steps, before the output projection."""

    states: Tensor  # (B, T, D), after the final norm
    cache: OwnCache | None  # written, not yet advanced past the new steps
    steps: int  # T
    self_weights: list[Tensor | None]  # per layer (B, H, T, P+T), None where not asked
    cross_weights: list[Tensor | None]  # per layer (B, H, T, S), None where not asked

    def advanced(self) -> OwnCache | None:
        """The cache after these steps, when one was given."""
        return None if self.cache is None else self.cache.advanced(self.steps)


class Transformer(nn.Module):
    """Encoder-decoder Transformer. The only place that reads a `ModelConfig`.

    Padding is given by `cfg.pad_id`; targets are right-padded (padding after the real tokens),
    so causal masking alone keeps real target positions from seeing target padding.
    """

    inv_freq: Tensor  # (D / 2,) float32 positional frequencies, a buffer (not saved)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        spec = LayerSpec(
            d_model=cfg.d_model,
            d_ff=cfg.d_ff,
            n_heads=cfg.n_heads,
            dropout=cfg.dropout,
            attention_dropout=cfg.attention_dropout,
            norm_first=cfg.norm_first,
            norm_eps=cfg.norm_eps,
            activation=cfg.activation,
            activation_dropout=cfg.activation_dropout,
        )
        # One matrix serves source, target and output when tied (section 3.4).
        self.src_embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.tgt_embed = None if cfg.tie_embeddings else nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.out_proj = (
            None if cfg.tie_embeddings else nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        )
        self.embed_dropout = Dropout(cfg.dropout)
        # 1 / 10000^(2i/D): a constant, made once (not saved with the weights).
        self.register_buffer("inv_freq", inverse_frequencies(cfg.d_model), persistent=False)
        self.encoder_layers = nn.ModuleList(EncoderLayer(spec) for _ in range(cfg.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(spec) for _ in range(cfg.n_decoder_layers))
        # Pre-norm stacks end with a LayerNorm; post-norm layers already end with one.
        self.encoder_norm = nn.LayerNorm(cfg.d_model, cfg.norm_eps) if cfg.norm_first else None
        self.decoder_norm = nn.LayerNorm(cfg.d_model, cfg.norm_eps) if cfg.norm_first else None
        self.reset_parameters()

    def _apply(self, fn, recurse: bool = True):
        """After .to()/.cuda()/.bfloat16(): the positional frequencies stay float32 (cast to
        bf16 they would be off by ~0.2%, the angles by ~0.2 rad at position 100)."""
        super()._apply(fn, recurse)
        self.inv_freq = inverse_frequencies(self.cfg.d_model).to(self.inv_freq.device)
        return self

    def reset_parameters(self) -> None:
        """Xavier-uniform for every weight matrix (W^Q, W^K, W^V each on its own), zero biases;
        embeddings N(0, d_model^-0.5) as in tensor2tensor, so scaled by sqrt(d_model) they have
        unit variance; the padding row starts at zero."""
        D = self.cfg.d_model
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=D**-0.5)
                with torch.no_grad():
                    module.weight[self.cfg.pad_id].zero_()
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):  # W^Q, W^K, W^V are stored stacked
                for block in module.w_qkv.weight.split(D):  # 3 x (D, D)
                    nn.init.xavier_uniform_(block)
        if self.out_proj is not None:
            nn.init.normal_(self.out_proj.weight, mean=0.0, std=D**-0.5)

    # -- embeddings ---------------------------------------------------------------------------

    def _embed(self, tokens: Tensor, table: nn.Embedding, start: int | Tensor = 0) -> Tensor:
        """Embedding * sqrt(d_model) + positional encoding, then dropout (section 3.4-3.5).

        `start`, the first token's position, is an int or a (1,) tensor (a fixed-shape cache's
        position, so that a compiled step is the same code at every position)."""
        D = self.cfg.d_model
        positions = start + torch.arange(tokens.shape[1], device=tokens.device)  # (L,)
        pe = sinusoidal_encoding(positions, D, self.cfg.positional, self.inv_freq)  # (L, D)
        e = word_dropout(table(tokens), self.cfg.word_dropout, self.training)  # (B, L, D)
        x = e * math.sqrt(D) + pe.to(table.weight.dtype)  # (B, L, D)
        return self.embed_dropout(x)

    def _target_table(self) -> nn.Embedding:
        return self.src_embed if self.tgt_embed is None else self.tgt_embed

    @property
    def output_weight(self) -> Tensor:
        """(V, D) the pre-softmax projection: the shared embedding when tied."""
        return self.src_embed.weight if self.out_proj is None else self.out_proj.weight

    def project(self, h: Tensor) -> Tensor:
        """Pre-softmax linear projection: (B, T, D) -> (B, T, V) logits."""
        if self.out_proj is not None:  # a module call, so a quantized layer can stand in
            return self.out_proj(h)  # (B, T, V)
        return h @ self.src_embed.weight.t()  # (B, T, V)

    # -- encoder ------------------------------------------------------------------------------

    def encode(self, src: Tensor, need_weights: bool = False) -> Encoded:
        """Run the encoder stack.

        Args:
            src: (B, S) source token ids, padded with `cfg.pad_id`.
            need_weights: also return each layer's self-attention weights.

        Returns:
            `Encoded` with memory (B, S, D) and src_mask (B, 1, 1, S).
        """
        src_mask = padding_mask(src, self.cfg.pad_id)  # (B, 1, 1, S)
        x = self._embed(src, self.src_embed)  # (B, S, D)
        weights = []
        for layer in self.encoder_layers:
            x, w = layer(x, src_mask, need_weights)  # (B, S, D)
            weights.append(w)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return Encoded(x, src_mask, tuple(weights) if need_weights else ())

    # -- decoder ------------------------------------------------------------------------------

    def project_memory(self, memory: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Every decoder layer's cross-attention keys and values of the memory (B, S, D): per
        layer two (B, H, S, Dh)."""
        layers = layers_of(self.decoder_layers, DecoderLayer)
        return [layer.cross_attn.project_kv(memory) for layer in layers]

    def init_cache(self, encoded: Encoded, capacity: int = 16) -> KVCache:
        """An empty cache for decoding from `encoded`.

        Cross-attention keys/values are projected from the memory here, once per source, and
        reused at every step. Build it under the precision (autocast) you decode with.

        Args:
            encoded: the encoder's output for a (B, S) source batch.
            capacity: target steps to preallocate (decoders pass their length limit); the
                buffers grow if decoding goes past it.

        Returns:
            A `KVCache` with P = 0 target steps and (B, H, S, Dh) cross keys/values per layer.
        """
        cross = self.project_memory(encoded.memory)
        cross_k = tuple(k for k, _ in cross)  # per layer (B, H, S, Dh)
        cross_v = tuple(v for _, v in cross)  # per layer (B, H, S, Dh)
        return KVCache(
            self_k=empty_self_kv(cross_k[0], len(cross), capacity),
            self_v=empty_self_kv(cross_v[0], len(cross), capacity),
            cross_k=cross_k,
            cross_v=cross_v,
            src_mask=encoded.src_mask,
        )

    def decode(
        self, tgt: Tensor, encoded: Encoded | None = None, cache: OwnCache | None = None
    ) -> Decoded[OwnCache]:
        """Run the decoder stack over target steps, all at once or continuing a cache: the step
        every search takes.

        Give `encoded` for a full pass over `tgt` (training, scoring), or `cache` (from
        `init_cache`, then from the previous call) to decode T new steps after the P cached ones.

        Args:
            tgt: (B, T) target token ids; the first step of a sentence is `cfg.bos_id`.
            encoded: the encoder's output, for a pass without a cache.
            cache: the cache to continue; the returned `Decoded.cache` includes these steps.

        Returns:
            `Decoded` with logits (B, T, V).
        """
        stack = self._decoder_stack(tgt, encoded, cache)
        return Decoded(logits=self.project(stack.states), cache=stack.advanced())  # (B, T, V)

    def decode_with_weights(
        self, tgt: Tensor, encoded: Encoded | None = None, cache: OwnCache | None = None
    ) -> Decoded[OwnCache]:
        """`decode`, with every layer's attention weights (attention maps): `self_attention`
        per layer (B, H, T, P+T) and `cross_attention` (B, H, T, S). The layers then leave the
        fused attention kernel."""
        stack = self._decoder_stack(tgt, encoded, cache, range(len(self.decoder_layers)))
        return Decoded(
            logits=self.project(stack.states),  # (B, T, V)
            cache=stack.advanced(),
            self_attention=tuple(w for w in stack.self_weights if w is not None),
            cross_attention=tuple(w for w in stack.cross_weights if w is not None),
        )

    def decode_states(
        self,
        tgt: Tensor,
        encoded: Encoded | None = None,
        cache: OwnCache | None = None,
        select: Tensor | None = None,
        align_layer: int | None = None,
    ) -> Decoded[OwnCache]:
        """`decode` without the output projection: the decoder states, for a loss that projects
        them itself (training, validation) or a pass that only fills the cache (a prefix).

        Args:
            select: (B, T) bool, the positions whose states are wanted (in training, the real
                target tokens: padding then costs no output projection and no softmax).
            align_layer: also return this decoder layer's cross-attention weights (guided
                alignment training); only that layer leaves the fused attention kernel.

        Returns:
            `Decoded` with `states` (B, T, D), or (N, D) for the N positions of `select`, no
            logits, and with `align_layer` its `alignment` (B, H, T, S).
        """
        stack = self._decoder_stack(
            tgt, encoded, cache, () if align_layer is None else (align_layer,)
        )
        states = stack.states if select is None else stack.states[select]  # (N, D)
        return Decoded(
            logits=None,
            cache=stack.advanced(),
            states=states,
            alignment=None if align_layer is None else stack.cross_weights[align_layer],
        )

    def _decoder_stack(
        self,
        tgt: Tensor,
        encoded: Encoded | None,
        cache: OwnCache | None,
        weights_of: Container[int] = (),
    ) -> DecoderStack[OwnCache]:
        """The decoder layers and final norm over `tgt` (B, T); the layers in `weights_of` also
        return their attention weights (and leave the fused kernel for it)."""
        source = self._decoder_source(tgt, encoded, cache)
        x = self._embed(tgt, self._target_table(), start=source.start)  # (B, T, D)
        self_weights, cross_weights = [], []
        for i, layer in enumerate(self.decoder_layers):
            out = layer(
                x,
                *source.cross[i],
                src_mask=source.src_mask,
                cache=source.cache,
                index=i,
                tgt_mask=source.tgt_mask,
                is_causal=source.is_causal,
                need_weights=i in weights_of,
            )
            x = out.x  # (B, T, D)
            self_weights.append(out.self_weights)
            cross_weights.append(out.cross_weights)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        return DecoderStack(x, source.cache, tgt.shape[1], self_weights, cross_weights)

    def _decoder_source(
        self, tgt: Tensor, encoded: Encoded | None, cache: OwnCache | None
    ) -> DecoderSource[OwnCache]:
        """The memory's keys and values, projected now (a full pass over `encoded`) or kept in
        `cache`, and the masks and start of `tgt`'s (B, T) steps."""
        if (encoded is None) == (cache is None):
            raise ValueError("decode needs exactly one of `encoded` (full pass) or `cache`")
        B, T = tgt.shape
        if cache is not None and cache.batch_size != B:
            raise ValueError(f"tgt has {B} rows but the cache holds {cache.batch_size}")
        if cache is None:
            assert encoded is not None
            cross = self.project_memory(encoded.memory)
            tgt_mask, is_causal = decoder_mask(T, 0, tgt.device)
            return DecoderSource(cross, encoded.src_mask, 0, tgt_mask, is_causal, None)
        cross = list(zip(cache.cross_k, cache.cross_v, strict=True))
        start = cache.position  # P: an int, or a (1,) tensor for a fixed-shape cache
        tgt_mask, is_causal = cache.self_mask(T)  # None or (T, P+T) / (C,)
        return DecoderSource(cross, cache.src_mask, start, tgt_mask, is_causal, cache.reserve(T))

    def forward(
        self,
        src: Tensor,
        tgt_in: Tensor,
        select: Tensor | None = None,
        project: bool = True,
        align_layer: int | None = None,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Teacher-forced pass: (B, S) source and (B, T) decoder input ids -> (B, T, V) logits,
        or (N, V) at the N positions where the (B, T) bool `select` is True; with
        `project=False`, the decoder states (B, T, D) or (N, D) before the output projection.
        With `align_layer` (guided alignment), a pair: that and the layer's (B, H, T, S)
        cross-attention weights."""
        encoded = self.encode(src)
        decoded = self.decode_states(tgt_in, encoded, select=select, align_layer=align_layer)
        assert decoded.states is not None
        out = self.project(decoded.states) if project else decoded.states  # (B, T, V) or (N, V)
        if align_layer is None:
            return out
        assert decoded.alignment is not None
        return out, decoded.alignment

    def attention_maps(self, src: Tensor, tgt_in: Tensor) -> AttentionMaps:
        """All attention weights of a teacher-forced pass, for plots."""
        encoded = self.encode(src, need_weights=True)
        decoded = self.decode_with_weights(tgt_in, encoded)
        return AttentionMaps(
            encoded.self_attention, decoded.self_attention, decoded.cross_attention
        )

    # -- files --------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> None:
        """Write `config.json` and `model.safetensors` (no pickle), each atomically."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().contiguous().cpu() for k, v in self.state_dict().items()}
        atomic_write(directory / WEIGHTS_FILE, lambda tmp: save_file(state, str(tmp)))
        atomic_write(directory / CONFIG_FILE, self.cfg.save_json)

    @classmethod
    def load(cls, directory: str | Path, device: str | torch.device = "cpu") -> Transformer:
        """Read a model written by `save`. Like any new module, it is in train mode: call
        `.eval()` before translating."""
        directory = Path(directory)
        cfg = ModelConfig.load_json(directory / CONFIG_FILE)
        weights = directory / WEIGHTS_FILE
        if not weights.is_file():
            raise FileNotFoundError(f"{weights}: missing; the model directory is incomplete")
        try:
            check_size(weights, cfg, directory / CONFIG_FILE)
            state = load_file(str(weights), device=str(device))
        except SafetensorError as err:
            raise ValueError(f"{weights}: not a readable safetensors file ({err})") from None
        model = cls(cfg).to(device)
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        found = {k: tuple(v.shape) for k, v in state.items()}
        if found != expected:
            raise ValueError(
                f"{weights}: does not match {directory / CONFIG_FILE}: "
                + describe_mismatch(expected, found)
            )
        model.load_state_dict(state)
        return model
