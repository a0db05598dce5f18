"""`--too-long split`: a sentence over --max-input-tokens is cut into chunks at clause
punctuation, then between words, each within the limit and each translated: nothing is lost."""

import random

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.chunks import split_sentence
from aiayn.documents.inline import Span, Tagged
from aiayn.documents.lines import LineTranslator
from aiayn.documents.protect import Protector
from tests.documents.conftest import WordTokenizer

QUIET = DocumentOptions(progress=False)
ENCODE = WordTokenizer().encode  # one piece a word


def paragraph(n_words: int, seed: int = 0) -> str:
    """n words of running text with a comma now and then and no sentence end."""
    rng = random.Random(seed)
    words = [rng.choice(["dog", "cat", "sees", "the", "big", "runs"]) for _ in range(n_words)]
    return " ".join(w + ("," if rng.random() < 0.08 else "") for w in words)


def test_chunks_fit_cover_the_sentence_and_end_at_clause_punctuation():
    text = paragraph(300)
    chunks = split_sentence(Tagged(text), 40, ENCODE)
    assert " ".join(c.text for c in chunks) == text
    assert all(len(c.text.split()) <= 40 for c in chunks)
    assert len(chunks) >= 300 // 40
    ends = [c.text[-1] for c in chunks[:-1]]
    assert sum(e == "," for e in ends) >= len(ends) // 2  # most end after a comma


def test_a_sentence_within_the_limit_is_itself():
    sentence = Tagged("A dog sees a cat.")
    assert split_sentence(sentence, 40, ENCODE) == [sentence]


def test_no_chunk_ends_inside_a_tag():
    text = " ".join(f"w{k}" for k in range(30))
    bold = Span(text.index("w8 "), text.index(" w13"), "b")  # w8 ... w12
    chunks = split_sentence(Tagged(text, (bold,)), 10, ENCODE)
    assert " ".join(c.text for c in chunks) == text
    (holder,) = [c for c in chunks if c.spans]
    assert holder.text[holder.spans[0].start : holder.spans[0].end] == text[bold.start : bold.end]


def test_an_8000_word_paragraph_comes_back_whole(scripted, capsys):
    text = paragraph(8000)
    out, n = translate_document(
        scripted, text + "\n", "text", DecodeConfig(max_input_tokens=500), QUIET
    )
    assert len(out.split()) == 8000 and n >= 16
    assert sorted(out.lower().replace(",", "").split()) == sorted(text.replace(",", "").split())
    assert "truncated" not in capsys.readouterr().err


def test_line_mode_splits_a_long_line_too(scripted):
    lines = LineTranslator(scripted, Protector())
    out = lines.translate([paragraph(2000), "A dog."], DecodeConfig(max_input_tokens=300))
    assert len(out[0].split()) == 2000 and out[1] == "DOG. A"
    assert all(len(x.split()) <= 300 for call in scripted.calls for x in call)


def test_with_a_tiny_model_every_chunk_is_translated(talking_model, capsys):
    """The 8,000 words of issue 55 through a real (random) model: the output grows with the
    input (truncation gave 1,075 words), and nothing is said about truncating."""
    from aiayn.engines import open_translator

    translator = open_translator(talking_model)
    cfg = DecodeConfig(beam=1, max_input_tokens=1000, min_len=10, max_len_a=0.0, max_len_b=12)
    text = paragraph(8000, seed=3)
    n_pieces = len(translator.tokenizer.encode([text])[0])
    out, _ = translate_document(translator, text + "\n", "text", cfg, QUIET)
    assert "truncated" not in capsys.readouterr().err
    n_chunks = -(-n_pieces // 1000)
    assert len(translator.tokenizer.encode([out])[0]) >= 10 * n_chunks  # every chunk said something
