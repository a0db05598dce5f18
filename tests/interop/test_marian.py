"""aiayn import marian: a random local MarianMTModel (nothing downloaded) gives the same logits
through aiayn, its tokenizer the same ids, and bad directories clear errors."""

import json
import shutil

import pytest
import torch
from transformers import MarianConfig, MarianMTModel

from aiayn.cli import main
from aiayn.data.tokenizer import Tokenizer
from aiayn.interop.marian import import_marian, permutation
from aiayn.model import Transformer

SENTENCES = ["The dog sees a cat.", "The old man reads a big red book and the tree."]


def marian_dir(tiny_data, out, target_spm: bytes | None = None, **changes):
    """A random Marian model in Marian's conventions: eos 0, unk 1, pad last; its
    SentencePiece model is the tiny data's (its target.spm `target_spm` where given)."""
    tokenizer = Tokenizer(tiny_data)
    pieces = ["</s>", "<unk>", *tokenizer.pieces(range(4, tokenizer.vocab_size))]
    V = len(pieces) + 1
    torch.manual_seed(0)
    sizes = {
        "d_model": 16,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_ffn_dim": 32,
        "decoder_ffn_dim": 32,
        "encoder_attention_heads": 4,
        "decoder_attention_heads": 4,
    }
    conventions = {
        "pad_token_id": V - 1,
        "eos_token_id": 0,
        "decoder_start_token_id": V - 1,
        "scale_embedding": True,
        "activation_function": "swish",
    }
    config = MarianConfig(
        vocab_size=V, max_position_embeddings=64, **(sizes | conventions | changes)
    )
    config._attn_implementation = "eager"
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(torch.randn_like(p) * 0.2)
    model.save_pretrained(out)
    vocab = {p: i for i, p in enumerate(pieces)} | {"<pad>": V - 1}
    (out / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    for name in ("source.spm", "target.spm"):
        shutil.copyfile(tiny_data / "spm.model", out / name)
    if target_spm is not None:
        (out / "target.spm").write_bytes(target_spm)
    return model, vocab


def test_same_logits_and_ids_as_hugging_face(tiny_data, tmp_path):
    marian, vocab = marian_dir(tiny_data, tmp_path / "marian")
    assert (
        main(["import", "marian", str(tmp_path / "marian"), "--out", str(tmp_path / "ours")]) == 0
    )
    ours = Transformer.load(tmp_path / "ours").eval()
    tokenizer = Tokenizer(tmp_path / "ours")
    rows = torch.tensor(permutation(marian.config.to_dict()))  # Marian's row of our ids 1..
    original = Tokenizer(tiny_data)  # Marian's own: pieces looked up in vocab.json
    for text in SENTENCES:
        mine = tokenizer.encode([text])[0]
        theirs = [vocab[p] for p in original.pieces(original.encode([text])[0])]
        assert rows[torch.tensor(mine) - 1].tolist() == theirs
        assert tokenizer.decode([mine])[0] == text
    src_ours = torch.tensor([tokenizer.encode([SENTENCES[1]])[0] + [ours.cfg.eos_id]])
    tgt_ours = torch.tensor([[ours.cfg.bos_id, 7, 9, 12, 5]])
    with torch.no_grad():
        got = ours(src_ours, tgt_ours)[..., 1:]  # (1, T, V): our ids 1.. in Marian's order
        expected = marian(input_ids=rows[src_ours - 1], decoder_input_ids=rows[tgt_ours - 1]).logits
    torch.testing.assert_close(got, expected[..., rows], rtol=0, atol=1e-4)


def test_translate_runs_on_the_imported_directory(tiny_data, tmp_path, capsys):
    marian_dir(tiny_data, tmp_path / "marian")
    import_marian(tmp_path / "marian", tmp_path / "ours")
    (tmp_path / "in.txt").write_text("\n".join(SENTENCES) + "\n")
    assert (
        main(
            [
                "translate",
                "--model",
                str(tmp_path / "ours"),
                "--input",
                str(tmp_path / "in.txt"),
                "--max-len-b",
                "5",
            ]
        )
        == 0
    )
    assert len(capsys.readouterr().out.splitlines()) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scale_embedding": False}, "field scale_embedding=False"),
        ({"decoder_ffn_dim": 64}, "field decoder_ffn_dim=64"),
        ({"share_encoder_decoder_embeddings": False}, "field share_encoder_decoder_embeddings"),
    ],
)
def test_what_we_cannot_represent_is_refused_by_field(change, message, tiny_data, tmp_path):
    marian_dir(tiny_data, tmp_path / "marian", **change)
    with pytest.raises(ValueError, match=message) as err:
        import_marian(tmp_path / "marian", tmp_path / "ours")
    assert "config.json" in str(err.value)
    assert not (tmp_path / "ours").exists()


def test_foreign_directories(tmp_path, capsys):
    assert main(["import", "marian", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    assert "config.json: missing" in capsys.readouterr().err
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bart"}))
    assert main(["import", "marian", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    assert "field model_type is 'bart'" in capsys.readouterr().err
