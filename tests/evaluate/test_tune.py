"""The length setting chosen on validation (aiayn/evaluate/tune.py): chosen right, stored with
the model, used by every way of translating, and kept through averaging, resume, `aiayn average`
and export."""

import json
import re

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from aiayn import DecodeConfig, layout, open_translator
from aiayn.cli import main
from aiayn.data.data_dir import DataDir
from aiayn.decode.translate import decode_lines, decoder, load_model, translate_lines
from aiayn.evaluate.scores import stutter_rate
from aiayn.evaluate.search_grid import SearchSetting
from aiayn.evaluate.tune import (
    GUARDED_SETTINGS,
    GUARDS,
    choose,
    direction_sample,
    excess,
    length_grid,
    reference_terms,
    repeat_bounds,
    term_controls,
    tune_search,
    validation_lines,
)
from aiayn.evaluate.tuned import PAPER, read_tuned
from tests.conftest import TINY_RUN
from tests.train.multilingual_fixture import make_multilingual_dir


def test_the_chosen_setting_has_the_best_validation_bleu_of_its_grid(tiny_run, tiny_data):
    """Every row of the grid (the length settings, then the best few under each repetition
    guard) is what that setting's own search gets, and the best BLEU within the repetition
    bounds wins."""
    model, tokenizer = load_model(tiny_run)
    grid, base = length_grid((0.6, 1.0, 2.0)), DecodeConfig(beam=3)
    tuned = tune_search(model, tokenizer, tiny_data, base=base, grid=grid)
    sources, refs = DataDir(tiny_data).sources("valid"), DataDir(tiny_data).references("valid")
    tried = [SearchSetting(**row["setting"]) for row in tuned.grid]
    assert tried[: len(grid)] == grid
    assert {s.guards for s in tried[len(grid) :]} == set(GUARDS)
    assert len(tried) == len(grid) + GUARDED_SETTINGS * len(GUARDS)
    for setting, row in zip(tried, tuned.grid, strict=True):
        found = translate_lines(model, tokenizer, sources, setting.apply(base))
        assert row["bleu"] == round(BLEU().corpus_score(found, refs).score, 4)
        assert row["stutter"] == round(stutter_rate(found), 4)
    bounds = repeat_bounds(refs[0])
    within = [row for row in tuned.grid if excess(row, bounds) <= 1]
    best = max(within or tuned.grid, key=lambda row: (-max(excess(row, bounds), 1), row["bleu"]))
    assert tuned.tuned_on["bleu"] == best["bleu"] and tuned.setting in tried
    assert grid[0] == PAPER and tuned.tuned_on["paper_bleu"] == tuned.grid[0]["bleu"]
    assert tuned.power is not None and tuned.power.length_penalty == "power"
    assert tuned.power.guards == (0, 0)  # CTranslate2 gets no guard unless asked


def test_a_setting_that_repeats_more_than_the_references_loses_to_one_that_does_not():
    bounds = {"repetition": 0.1, "stutter": 0.01}
    rows = [
        {"bleu": 30.0, "repetition": 0.2, "stutter": 0.0},  # the best BLEU, but repeats
        {"bleu": 29.0, "repetition": 0.05, "stutter": 0.0},
        {"bleu": 29.5, "repetition": 0.05, "stutter": 0.02},  # stutters
        {"bleu": 29.0, "repetition": 0.1, "stutter": 0.01},  # as good, later: loses the tie
    ]
    assert choose(rows, bounds) == 1
    assert choose(rows, bounds, among=[0, 2]) == 0  # none within: the one that passes least
    assert choose([rows[0], rows[2]], {"repetition": 0.4, "stutter": 0.04}) == 0


def test_the_setting_for_terms_has_the_best_bleu_with_a_reference_word_as_term(tiny_run, tiny_data):
    """The second pass: each line with a word of its reference that the chosen setting's output
    lacks; every row is what `beam_search` gives with that setting for the lines with a term
    and the chosen one for the others, in one batch."""
    model, tokenizer = load_model(tiny_run)
    grid, base = length_grid((0.6, 1.0, 2.0)), DecodeConfig(beam=3)
    tuned = tune_search(model, tokenizer, tiny_data, base=base, grid=grid)
    sources, refs = DataDir(tiny_data).sources("valid"), DataDir(tiny_data).references("valid")
    chosen = translate_lines(model, tokenizer, sources, tuned.setting.apply(base))
    words = reference_terms(chosen, refs[0])
    assert 0 < sum(w is not None for w in words) == tuned.tuned_on["terms_sentences"]
    for word, output, ref in zip(words, chosen, refs[0], strict=True):
        if word is not None:
            assert word in re.findall(r"\w+", ref) and word not in re.findall(r"\w+", output)
    controls = term_controls(tokenizer, words)
    for setting, row in zip(grid, tuned.grid[: len(grid)], strict=True):
        cfg = setting.apply_to_terms(tuned.setting.apply(base))
        found = decode_lines(model, tokenizer, sources, decoder(cfg, controls), [], cfg)
        assert row["terms"]["bleu"] == round(
            BLEU().corpus_score(tokenizer.decode(found), refs).score, 4
        )
    assert tuned.terms in [s.guarded(*tuned.setting.guards) for s in grid]
    terms_bleu = [row["terms"]["bleu"] for row in tuned.grid if "terms" in row]
    assert len(terms_bleu) == len(grid) and tuned.tuned_on["terms_bleu"] == max(terms_bleu)


def test_a_length_option_of_the_user_applies_to_sentences_with_terms_too():
    tuned = DecodeConfig().replace(
        terms_alpha=1.4, terms_length_penalty="power", terms_stop="k-finished"
    )
    assert tuned.for_terms().alpha == 1.4 and tuned.for_terms().stop == "k-finished"
    assert tuned.overridden({"beam": 8}).for_terms().alpha == 1.4  # not a length option
    user = tuned.overridden({"alpha": 1.0})
    assert user.for_terms() == user and user.alpha == 1.0
    assert tuned.overridden({"alpha": 1.0, "terms_alpha": 2.0}).for_terms().alpha == 2.0


def test_a_closed_run_translates_with_its_setting_by_default(tiny_run, tmp_path, capsys):
    tuned = read_tuned(layout.best_dir(tiny_run))
    assert tuned is not None
    translator = open_translator(tiny_run)
    assert tuned.terms is not None
    assert translator.default_search == tuned.terms.apply_to_terms(
        tuned.setting.apply(DecodeConfig())
    )
    assert "search.json" in translator.search_origin
    lines = ["the dog sees a cat", "a cat"]
    assert translator.translate(lines) == translator.translate(lines, translator.default_search)

    (tmp_path / "in.txt").write_text("".join(f"{line}\n" for line in lines))
    argv = ["translate", "--model", str(tiny_run), "--input", str(tmp_path / "in.txt")]
    assert main(argv) == 0
    assert (
        f"{tuned.setting.length_penalty} alpha {tuned.setting.alpha:g}" in capsys.readouterr().err
    )
    length = ["--alpha", "0.6", "--stop", "bound", "--length-penalty", "gnmt"]
    guards = ["--no-repeat-ngram", "0", "--stutter-guard", "0"]
    assert main([*argv, *length, *guards]) == 0
    assert "gnmt alpha 0.6, stop bound (set on the command line)" in capsys.readouterr().err
    assert main([*argv, "--alpha", "0.6"]) == 0
    assert "alpha 0.6, stop " in (err := capsys.readouterr().err)
    assert "--alpha set on the command line, the rest: " in err and "search.json" in err


def closed(run) -> dict:
    """The stored setting of a run's best and averaged models, and the weights each was for."""
    found = {}
    for directory in (layout.best_dir(run), layout.averaged_dir(run)):
        tuned = read_tuned(directory)
        assert tuned is not None, directory
        found[directory.name] = tuned.tuned_on["weights_sha256"]
    return found


def test_the_setting_is_chosen_for_the_weights_beside_it_through_average_and_resume(
    tiny_data, tmp_path
):
    import hashlib

    run = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(run), *TINY_RUN]
    assert main([*args, "save_every=2", "average_last=2", "--max-steps", "4"]) == 0
    first = closed(run)
    assert main([*args, "save_every=2", "average_last=2", "--max-steps", "8", "--resume"]) == 0
    second = closed(run)
    assert second["averaged"] != first["averaged"]  # new weights, chosen anew
    for name, sha in second.items():
        weights = (layout.model_dir(run).parent / name / layout.WEIGHTS_FILE).read_bytes()
        assert hashlib.sha256(weights).hexdigest() == sha
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    tuned = [(m["step"], m["model"]) for m in metrics if m["kind"] == "tuned"]
    assert tuned == [(4, "best"), (4, "averaged"), (8, "best"), (8, "averaged")]

    assert main(["average", str(run), "--last", "2", "--out", str(tmp_path / "avg")]) == 0
    carried = read_tuned(tmp_path / "avg")
    assert carried is not None and carried.setting == read_tuned(layout.best_dir(run)).setting
    assert "carried_from" in carried.tuned_on


@pytest.mark.parametrize("fmt", ["onnx", "ctranslate2"])
def test_exports_keep_the_setting_their_engine_can_express(tiny_run, tmp_path, fmt):
    out = tmp_path / fmt
    assert main(["export", str(tiny_run), "--format", fmt, "--out", str(out)]) == 0
    tuned = read_tuned(out)
    assert tuned == read_tuned(layout.best_dir(tiny_run))
    translator = open_translator(out, engine=fmt)
    setting = tuned.setting if fmt == "onnx" else tuned.power
    assert translator.default_search.alpha == setting.alpha
    assert translator.default_search.length_penalty == setting.length_penalty


def test_aiayn_tune_rewrites_the_setting_and_prints_the_grid(tiny_run, tmp_path, capsys):
    import shutil

    run = shutil.copytree(tiny_run, tmp_path / "run")
    (layout.best_dir(run) / layout.SEARCH_FILE).unlink()
    assert main(["tune", str(run), "--alphas", "0.6", "1.5"]) == 0
    out = capsys.readouterr().out
    assert "<- chosen" in out and "alpha 1.5" in out
    assert read_tuned(layout.best_dir(run)) is not None


def test_a_multilingual_split_is_tuned_on_the_first_lines_of_each_direction(tmp_path, tiny_data):
    """Not the whole split: with 22 languages' directions it would take hours."""
    files = DataDir(make_multilingual_dir(tmp_path / "multi"))
    directions = np.load(files.directions("valid"))
    rows = direction_sample(files, "valid", 3)
    assert rows is not None and len(rows) == 3 * len(set(directions.tolist()))
    for d in set(directions.tolist()):
        first = np.flatnonzero(directions == d)[:3].tolist()
        assert [r for r in rows if directions[r] == d] == first
    assert rows == sorted(rows)  # in file order
    assert direction_sample(files, "valid", 0) is None  # 0: every line
    assert direction_sample(DataDir(tiny_data), "valid", 3) is None  # bilingual: every line


def test_a_bilingual_split_is_tuned_on_lines_spread_evenly_over_it(tiny_data):
    """The close decodes a few hundred lines, not the whole split: from its first line to its
    last, evenly apart, the same on every run; 0 or a number over the split's size: all."""
    files = DataDir(tiny_data)
    every, refs, sample = validation_lines(files, "valid", 0, 0)
    assert sample is None
    n = len(every)
    sources, references, rows = validation_lines(files, "valid", 0, 5)
    assert rows is not None and len(rows) == 5 and rows[0] == 0 and rows[-1] == n - 1
    assert np.ptp(np.diff(rows)) <= 1  # evenly apart
    assert sources == [every[i] for i in rows]
    assert references == [[ref[i] for i in rows] for ref in refs]
    assert validation_lines(files, "valid", 0, 5)[2] == rows  # the same on every run
    assert validation_lines(files, "valid", 0, n + 1)[2] is None


def test_the_grid_stops_the_paper_s_rule_at_its_largest_exponent():
    """GNMT's penalty under the "bound" rule only up to BOUND_ALPHA_MAX (above it the one
    search runs longest); under fairseq's rule every exponent."""
    grid = length_grid((0.6, 1.2, 1.6))
    assert SearchSetting(1.2, "gnmt", "bound") in grid
    assert SearchSetting(1.6, "gnmt", "bound") not in grid
    assert SearchSetting(1.6, "gnmt", "k-finished") in grid
    assert SearchSetting(1.6, "power", "k-finished") in grid


def test_a_stored_repetition_guard_is_the_default_and_a_flag_overrides_it(
    tiny_run, tmp_path, capsys
):
    import shutil

    from aiayn.evaluate.tuned import TunedSearch, write_tuned

    model = tmp_path / "model"
    shutil.copytree(layout.best_dir(tiny_run), model)
    write_tuned(model, TunedSearch(setting=SearchSetting(1.0, "gnmt", "bound", 0, 3)))
    assert open_translator(model).default_search.stutter_guard == 3
    (tmp_path / "in.txt").write_text("the dog sees a cat\n")
    argv = ["translate", "--model", str(model), "--input", str(tmp_path / "in.txt")]
    assert main(argv) == 0
    assert "gnmt alpha 1, stop bound, stutter guard 3 (" in capsys.readouterr().err
    assert main([*argv, "--stutter-guard", "0"]) == 0  # off; the length setting: the stored one
    err = capsys.readouterr().err
    assert "gnmt alpha 1, stop bound (" in err and "stutter guard" not in err
    old = '{"setting": {"alpha": 1.0, "length_penalty": "gnmt", "stop": "bound"}}'
    (model / layout.SEARCH_FILE).write_text(old)  # written before the guards: none
    assert open_translator(model).default_search.stutter_guard == 0
