"""`aiayn import marian`: a local Hugging Face Marian checkpoint as an aiayn model directory.

Marian is a post-norm Transformer with embeddings scaled by sqrt(d_model) and concatenated
sin|cos positions, so our model computes the same function with `positional="concatenated"`.
What differs is the vocabulary's conventions: Marian has eos 0, unk 1 and pad last, and starts
the decoder from the pad token; we keep pad 0, bos 1, eos 2, unk 3. So rows are permuted:

    our 0 (pad)  a new zero row (padding is never attended to)
    our 1 (bos)  Marian's pad row, its decoder start
    our 2 (eos)  Marian's eos;  our 3 (unk): Marian's unk;  then every other token in order

and a SentencePiece model with those ids is written from Marian's source.spm and vocab.json;
where Marian segments its target with another model (target.spm), that one too, with the same
ids (spm.tgt.model), so `aiayn prepare --vocab` encodes each side as Marian did.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from aiayn.config import ModelConfig
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer
from aiayn.files import atomic_directory, read_json
from aiayn.layout import TARGET_TOKENIZER_FILE, TOKENIZER_FILE
from aiayn.model import Transformer
from aiayn.model.params import count_parameters

ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "swish": "swish", "silu": "swish"}
WEIGHTS = "model.safetensors"


class MarianImportError(ValueError):
    """A Marian directory we cannot read or represent; the message names file and field."""


TOKENIZER_FILES = ("source.spm", "vocab.json")  # what our spm.model is made from
TARGET_SPM = "target.spm"  # what our spm.tgt.model is made from, where it segments otherwise


def read_config(directory: Path) -> dict[str, Any]:
    path = directory / "config.json"
    if not path.is_file():
        raise MarianImportError(f"{path}: missing; give a Hugging Face Marian model directory")
    config = read_json(path, "give the config.json saved with the model")
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if model_type != "marian":
        raise MarianImportError(
            f"{path}: field model_type is {model_type!r}, not 'marian'; "
            "only MarianMTModel checkpoints can be imported"
        )
    check_ids(config, path)
    return config


# The integers of config.json that name sizes, and those that name tokens (found by the fuzzed
# readers: a string or a list in any of them escaped as a TypeError from deep inside).
SIZES = (
    "vocab_size",
    "d_model",
    "encoder_layers",
    "decoder_layers",
    "encoder_ffn_dim",
    "decoder_ffn_dim",
    "encoder_attention_heads",
    "decoder_attention_heads",
)
TOKEN_IDS = ("pad_token_id", "eos_token_id", "unk_token_id")


def check_ids(config: dict[str, Any], path: Path) -> None:
    """Every size a positive integer, every token id one inside the vocabulary."""
    for field in (*SIZES, *TOKEN_IDS):
        value = config.get(field, 1 if field == "unk_token_id" else None)
        if type(value) is not int or value < (0 if field in TOKEN_IDS else 1):
            raise MarianImportError(f"{path}: field {field}={value!r}: not a count or an id")
        if field in TOKEN_IDS and value >= config["vocab_size"]:
            raise MarianImportError(
                f"{path}: field {field}={value} is outside vocab_size={config['vocab_size']}"
            )


def model_config(config: dict[str, Any], path: Path) -> ModelConfig:
    """Our config for a Marian config, refusing what we cannot represent (naming the field)."""

    def refuse(field: str, why: str) -> MarianImportError:
        return MarianImportError(f"{path}: field {field}={config.get(field)!r}: {why}")

    if not config.get("scale_embedding", False):
        raise refuse("scale_embedding", "aiayn always scales embeddings by sqrt(d_model)")
    if not config.get("share_encoder_decoder_embeddings", True):
        raise refuse("share_encoder_decoder_embeddings", "aiayn has one joint vocabulary")
    for a, b in (
        ("encoder_attention_heads", "decoder_attention_heads"),
        ("encoder_ffn_dim", "decoder_ffn_dim"),
    ):
        if config.get(a) != config.get(b):
            raise refuse(b, f"differs from {a}={config.get(a)}; aiayn's stacks share sizes")
    if config.get("activation_function") not in ACTIVATIONS:
        raise refuse("activation_function", f"aiayn has {sorted(set(ACTIVATIONS))}")
    if config.get("decoder_start_token_id") != config.get("pad_token_id"):
        raise refuse("decoder_start_token_id", "Marian starts the decoder from pad_token_id")
    values = {
        "vocab_size": config["vocab_size"] + 1,  # plus our padding row
        "d_model": config["d_model"],
        "d_ff": config["encoder_ffn_dim"],
        "n_heads": config["encoder_attention_heads"],
        "n_encoder_layers": config["encoder_layers"],
        "n_decoder_layers": config["decoder_layers"],
        "dropout": config.get("dropout", 0.1),
        "activation": ACTIVATIONS[config["activation_function"]],
        "tie_embeddings": config.get("tie_word_embeddings", True),
        "positional": "concatenated",
    }
    return ModelConfig.from_dict(values, source=f"{path} (as aiayn's settings)")


def permutation(config: dict[str, Any]) -> list[int]:
    """Marian's row for each of our ids 1..V (our 0 is a new padding row)."""
    V, pad, eos = config["vocab_size"], config["pad_token_id"], config["eos_token_id"]
    unk = config.get("unk_token_id", 1)
    first = [pad, eos, unk]  # our bos, eos, unk
    return first + [i for i in range(V) if i not in first]


def built_for(cfg: ModelConfig, state: dict[str, torch.Tensor], directory: Path) -> Transformer:
    """Our model holding `state`, its sizes checked before it is built (a config.json that
    says d_model=2^40 would otherwise be built until memory ran out)."""
    if count_parameters(cfg) == sum(t.numel() for t in state.values()):
        model = Transformer(cfg)
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        if expected == {k: tuple(v.shape) for k, v in state.items()}:
            model.load_state_dict(state)
            return model
    raise MarianImportError(
        f"{directory / WEIGHTS}: its tensors do not have the sizes {directory / 'config.json'} "
        "gives; the weights and config.json come from different models"
    )


def read_weights(directory: Path) -> dict[str, torch.Tensor]:
    path = directory / WEIGHTS
    if not path.is_file():
        raise MarianImportError(
            f"{path}: missing; only safetensors weights are read (no pickle): re-save the model "
            "with save_pretrained(..., safe_serialization=True)"
        )
    try:
        return load_file(str(path))
    except SafetensorError as err:
        raise MarianImportError(f"{path}: not a readable safetensors file ({err})") from None


def our_state(
    weights: dict[str, torch.Tensor], cfg: ModelConfig, rows: list[int], path: Path
) -> dict[str, torch.Tensor]:
    """Marian's tensors under our names, vocabulary rows permuted."""

    def get(name: str) -> torch.Tensor:
        if name not in weights:
            raise MarianImportError(f"{path}: tensor {name} missing")
        return weights[name].float()

    bias = weights.get("final_logits_bias")
    if bias is not None and bias.abs().max() > 0:
        raise MarianImportError(
            f"{path}: tensor final_logits_bias is not zero; aiayn's output projection has no bias"
        )

    def vocab(t: torch.Tensor) -> torch.Tensor:
        if t.shape[0] != len(rows):
            raise MarianImportError(
                f"{path}: a vocabulary tensor has {t.shape[0]} rows but config.json says "
                f"vocab_size={len(rows)}; the weights and config.json come from different models"
            )
        return torch.cat((torch.zeros(1, t.shape[1]), t[rows]))  # (V+1, D)

    state = {"src_embed.weight": vocab(get("model.shared.weight"))}
    if not cfg.tie_embeddings:
        state["tgt_embed.weight"] = state["src_embed.weight"]
        state["out_proj.weight"] = vocab(get("lm_head.weight"))
    for side, n in (("encoder", cfg.n_encoder_layers), ("decoder", cfg.n_decoder_layers)):
        for i in range(n):
            theirs = f"model.{side}.layers.{i}."
            mine = f"{side}_layers.{i}."
            parts = [("self_attn", "self_attn", "self_attn_layer_norm", "self_attn_residual")]
            if side == "decoder":
                parts.append(
                    ("cross_attn", "encoder_attn", "encoder_attn_layer_norm", "cross_attn_residual")
                )
            for ours_attn, attn, norm, residual in parts:
                for kind in ("weight", "bias"):
                    state[f"{mine}{ours_attn}.w_qkv.{kind}"] = torch.cat(
                        [get(f"{theirs}{attn}.{p}_proj.{kind}") for p in "qkv"]
                    )  # (3D, D) or (3D,): W^Q, W^K, W^V stacked
                    state[f"{mine}{ours_attn}.w_o.{kind}"] = get(f"{theirs}{attn}.out_proj.{kind}")
                    state[f"{mine}{residual}.norm.{kind}"] = get(f"{theirs}{norm}.{kind}")
            for kind in ("weight", "bias"):
                state[f"{mine}ffn.w_1.{kind}"] = get(f"{theirs}fc1.{kind}")
                state[f"{mine}ffn.w_2.{kind}"] = get(f"{theirs}fc2.{kind}")
                state[f"{mine}ffn_residual.norm.{kind}"] = get(f"{theirs}final_layer_norm.{kind}")
    return state


def write_tokenizer(
    directory: Path,
    config: dict[str, Any],
    rows: list[int],
    out: Path,
    spm_file: str = TOKENIZER_FILES[0],
) -> bytes:
    """A SentencePiece model whose ids are ours: Marian's `spm_file` (source.spm, or
    target.spm) segments, vocab.json names the pieces. Pieces that model lacks (the other
    side's) are kept for decoding but marked unused, so they never change how its side is
    segmented. Returns the model's bytes, which `out` is to be written with."""
    # Protobuf's generated module makes its classes at import time, unseen by the type checker;
    # imported by name, its attributes are typed Any.
    pb = importlib.import_module("sentencepiece.sentencepiece_model_pb2")

    source = directory / spm_file
    piece_of = read_vocab(directory, config)
    proto = pb.ModelProto()
    try:
        proto.ParseFromString(source.read_bytes())
    except Exception as err:  # protobuf's DecodeError and kin: damaged bytes
        raise MarianImportError(f"{source}: not a SentencePiece model ({err})") from None
    scores = {p.piece: p.score for p in proto.pieces}
    floor = min(scores.values(), default=0.0) - 10.0
    specials = {
        0: ("<pad>", pb.ModelProto.SentencePiece.CONTROL),
        1: ("<s>", pb.ModelProto.SentencePiece.CONTROL),
        2: (piece_of[rows[1]], pb.ModelProto.SentencePiece.CONTROL),
        3: (piece_of[rows[2]], pb.ModelProto.SentencePiece.UNKNOWN),
    }
    pieces = [specials[i] for i in range(4)]
    for row in rows[3:]:
        piece = piece_of[row]
        kind = pb.ModelProto.SentencePiece.NORMAL
        if piece not in scores:
            kind = pb.ModelProto.SentencePiece.UNUSED
        pieces.append((piece, kind))
    del proto.pieces[:]
    for piece, kind in pieces:
        proto.pieces.add(piece=piece, score=scores.get(piece, floor), type=kind)
    spec = proto.trainer_spec
    spec.pad_id, spec.bos_id, spec.eos_id, spec.unk_id = 0, 1, 2, 3
    spec.pad_piece, spec.bos_piece = "<pad>", "<s>"
    spec.eos_piece, spec.unk_piece = specials[2][0], specials[3][0]
    return proto.SerializeToString()


def read_vocab(directory: Path, config: dict[str, Any]) -> dict[int, str]:
    """vocab.json as {Marian id: piece}: every id from 0 to vocab_size - 1 once."""
    path = directory / TOKENIZER_FILES[1]
    vocab = read_json(path, "give the vocab.json saved with the model")  # piece -> Marian id
    values: list[Any] = list(vocab.values()) if isinstance(vocab, dict) else [None]
    ids = sorted(values) if all(type(i) is int for i in values) else [-1]
    if ids != list(range(len(ids))):
        raise MarianImportError(f"{path}: not a map of pieces to the ids 0, 1, 2, ...")
    if len(ids) != config["vocab_size"]:
        raise MarianImportError(
            f"{path}: {len(ids)} pieces, but config.json has vocab_size={config['vocab_size']}"
        )
    return {i: p for p, i in vocab.items()}


def import_marian(directory: str | Path, out: str | Path) -> Path:
    """Write an aiayn model directory (config.json, model.safetensors, spm.model) at `out`,
    atomically, from a local Marian checkpoint directory. Nothing is downloaded."""
    directory = Path(directory)
    if not directory.is_dir():
        raise MarianImportError(f"{directory}: not a directory")
    config = read_config(directory)
    for path in (directory / name for name in TOKENIZER_FILES):  # before anything loads
        if not path.is_file():
            raise MarianImportError(
                f"{path}: missing; the Marian tokenizer files ({', '.join(TOKENIZER_FILES)}) "
                "are needed beside config.json: copy the whole model directory"
            )
    cfg = model_config(config, directory / "config.json")
    read_vocab(directory, config)  # its size checked before `permutation` counts to vocab_size
    rows = permutation(config)
    state = our_state(read_weights(directory), cfg, rows, directory / WEIGHTS)
    model = built_for(cfg, state, directory)
    with atomic_directory(Path(out)) as tmp:
        model.save(tmp)
        source = write_tokenizer(directory, config, rows, tmp)
        save_tokenizer(source, tmp / TOKENIZER_FILE, directory / TOKENIZER_FILES[0])
        if (directory / TARGET_SPM).is_file():  # the target side's own segmentation
            target = write_tokenizer(directory, config, rows, tmp, TARGET_SPM)
            if target != source:
                save_tokenizer(target, tmp / TARGET_TOKENIZER_FILE, directory / TARGET_SPM)
    return Path(out)


def save_tokenizer(model: bytes, path: Path, made_from: Path) -> None:
    """Write a tokenizer made from `made_from` and load it: a damaged .spm is refused here,
    nothing left behind (the directory is built aside)."""
    path.write_bytes(model)
    try:
        Tokenizer(path)
    except DataError as err:
        reason = str(err).split("(", 1)[-1].split(")")[0]
        raise MarianImportError(
            f"{made_from} with {TOKENIZER_FILES[1]}: not a SentencePiece model we can use "
            f"({reason}); copy them again from the model's directory"
        ) from None
