"""Export to CTranslate2: a model directory that `ctranslate2.Translator` loads.

The model spec is built from our weights with CTranslate2's own spec API, so that our layout
choices survive as they are: the sinusoids go in as the position table itself (interleaved or
concatenated, whichever the model was trained with), the tied matrix serves embeddings and
output projection, post- or pre-norm, the activation, and our bos/eos/unk pieces.

A model's lexical shortlist goes along as CTranslate2's vocabulary map (`vmap.txt`, used with
`use_vmap`): each source piece's candidates, and the frequent pieces under an empty source.

What CTranslate2 cannot do: its beam search divides by |Y|^alpha (our `--length-penalty power`),
not the paper's GNMT ((5+|Y|)/6)^alpha; and its position table has a fixed size.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
from torch import Tensor

from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.shortlist import Shortlist, read_shortlist
from aiayn.evaluate.tuned import carry_tuned
from aiayn.files import atomic_directory
from aiayn.layout import TOKENIZER_FILE
from aiayn.model import Transformer
from aiayn.model.layers import DecoderLayer, EncoderLayer, layers_of
from aiayn.model.positional import sinusoidal_encoding

try:
    import ctranslate2
    from ctranslate2.specs import common_spec, transformer_spec
except ImportError:  # pragma: no cover - the message names the extra to install
    ctranslate2 = None

ACTIVATIONS = {"relu": "RELU", "gelu": "GELU", "swish": "SWISH"}  # exact GELU, SiLU
MAX_POSITIONS = 2048  # rows of the position table: source and output lengths CTranslate2 takes


def require_ctranslate2() -> None:
    if ctranslate2 is None:
        raise ValueError('this needs CTranslate2: pip install -e ".[ctranslate2]"')


def _array(t: Tensor):
    return t.detach().to(torch.float32).cpu().numpy()


def _set_linear(spec, weight: Tensor, bias: Tensor | None = None) -> None:
    spec.weight = _array(weight)
    if bias is not None:
        spec.bias = _array(bias)


def _set_norm(spec, norm: torch.nn.LayerNorm) -> None:
    spec.gamma = _array(norm.weight)
    spec.beta = _array(norm.bias)


def _set_embeddings(spec, table: Tensor, positions: Tensor) -> None:
    """Token table, x sqrt(d_model) (section 3.4), plus our sinusoids as a fixed table."""
    target = spec.embeddings[0] if isinstance(spec.embeddings, list) else spec.embeddings
    target.weight = _array(table)
    spec.scale_embeddings = True
    spec.position_encodings.encodings = _array(positions)


def model_spec(model: Transformer, tokenizer: Tokenizer, max_positions: int = MAX_POSITIONS):
    """CTranslate2's `TransformerSpec` holding our weights, vocabulary and special pieces."""
    require_ctranslate2()
    cfg = model.cfg
    if tokenizer.vocab_size != cfg.vocab_size:
        raise ValueError(
            f"{tokenizer.path}: {tokenizer.vocab_size} pieces, but the model's config.json has "
            f"vocab_size={cfg.vocab_size}; export the tokenizer the model was trained with"
        )
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg.n_encoder_layers, cfg.n_decoder_layers),
        cfg.n_heads,
        pre_norm=cfg.norm_first,
        activation=getattr(common_spec.Activation, ACTIVATIONS[cfg.activation]),
    )
    D = cfg.d_model
    table = sinusoidal_encoding(torch.arange(max_positions), D, cfg.positional)  # (N, D)
    _set_embeddings(spec.encoder, model.src_embed.weight, table)
    for theirs, encoder_layer in zip(
        spec.encoder.layer, layers_of(model.encoder_layers, EncoderLayer), strict=True
    ):
        _set_self_attention(theirs.self_attention, encoder_layer)
        _set_feed_forward(theirs.ffn, encoder_layer)
    target = model.src_embed.weight if model.tgt_embed is None else model.tgt_embed.weight
    _set_embeddings(spec.decoder, target, table)
    for theirs, decoder_layer in zip(
        spec.decoder.layer, layers_of(model.decoder_layers, DecoderLayer), strict=True
    ):
        _set_self_attention(theirs.self_attention, decoder_layer)
        _set_cross_attention(theirs.attention, decoder_layer, D)
        _set_feed_forward(theirs.ffn, decoder_layer)
    output = model.src_embed.weight if model.out_proj is None else model.out_proj.weight
    _set_linear(spec.decoder.projection, output)
    # Pre-norm stacks (cfg.norm_first) end with a LayerNorm; post-norm ones have none.
    if model.encoder_norm is not None:
        _set_norm(spec.encoder.layer_norm, model.encoder_norm)
    if model.decoder_norm is not None:
        _set_norm(spec.decoder.layer_norm, model.decoder_norm)
    _set_vocabulary(spec, model, tokenizer)
    return spec


def _set_self_attention(spec, layer: EncoderLayer | DecoderLayer) -> None:
    """W^Q|W^K|W^V (fused), W^O and the sub-layer's LayerNorm."""
    attn = layer.self_attn
    _set_linear(spec.linear[0], attn.w_qkv.weight, attn.w_qkv.bias)
    _set_linear(spec.linear[1], attn.w_o.weight, attn.w_o.bias)
    _set_norm(spec.layer_norm, layer.self_attn_residual.norm)


def _set_cross_attention(spec, layer: DecoderLayer, D: int) -> None:
    """W^Q on the decoder, W^K and W^V (fused) on the memory, W^O and the LayerNorm."""
    cross = layer.cross_attn
    w_qkv, b_qkv = cross.w_qkv.weight, cross.w_qkv.bias
    _set_linear(spec.linear[0], w_qkv[:D], b_qkv[:D])
    _set_linear(spec.linear[1], w_qkv[D:], b_qkv[D:])
    _set_linear(spec.linear[2], cross.w_o.weight, cross.w_o.bias)
    _set_norm(spec.layer_norm, layer.cross_attn_residual.norm)


def _set_feed_forward(spec, layer: EncoderLayer | DecoderLayer) -> None:
    _set_linear(spec.linear_0, layer.ffn.w_1.weight, layer.ffn.w_1.bias)
    _set_linear(spec.linear_1, layer.ffn.w_2.weight, layer.ffn.w_2.bias)
    _set_norm(spec.layer_norm, layer.ffn_residual.norm)


def _set_vocabulary(spec, model: Transformer, tokenizer: Tokenizer) -> None:
    """One joint vocabulary; our eos is appended to every source, decoding starts from bos."""
    cfg = model.cfg
    pieces = tokenizer.pieces(range(cfg.vocab_size))
    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    spec.config.bos_token = pieces[cfg.bos_id]
    spec.config.eos_token = pieces[cfg.eos_id]
    spec.config.decoder_start_token = pieces[cfg.bos_id]
    spec.config.unk_token = tokenizer.pieces([tokenizer.unk_id])[0]
    spec.config.add_source_eos = True
    spec.config.layer_norm_epsilon = cfg.norm_eps


if ctranslate2 is not None:

    class AiaynConverter(ctranslate2.converters.Converter):
        """CTranslate2's converter interface over a spec we build ourselves."""

        def __init__(self, model: Transformer, tokenizer: Tokenizer, max_positions: int):
            self.model, self.tokenizer, self.max_positions = model, tokenizer, max_positions

        def _load(self):
            return model_spec(self.model, self.tokenizer, self.max_positions)


def vocabulary_map(shortlist: Shortlist, tokenizer: Tokenizer) -> str:
    """The shortlist in CTranslate2's vocabulary-map form: `SOURCE<TAB>TARGET TARGET ...`, a
    line per source piece that has candidates, and the always-allowed pieces after an empty
    source (CTranslate2 adds its unk, bos and eos itself). A map cannot ask which language a
    sentence is for: tables per language merge (a piece's candidates in every language), and
    each language's frequent pieces follow its tag piece, which leads its sources."""
    pieces = tokenizer.pieces(range(shortlist.vocab_size))
    spaced = [p for p in pieces if p != p.strip() or len(p.split()) != 1]
    if spaced:
        raise ValueError(
            f"{tokenizer.path}: piece {spaced[0]!r} holds white space, which CTranslate2's "
            "vocabulary map cannot write; export with --no-shortlist"
        )
    rows, common = shortlist.merged()
    lines = ["\t" + " ".join(pieces[i] for i in common)] if common else []
    if len(shortlist.tags):  # tables per language: each one's frequent pieces after its tag
        named = zip(shortlist.tags.tolist(), shortlist.frequent.tolist(), strict=True)
        for tag_piece, frequent in named:
            lines.append(pieces[tag_piece] + "\t" + " ".join(pieces[i] for i in frequent))
    for source, row in enumerate(rows):
        if row:
            lines.append(pieces[source] + "\t" + " ".join(pieces[i] for i in row))
    return "\n".join(lines) + "\n"


def export_ctranslate2(
    model_dir: Path,
    out: Path,
    quantization: str | None = None,
    max_positions: int = MAX_POSITIONS,
    with_shortlist: bool = True,
) -> Path:
    """Convert an aiayn model directory into a CTranslate2 one at `out`, written atomically,
    with our SentencePiece model beside the weights.

    Args:
        model_dir: a directory with config.json, model.safetensors and spm.model.
        out: the CTranslate2 model directory to write (replaced if it exists).
        quantization: CTranslate2's weight type (int8, float16, ...); None keeps float32.
        max_positions: rows of the position table, the longest source or output it can take.
        with_shortlist: the model's lexical shortlist, where it has one, as the vocabulary map.
    """
    require_ctranslate2()
    model = Transformer.load(model_dir).eval()
    tokenizer = Tokenizer(model_dir)
    shortlist = read_shortlist(Path(model_dir), model.cfg.vocab_size) if with_shortlist else None
    with atomic_directory(Path(out)) as tmp, torch.no_grad():
        vmap = None
        if shortlist is not None:
            vmap = tmp / "shortlist.vmap"
            vmap.write_text(vocabulary_map(shortlist, tokenizer), encoding="utf-8")
        converted = tmp / "model"  # the converter wants to create its directory itself
        AiaynConverter(model, tokenizer, max_positions).convert(
            str(converted), vmap=None if vmap is None else str(vmap), quantization=quantization
        )
        if vmap is not None:
            vmap.unlink()  # the converter keeps its own copy, VMAP_FILE
        for path in converted.iterdir():
            path.rename(tmp / path.name)
        converted.rmdir()
        shutil.copyfile(tokenizer.path, tmp / TOKENIZER_FILE)
        carry_tuned(model_dir, tmp)  # the length setting chosen on validation, where there is one
    return Path(out)
