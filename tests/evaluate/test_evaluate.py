"""Scores: sacreBLEU's BLEU and chrF, and the length ratio that shows a search too short or long."""

import pytest

from aiayn.evaluate.scores import score


def test_length_ratio_is_hypothesis_over_reference_length():
    scores = score(["the cat sat"], [["the cat sat on the mat"]])
    assert scores.length_ratio == pytest.approx(3 / 6)
    assert "length ratio 0.500" in str(scores)


def test_length_ratio_uses_the_closest_reference_when_there_are_several():
    scores = score(["the cat sat"], [["the cat sat on the mat"], ["a cat sat"]])
    assert scores.length_ratio == pytest.approx(1.0)


def test_references_must_match_the_hypotheses():
    with pytest.raises(ValueError, match="reference set 1 has 2 lines for 1 hypotheses"):
        score(["a"], [["a", "b"]])


def test_validation_and_aiayn_evaluate_score_alike(tiny_run, tiny_data, capsys):
    """Validation during training and `aiayn evaluate --beam 1` are one procedure: the same
    model and split give the same BLEU and chrF (without the repetition guards the run's close
    may have chosen: validation decodes as the paper does)."""
    import contextlib
    import re

    from aiayn.cli import main
    from aiayn.config import TrainConfig
    from aiayn.layout import model_dir
    from aiayn.model import Transformer
    from aiayn.train.validate import validate

    directory = model_dir(tiny_run)
    model = Transformer.load(directory)
    cfg = TrainConfig(max_tokens=4096, valid_bleu_sentences=0)
    found = validate(model, tiny_data, cfg, contextlib.nullcontext, directory)
    args = ["--data", str(tiny_data), "--split", "valid", "--beam", "1"]
    args += ["--no-repeat-ngram", "0", "--stutter-guard", "0"]
    assert main(["evaluate", "--model", str(tiny_run), *args]) == 0
    printed = capsys.readouterr().out
    bleu = float(re.search(r"^BLEU (\S+)", printed, re.M).group(1))
    chrf = float(re.search(r"^chrF (\S+)", printed, re.M).group(1))
    assert (bleu, chrf) == (round(found.bleu, 2), round(found.chrf, 2))
    assert found.sentences == int(re.search(r"^(\d+) sentences", printed, re.M).group(1))


def test_repetition_is_a_word_four_times_in_a_row_or_a_repeated_trigram():
    from aiayn.evaluate.scores import repeats, repetition_rate

    assert repeats("und ganz ganz ganz ganz gut")
    assert not repeats("und ganz ganz ganz gut")  # three in a row is not yet
    assert repeats("er sprach zu ihm und er sprach zu ihr")  # "er sprach zu" twice
    assert not repeats("er sprach zu ihm und sie sprach zu ihr")
    assert repetition_rate(["a a a a", "a b c", "", "x y z x y z"]) == 0.5
    scores = score(["a a a a b", "c d e"], [["a b", "c d e"]])
    assert (scores.repetition, scores.reference_repetition) == (0.5, 0.0)
    assert "repetition 50.0% of outputs (references 0.0%)" in str(scores)


def test_stutter_is_a_piece_of_two_to_five_letters_four_times_inside_a_word():
    from aiayn.evaluate.scores import stutter_rate, stutters

    assert stutters("das mehrererererer Mal")  # "er" five times
    assert stutters("Lizizizizierung")  # "iz" four times
    assert stutters("MAMAmamax")  # case aside
    assert not stutters("Lizizizierung")  # three times is not yet
    assert stutters("herrWWWWWWWW")  # one letter eight times: "WW" four times
    assert not stutters("Aaaaaah")  # a letter drawn out, as people write it
    assert not stutters("Barbarossa Ananas Kokosnuss")
    assert not stutters("ha ha ha ha")  # words apart: repetition's to count, not stutter's
    assert stutter_rate(["mehrererer er", "abababab", "", "x"]) == 0.25
    scores = score(["abababab c", "c d e"], [["a b", "c d e"]])
    assert (scores.stutter, scores.reference_stutter) == (0.5, 0.0)
    assert "stutter 50.0% of outputs (references 0.0%)" in str(scores)


def test_case_insensitive_bleu_is_sacrebleus_lowercase_and_says_so():
    scores = score(["THE CAT SAT ON THE MAT"], [["the cat sat on the mat"]], case_insensitive=True)
    assert scores.bleu == 0.0 and scores.bleu_lowercase == pytest.approx(100.0)
    printed = str(scores)
    assert "BLEU 0.00 case-sensitive (nrefs:1|case:mixed|" in printed
    assert "BLEU 100.00 case-insensitive (nrefs:1|case:lc|" in printed
    assert score(["a"], [["a"]]).bleu_lowercase is None  # only when asked


@pytest.mark.parametrize(("case", "first"), [("upper", "THE"), ("title", "The"), ("as-is", "the")])
def test_evaluate_split_translates_cased_copies_against_the_ordinary_references(
    tiny_data, case, first
):
    from aiayn.data.casing import apply_case
    from aiayn.data.data_dir import DataDir
    from aiayn.evaluate.split import evaluate_split

    seen: list[str] = []

    def translate(sources: list[str]) -> list[str]:
        seen.extend(sources)
        return sources  # the source as its own "translation"

    found = evaluate_split(tiny_data, "test", translate, case=case)
    sources = DataDir.open(tiny_data).sources("test")
    assert seen == [apply_case(line, case) for line in sources]
    assert found.scores.bleu_lowercase is not None
    assert found.scores.bleu_lowercase >= found.scores.bleu


def test_aiayn_evaluate_case_prints_both_bleus(tiny_run, tiny_data, capsys):
    import re

    from aiayn.cli import main

    args = ["evaluate", "--model", str(tiny_run), "--data", str(tiny_data), "--beam", "1"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert "case-insensitive" not in plain  # the default output is as before
    assert main([*args, "--case", "as-is"]) == 0
    as_is = capsys.readouterr().out
    bleu = re.search(r"^BLEU (\S+) \(", plain, re.M).group(1)
    assert re.search(r"^BLEU (\S+) case-sensitive", as_is, re.M).group(1) == bleu
    assert main([*args, "--case", "upper"]) == 0
    upper = capsys.readouterr().out
    assert "sources upper-cased" in upper
    sensitive = float(re.search(r"^BLEU (\S+) case-sensitive \(.*case:mixed", upper, re.M)[1])
    insensitive = float(re.search(r"^BLEU (\S+) case-insensitive \(.*case:lc", upper, re.M)[1])
    assert insensitive >= sensitive
