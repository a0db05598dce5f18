"""A tiny multilingual model and data directory for the tests: a random-init tiny Transformer
with a SentencePiece model that holds the tags <2de>, <2en> and <2fr>, and a held-out split
written once per language (`test.{lang}.txt`, line-aligned, real sentences so that the
language identifier can tell them apart)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import sentencepiece as spm
import torch

from aiayn.data.languages import tag
from tests.conftest import tiny_model

LANGS = ("de", "en", "fr")
TRAINED = ["en-de", "de-en", "en-fr", "fr-en"]  # English-centric: de-fr is zero-shot
SENTENCES = {
    "en": [
        "In the beginning God created the heavens and the earth.",
        "And the earth was without form and void, and darkness was upon the face of the deep.",
        "And God said, Let there be light: and there was light.",
        "And God saw the light, that it was good, and he divided the light from the darkness.",
        "The dog sees the cat in the garden of the old house.",
        "The woman reads a book under the green tree.",
    ],
    "de": [
        "Im Anfang schuf Gott die Himmel und die Erde.",
        "Und die Erde war wüst und leer, und Finsternis war über der Tiefe.",
        "Und Gott sprach: Es werde Licht! und es ward Licht.",
        "Und Gott sah das Licht, daß es gut war; und Gott schied das Licht von der Finsternis.",
        "Der Hund sieht die Katze im Garten des alten Hauses.",
        "Die Frau liest ein Buch unter dem grünen Baum.",
    ],
    "fr": [
        "Au commencement, Dieu créa les cieux et la terre.",
        "La terre était informe et vide: il y avait des ténèbres à la surface de l'abîme.",
        "Dieu dit: Que la lumière soit! Et la lumière fut.",
        "Dieu vit que la lumière était bonne; et Dieu sépara la lumière d'avec les ténèbres.",
        "Le chien voit le chat dans le jardin de la vieille maison.",
        "La femme lit un livre sous l'arbre vert.",
    ],
}


def write_tokenizer(path: Path) -> int:
    """A SentencePiece BPE model with one piece per language tag; returns its size."""
    text = [s for lines in SENTENCES.values() for s in lines] * 4
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=model,
        model_type="bpe",
        vocab_size=160,
        hard_vocab_limit=False,
        character_coverage=1.0,
        user_defined_symbols=[tag(lang) for lang in LANGS],
        pad_id=0,
        bos_id=1,
        eos_id=2,
        unk_id=3,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())
    return spm.SentencePieceProcessor(model_file=str(path)).get_piece_size()


def make_model(out: Path) -> Path:
    """A tiny random model (weights scrambled so that sentences get outputs of their own) that
    reads the tags: a multilingual model directory."""
    out.mkdir(parents=True)
    size = write_tokenizer(out / "spm.model")
    model = tiny_model(seed=3, d_model=64, vocab_size=size)
    with torch.no_grad():
        for weight in model.parameters():
            weight.add_(torch.randn_like(weight) * 0.5)
    model.save(out)
    return out


def make_data(out: Path, split: str = "test") -> Path:
    """A multilingual data directory's held-out split: `{split}.{lang}.txt` per language."""
    out.mkdir(parents=True)
    for lang, lines in SENTENCES.items():
        (out / f"{split}.{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    meta = {
        "src_lang": "multi",
        "tgt_lang": "multi",
        "vocab_size": 160,
        "sizes": {"train": 0, "valid": 0, "test": len(SENTENCES["en"])},
        "n_refs": {"valid": 1, "test": 1},
        "corpus": "tests/languages/tiny_multilingual.py",
        "directions": TRAINED,
    }
    (out / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return out
