"""`aiayn evaluate --directions`: per-direction chrF, BLEU in the target's tokenizer and the
off-target rate, with scripted translators whose right answers are known."""

from __future__ import annotations

import json

import pytest

from aiayn.cli import main
from aiayn.data.data_dir import DataDir
from aiayn.evaluate.directions import bleu_tokenizer, evaluate_directions, matrix, parse_directions
from aiayn.evaluate.langid import Identifier, off_target_rate
from aiayn.plot import directions_figure
from tests.languages.tiny_multilingual import LANGS, SENTENCES


def perfect(lines: list[str], tgt: str) -> list[str]:
    """Knows every test sentence in every language."""
    for src_lines in SENTENCES.values():
        if lines == src_lines[: len(lines)]:
            return SENTENCES[tgt][: len(lines)]
    raise AssertionError(f"not a test source: {lines}")


def copies(lines: list[str], tgt: str) -> list[str]:
    """The off-target failure: the source copied."""
    return list(lines)


def test_every_direction_is_scored(multilingual_data):
    data = DataDir.open(multilingual_data)
    pairs = parse_directions("all", data, "test", list(LANGS))
    assert len(pairs) == 6 and ("de", "fr") in pairs
    found = evaluate_directions(data, "test", pairs, perfect, Identifier(LANGS))
    assert [r.chrf for r in found] == pytest.approx([100.0] * 6)
    assert [r.bleu for r in found] == pytest.approx([100.0] * 6)
    assert all(r.off_target == 0 for r in found)
    kinds = {r.direction: r.trained for r in found}
    assert kinds["en-de"] is True and kinds["de-fr"] is False  # zero-shot: not in meta.json


def test_copied_sources_are_off_target_and_score_low(multilingual_data):
    data = DataDir.open(multilingual_data)
    found = evaluate_directions(
        data, "test", [("en", "de"), ("de", "fr")], copies, Identifier(LANGS), n=4
    )
    assert [r.sentences for r in found] == [4, 4]
    assert all(r.off_target == 1.0 for r in found)
    assert all(r.chrf < 40 for r in found)


def test_the_off_target_rate_counts_outputs_in_another_language():
    identify = Identifier(LANGS)
    outputs = [SENTENCES["de"][0], SENTENCES["en"][1], SENTENCES["de"][2], ""]
    assert identify.identify(outputs) == ["de", "en", "de", "?"]
    assert off_target_rate(outputs, "de", identify) == 0.5  # the English line and the blank


def test_bleu_uses_the_target_languages_tokenizer():
    assert bleu_tokenizer("zh") == ("zh", "")
    assert bleu_tokenizer("de") == ("13a", "")
    assert bleu_tokenizer("ja")[0] == "ja-mecab"
    assert bleu_tokenizer("ko")[0] == "ko-mecab"


def test_a_direction_the_data_lacks_is_named(multilingual_data):
    data = DataDir.open(multilingual_data)
    lacks = r"en-es: the data directory has no .*test\.es\.txt.*de, en, fr"
    with pytest.raises(ValueError, match=lacks):
        parse_directions("en-de,en-es", data, "test", list(LANGS))
    with pytest.raises(ValueError, match="'en_de' is not a direction"):
        parse_directions("en_de", data, "test", list(LANGS))


def test_evaluate_command_writes_json_and_plot_draws_the_matrix(
    multilingual_model, multilingual_data, tmp_path, capsys
):
    out = tmp_path / "directions.json"
    argv = ["evaluate", "--model", str(multilingual_model), "--data", str(multilingual_data)]
    flags = ["--beam", "1", "--max-len-a", "0", "--max-len-b", "4", "--n", "2"]
    assert main([*argv, *flags, "--directions", "en-de,de-fr", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "de-fr" in printed and "zero-shot" in printed and "tok:13a" in printed
    results = json.loads(out.read_text())["directions"]
    assert [r["direction"] for r in results] == ["en-de", "de-fr"]
    assert all(r["sentences"] == 2 for r in results)
    langs, cells = matrix(results)
    assert langs == ["de", "en", "fr"]
    assert cells[1][0] == results[0]["chrf"] and cells[0][2] == results[1]["chrf"]
    assert cells[0][0] is None
    figure = directions_figure(langs, cells, "chrF", "test")
    drawn = figure.axes[0].images[0].get_array()
    assert drawn[1, 0] == pytest.approx(results[0]["chrf"])
    assert main(["plot", "directions", str(out), "--out", str(tmp_path / "d.png")]) == 0
    assert (tmp_path / "d.png").stat().st_size > 0
