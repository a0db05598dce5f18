"""--tgt-lang: the model's tag goes in front of every line, through every engine; a multilingual
model asks for a language, a bilingual one refuses one."""

from __future__ import annotations

import pytest

from aiayn import DecodeConfig, open_translator
from aiayn.cli import main
from aiayn.engines.languages import MultilingualTranslator, model_languages
from aiayn.engines.search import SearchTranslator

GREEDY = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=6)
LINES = ["In the beginning God created the heavens.", "", "The dog sees the cat."]


class Recorder:
    """The inner translator: records the lines it is given."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.seen: list[list[str]] = []

    def translate(self, lines, cfg=None, controls=None):
        self.seen.append(list(lines))
        return [line.upper() for line in lines]


def test_the_models_languages_are_its_tags(multilingual_model, talking_model):
    assert model_languages(open_translator(multilingual_model)) == ["de", "en", "fr"]
    assert model_languages(open_translator(talking_model)) == []


def test_every_nonblank_line_gets_the_tag_and_the_tag_is_one_piece(multilingual_model):
    translator = open_translator(multilingual_model, tgt_lang="fr")
    assert isinstance(translator, MultilingualTranslator)
    recorder = Recorder(translator.tokenizer)
    asks_fr = MultilingualTranslator(recorder, ["de", "en", "fr"], "fr")  # type: ignore[arg-type]
    asks_fr.translate([*LINES, "<2de> Hello."])
    assert recorder.seen == [["<2fr> " + LINES[0], "", "<2fr> " + LINES[2], "<2fr> Hello."]]
    # SentencePiece's dummy prefix comes first ("▁"), as in the binarized training lines
    ids = translator.tokenizer.encode(translator.tagged(LINES[:1]))[0]
    assert translator.tokenizer.pieces(ids[:3]) == ["▁", "<2fr>", "▁I"]


def test_the_tag_steers_the_model(multilingual_model):
    """The same lines asked for three languages: what the model gets differs, and the result
    is the one it gives for lines tagged by hand."""
    plain = open_translator(multilingual_model)
    scores = set()
    for lang in ("de", "en", "fr"):
        found = open_translator(multilingual_model, tgt_lang=lang).nbest(LINES, GREEDY)
        by_hand = [f"<2{lang}> {x}" if x else x for x in LINES]
        assert plain.nbest(by_hand, GREEDY) == found
        assert found[1][0].text == ""
        scores.add(found[0][0].score)
    assert len(scores) == 3  # a random model: each tag gives another score


def test_a_multilingual_model_without_a_language_names_its_languages(multilingual_model):
    translator = open_translator(multilingual_model)
    with pytest.raises(ValueError, match=r"line 1: no target language.*de, en, fr.*--tgt-lang"):
        translator.translate(LINES, GREEDY)
    assert translator.translate(["<2de> Hello."], GREEDY)  # a line with its own tag is fine


@pytest.mark.parametrize(
    "lang, says",
    [
        ("es", r"--tgt-lang es: this model was not trained to translate into it.*de, en, fr"),
        ("german", r"--tgt-lang 'german': not a language code.*de, en, fr"),
        ("xq", r"--tgt-lang 'xq': not a language code"),
    ],
)
def test_a_language_the_model_lacks_is_refused(multilingual_model, lang, says):
    with pytest.raises(ValueError, match=says):
        open_translator(multilingual_model, tgt_lang=lang)


def test_a_bilingual_model_is_unchanged_and_refuses_a_language(talking_model):
    assert isinstance(open_translator(talking_model), SearchTranslator)
    with pytest.raises(ValueError, match=r"--tgt-lang de: this model is bilingual.*drop"):
        open_translator(talking_model, tgt_lang="de")


def test_translate_command_writes_the_tag(multilingual_model, tmp_path, capsys):
    lines = [*LINES, "Die Frau liest ein Buch unter dem grünen Baum."]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = open_translator(multilingual_model, tgt_lang="de").translate(lines, GREEDY)
    flags = ["--beam", "1", "--max-len-a", "0", "--max-len-b", "6"]
    argv = ["translate", "--model", str(multilingual_model), "--input", str(tmp_path / "in.txt")]
    assert main([*argv, *flags, "--tgt-lang", "de", "--src-lang", "auto"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == expected
    assert "source language (py3langid, per line): en 2 line(s), de 1 line(s)" in err
    assert "already in de, the target language: line(s) 4" in err


def test_alternatives_and_attention_see_the_tag(multilingual_model):
    translator = open_translator(multilingual_model, tgt_lang="de")
    found = translator.nbest(LINES[:1], GREEDY)[0][0]
    maps = translator.attention(LINES[0], found)
    assert maps.source[:2] == ["▁", "<2de>"]
    words = translator.alternatives(LINES[0], 2, GREEDY)
    assert words[0].translation.text == found.text


@pytest.mark.parametrize("engine", ["ctranslate2", "onnx"])
def test_exported_engines_get_the_tag(multilingual_model, tmp_path, engine):
    """The tag is text in front of the source: an exported model reads it as ours does."""
    out = tmp_path / engine
    assert main(["export", str(multilingual_model), "--format", engine, "--out", str(out)]) == 0
    search = GREEDY.replace(length_penalty="power")
    ours = open_translator(multilingual_model, tgt_lang="fr").translate(LINES, search)
    theirs = open_translator(out, engine=engine, tgt_lang="fr")
    assert isinstance(theirs, MultilingualTranslator)
    assert theirs.translate(LINES, search) == ours


def test_documents_and_evaluate_take_the_language(multilingual_model, tmp_path, capsys):
    doc = tmp_path / "doc.txt"
    doc.write_text(
        "The dog sees the cat. The woman reads.\n\nIn the beginning.\n", encoding="utf-8"
    )
    model = ["--model", str(multilingual_model), "--beam", "1", "--max-len-b", "4"]
    assert (
        main(["translate", *model, "--input", str(doc), "--format", "text", "--tgt-lang", "fr"])
        == 0
    )
    assert capsys.readouterr().out.count("\n\n") == 1  # the paragraphs kept
    assert main(["translate", *model, "--input", str(doc), "--format", "text"]) == 2
    assert "no target language" in capsys.readouterr().err
    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("The dog sees the cat.\n", encoding="utf-8")
    ref.write_text("Le chien voit le chat.\n", encoding="utf-8")
    evaluate = ["evaluate", *model, "--src-file", str(src), "--ref-file", str(ref)]
    assert main([*evaluate, "--tgt-lang", "fr"]) == 0
    assert "chrF" in capsys.readouterr().out
