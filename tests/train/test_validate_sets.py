"""Training on a directory of several corpora: each corpus's validation set reported apart, the
main one deciding the best checkpoint."""

import pytest

from aiayn.cli import main
from aiayn.data.prepare.mixing import CorpusSpec
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from aiayn.plot import metrics_figure
from aiayn.train.metrics import read_metrics
from aiayn.train.validate import Validation
from tests.conftest import TINY_RUN
from tests.data.conftest import synthetic_pairs, write_tsv


@pytest.fixture(scope="module")
def mixed_data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mixed-data")
    general = write_tsv(tmp / "general.tsv", synthetic_pairs(300, seed=11))
    domain = write_tsv(tmp / "domain.tsv", synthetic_pairs(120, seed=12))
    mix = (CorpusSpec(str(general)), CorpusSpec(str(domain), weight=2))
    sizes = dict(valid_size=12, test_size=12, vocab_size=64, progress=False)
    prepare(PrepareOptions(out=tmp / "data", corpora=mix, **sizes))
    return tmp / "data"


def test_training_validates_on_every_corpus_set_apart(mixed_data, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["train", "--data", str(mixed_data), "--out", str(run), *TINY_RUN, "tune_search=0"]
    assert main([*argv, "valid_every=2", "valid_bleu_sentences=4", "--max-steps", "2"]) == 0
    (record,) = [r for r in read_metrics(run) if r["kind"] == "valid"]
    assert list(record["sets"]) == ["valid-domain"]
    other = record["sets"]["valid-domain"]
    assert other["sentences"] == 4 and other["loss"] > 0 and other["loss"] != record["loss"]
    assert {"bleu", "chrf", "nll_loss", "ppl", "bleu_signature"} <= set(other)
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("step 2: valid"))
    assert f"; valid-domain loss {other['loss']:.3f}" in line
    fig = metrics_figure(run)
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert "valid-domain" in labels


def test_the_best_checkpoint_follows_the_main_set():
    main_set = Validation(1.0, 0.9, 2.5, 10.0, 30.0, 4, "sig")
    better_elsewhere = {"valid-domain": {"loss": 0.5, "bleu": 50.0, "chrf": 60.0}}
    found = Validation(1.0, 0.9, 2.5, 10.0, 30.0, 4, "sig", sets=better_elsewhere)
    assert found.bleu == main_set.bleu  # what _keep_best compares
    assert str(found) == str(main_set) + "; valid-domain loss 0.500, BLEU 50.00, chrF 60.00"
    assert "sets" not in main_set.as_dict() and found.as_dict()["sets"] == better_elsewhere
