"""Training on a multilingual data directory: exact resume, validation per direction, and
the sampling temperature kept across a resume; bilingual runs' records as before."""

import json

from aiayn import layout
from aiayn.cli import main
from aiayn.data.data_dir import DataDir
from aiayn.train import checkpoint as ckpt
from aiayn.train.metrics import read_metrics
from aiayn.train.validate import Validation
from tests.conftest import TINY_RUN
from tests.train.test_resume import assert_bitwise_equal


def test_an_interrupted_multilingual_run_resumes_exactly(tiny_multi_data, tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    base = ["train", "--data", str(tiny_multi_data), *TINY_RUN, "sampling_temperature=2"]
    assert main([*base, "--out", str(full), "--max-steps", "12"]) == 0
    assert main([*base, "--out", str(part), "--max-steps", "5"]) == 0
    resume = ["train", "--out", str(part), "--resume", "--no-progress"]
    assert main([*resume, "--max-steps", "12"]) == 0
    assert_bitwise_equal(full, part, 12)
    sampler = ckpt.read_state(layout.step_dir(part, 12))["sampler"]
    assert sampler["temperature"] == 2.0 and sampler["position"] == 24  # 12 updates x 2


def test_a_resume_with_another_temperature_is_refused(tiny_multi_data, tmp_path, capsys):
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--data",
                str(tiny_multi_data),
                "--out",
                str(run),
                *TINY_RUN,
                "--max-steps",
                "2",
            ]
        )
        == 0
    )
    resume = ["train", "--out", str(run), "--resume", "--no-progress", "--max-steps", "3"]
    assert main([*resume, "--set", "sampling_temperature=1"]) != 0
    assert "resume with --set sampling_temperature=5.0" in capsys.readouterr().err
    assert layout.latest(run).step == 2  # nothing trained on other batches


def test_validation_reports_every_direction(tiny_multi_data, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["train", "--data", str(tiny_multi_data), "--out", str(run), *TINY_RUN]
    assert main([*argv, "valid_every=3", "valid_direction_sentences=5", "--max-steps", "3"]) == 0
    directions = DataDir.open(tiny_multi_data).meta.directions
    (record,) = [r for r in read_metrics(run) if r["kind"] == "valid"]
    assert list(record["directions"]) == directions
    for scores in record["directions"].values():
        assert scores["sentences"] == 5 and scores["loss"] > 0
        assert {"bleu", "chrf", "nll_loss", "bleu_signature"} <= set(scores)
    assert record["sentences"] == 5 * len(directions)
    means = [sum(d[k] for d in record["directions"].values()) / 4 for k in ("bleu", "chrf")]
    assert [record["bleu"], record["chrf"]] == means
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("step 3: valid"))
    assert "4 directions, worst" in line and len(line) < 200  # the means and the worst only


def test_a_bilingual_run_writes_its_records_as_before(tiny_data, tmp_path):
    run = tmp_path / "run"
    argv = ["train", "--data", str(tiny_data), "--out", str(run), *TINY_RUN, "--max-steps", "2"]
    assert main(argv) == 0
    state = json.loads((layout.step_dir(run, 2) / layout.STATE_FILE).read_text())
    assert set(state["sampler"]) == {"epoch", "position", "seed"}
    (record,) = [r for r in read_metrics(run) if r["kind"] == "valid"]
    assert "directions" not in record


def test_the_progress_line_names_the_direction_with_the_lowest_chrf():
    directions = {
        "en-de": {"bleu": 12.0, "chrf": 45.0},
        "en-ja": {"bleu": None, "chrf": 20.0},  # no BLEU tokenizer installed
        "de-en": {"bleu": 3.0, "chrf": 30.0},
    }
    found = Validation(1.5, 1.4, 4.1, 7.5, 31.7, 30, "mean of 3 directions", directions)
    line = str(found)
    assert "mean BLEU 7.50, mean chrF 31.70" in line
    assert line.endswith("3 directions, worst en-ja chrF 20.00 BLEU -")
    assert found.as_dict()["directions"] == directions
