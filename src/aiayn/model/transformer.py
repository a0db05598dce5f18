"""The Transformer: embeddings, encoder and decoder stacks, output projection; save and load."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from aiayn.config import ModelConfig
from aiayn.files import atomic_write
from aiayn.layout import CONFIG_FILE, WEIGHTS_FILE
from aiayn.model.attention import MultiHeadAttention
from aiayn.model.cache import FixedKVCache, KVCache, empty_self_kv
from aiayn.model.dropout import Dropout
from aiayn.model.layers import DecoderLayer, EncoderLayer, LayerSpec, layers_of
from aiayn.model.masks import decoder_mask, padding_mask
from aiayn.model.params import count_parameters
from aiayn.model.positional import inverse_frequencies, sinusoidal_encoding


@dataclass(frozen=True)
class Encoded:
    """The encoder's output: the memory the decoder attends to, and which of it is real."""

    memory: Tensor  # (B, S, D)
    src_mask: Tensor  # (B, 1, 1, S), True = real source token
    self_attention: tuple[Tensor, ...] = ()  # per layer (B, H, S, S), when asked


CacheT = TypeVar("CacheT")  # the cache a decoder step continues: KVCache, FixedKVCache, ...
OwnCache = TypeVar("OwnCache", KVCache, FixedKVCache)  # the caches `Transformer.decode` takes


@dataclass(frozen=True)
class Decoded(Generic[CacheT]):
    """The decoder's output for T new steps."""

    logits: Tensor | None  # (B, T, V); None when asked not to project
    cache: CacheT | None = None  # the cache after these steps, when one was given
    self_attention: tuple[Tensor, ...] = ()  # per layer (B, H, T, P+T), when asked
    cross_attention: tuple[Tensor, ...] = ()  # per layer (B, H, T, S), when asked
    states: Tensor | None = None  # (B, T, D) decoder states, when asked not to project
    normalized: bool = False  # logits are float32 log-probabilities already (log_softmax)
    alignment: Tensor | None = None  # (B, H, T, S) cross-attention of `align_layer`, when asked


@dataclass(frozen=True)
class AttentionMaps:
    """Every attention weight of one forward pass, per layer; each (B, H, queries, keys)."""

    encoder: tuple[Tensor, ...]  # (B, H, S, S)
    decoder_self: tuple[Tensor, ...]  # (B, H, T, T)
    cross: tuple[Tensor, ...]  # (B, H, T, S)


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
        x = table(tokens) * math.sqrt(D) + pe.to(table.weight.dtype)  # (B, L, D)
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
        self,
        tgt: Tensor,
        encoded: Encoded | None = None,
        cache: OwnCache | None = None,
        need_weights: bool = False,
        select: Tensor | None = None,
        project: bool = True,
        align_layer: int | None = None,
    ) -> Decoded[OwnCache]:
        """Run the decoder stack over target steps, all at once or continuing a cache.

        Give `encoded` for a full pass over `tgt` (training, scoring), or `cache` (from
        `init_cache`, then from the previous call) to decode T new steps after the P cached ones.

        Args:
            tgt: (B, T) target token ids; the first step of a sentence is `cfg.bos_id`.
            encoded: the encoder's output, for a pass without a cache.
            cache: the cache to continue; the returned `Decoded.cache` includes these steps.
            need_weights: also return each layer's attention weights.
            select: (B, T) bool, the positions whose logits are wanted (in training, the real
                target tokens: padding then costs no output projection and no softmax).
            project: False leaves out the output projection: `states` then holds the decoder
                states, (B, T, D) or (N, D), for a loss that projects them itself, and
                `logits` is None.
            align_layer: also return this decoder layer's cross-attention weights (guided
                alignment training); only that layer leaves the fused attention kernel.

        Returns:
            `Decoded` with logits (B, T, V), or (N, V) for the N positions of `select`.
        """
        if (encoded is None) == (cache is None):
            raise ValueError("decode needs exactly one of `encoded` (full pass) or `cache`")
        B, T = tgt.shape
        if cache is not None and cache.batch_size != B:
            raise ValueError(f"tgt has {B} rows but the cache holds {cache.batch_size}")
        if cache is None:
            assert encoded is not None
            cross = self.project_memory(encoded.memory)
            src_mask = encoded.src_mask
            start: int | Tensor = 0
            tgt_mask, is_causal = decoder_mask(T, 0, tgt.device)
        else:
            cross = list(zip(cache.cross_k, cache.cross_v, strict=True))
            src_mask = cache.src_mask
            start = cache.position  # P: an int, or a (1,) tensor for a fixed-shape cache
            tgt_mask, is_causal = cache.self_mask(T)  # None or (T, P+T) / (C,)
            cache = cache.reserve(T)

        x = self._embed(tgt, self._target_table(), start=start)  # (B, T, D)
        self_weights, cross_weights = [], []
        for i, layer in enumerate(self.decoder_layers):
            out = layer(
                x,
                *cross[i],
                src_mask=src_mask,
                cache=cache,
                index=i,
                tgt_mask=tgt_mask,
                is_causal=is_causal,
                need_weights=need_weights or i == align_layer,
            )
            x = out.x  # (B, T, D)
            self_weights.append(out.self_weights)
            cross_weights.append(out.cross_weights)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        if select is not None:
            x = x[select]  # (N, D): the selected positions only
        return Decoded(
            logits=self.project(x) if project else None,  # (B, T, V) or (N, V)
            cache=None if cache is None else cache.advanced(T),
            self_attention=tuple(self_weights) if need_weights else (),
            cross_attention=tuple(cross_weights) if need_weights else (),
            states=None if project else x,
            alignment=None if align_layer is None else cross_weights[align_layer],
        )

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
        decoded = self.decode(
            tgt_in, self.encode(src), select=select, project=project, align_layer=align_layer
        )
        out = decoded.logits if project else decoded.states
        assert out is not None  # logits when projected, states when not
        if align_layer is None:
            return out
        assert decoded.alignment is not None
        return out, decoded.alignment

    def attention_maps(self, src: Tensor, tgt_in: Tensor) -> AttentionMaps:
        """All attention weights of a teacher-forced pass, for plots."""
        encoded = self.encode(src, need_weights=True)
        decoded = self.decode(tgt_in, encoded, need_weights=True)
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
            _check_size(weights, cfg, directory / CONFIG_FILE)
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


def _check_size(weights: Path, cfg: ModelConfig, config_file: Path) -> None:
    """The numbers the file's header lists against those the config's model has, before the
    model is built: a config damaged into 10^9 layers would otherwise be built, for minutes,
    until memory ran out (found by the fuzzed readers)."""
    with safe_open(str(weights), "pt") as f:  # reads the header only
        names = f.keys()  # a list (safe_open is not a mapping)
        found = sum(math.prod(f.get_slice(name).get_shape()) for name in names)
    expected = count_parameters(cfg)
    if found != expected:
        raise ValueError(
            f"{weights}: does not match {config_file}: it holds {found:,} numbers, the model "
            f"described there has {expected:,} parameters; put the config.json saved with "
            "these weights beside them"
        )


def describe_mismatch(expected: dict[str, tuple], found: dict[str, tuple]) -> str:
    """Say which tensors are missing, unexpected or of the wrong shape (a few of each)."""
    parts = []
    if missing := sorted(expected.keys() - found.keys()):
        parts.append(f"missing {missing[:5]}")
    if unexpected := sorted(found.keys() - expected.keys()):
        parts.append(f"unexpected {unexpected[:5]}")
    wrong = [
        f"{k} {found[k]} (expected {expected[k]})"
        for k in sorted(expected.keys() & found.keys())
        if expected[k] != found[k]
    ]
    if wrong:
        parts.append(f"wrong shapes {wrong[:5]}")
    return "; ".join(parts)
