"""`aiayn train --init MODEL`: the run starts from MODEL's weights (its first loss is MODEL's
loss on the first batches), from a run, an averaged checkpoint or an imported Marian model;
it resumes bitwise from its own checkpoints; frozen tensors stay bit-identical."""

from __future__ import annotations

import dataclasses
import importlib
import json
import shutil
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from aiayn import Transformer, layout
from aiayn.cli import main
from aiayn.config import RECIPES
from aiayn.data.data_dir import DataDir
from aiayn.interop.marian import import_marian
from aiayn.train import checkpoint as ckpt
from aiayn.train.distributed import Distributed
from aiayn.train.finetune import check_vocabulary, kept_layers, load_into, open_init
from aiayn.train.metrics import read_metrics
from aiayn.train.run_dir import open_run
from aiayn.train.schedule import scheduled_rate
from aiayn.train.trainer import Trainer
from aiayn.train.update_passes import grouped
from tests.interop.test_marian import marian_dir
from tests.train.test_resume import assert_bitwise_equal

# Small batches, fp32 and no dropout, so that MODEL's loss can be computed here exactly.
FINETUNE = [
    "--recipe",
    "finetune",
    "--max-tokens",
    "160",
    "--update-freq",
    "2",
    "--no-progress",
    "--set",
    "precision=fp32",
    "dropout=0",
    "log_every=1",
    "valid_every=0",
    "valid_bleu_sentences=8",
    "tune_search=false",
    "average_last=0",
    "save_every=2",
]


def finetune(model: Path, data: Path, out: Path, steps: int, *sets: str) -> None:
    argv = ["train", "--init", str(model), "--data", str(data), "--out", str(out), *FINETUNE]
    assert main([*argv, *sets, "--max-steps", str(steps)]) == 0


@pytest.fixture(scope="module")
def source_run(tiny_data, tmp_path_factory) -> Path:
    """A tiny run with checkpoints at steps 2 and 4: a model to fine-tune."""
    out = tmp_path_factory.mktemp("source") / "run"
    argv = ["train", "--data", str(tiny_data), "--out", str(out), "--preset", "tiny"]
    sets = ["--set", "valid_every=0", "valid_bleu_sentences=8", "save_every=2", "warmup=20"]
    assert main([*argv, *sets, "--no-progress", "--max-steps", "4", "--max-tokens", "160"]) == 0
    return out


def averaged(run: Path, out: Path) -> Path:
    assert main(["average", str(run), "--last", "2", "--out", str(out)]) == 0
    return out


def imported_marian(tiny_data: Path, tmp: Path) -> Path:
    marian_dir(tiny_data, tmp / "marian")
    return import_marian(tmp / "marian", tmp / "imported")


def first_update(run: Path, scratch: Path) -> list:
    """The batches of a run's first update, as its trainer draws them."""
    opened, model_cfg, train_cfg = open_run(run)
    elsewhere = dataclasses.replace(opened, root=scratch)  # nothing written into the run
    trainer = Trainer(model_cfg, train_cfg, elsewhere, Distributed.from_env("cpu"), False)
    batches, _ = next(grouped(trainer.batches(), train_cfg.update_freq, train_cfg.pad_to))
    return batches


@torch.no_grad()
def nll_per_token(model: Transformer, batches: list) -> float:
    """Cross-entropy of the references over the update's target tokens: full logits, fp32."""
    model.eval()
    total, tokens = 0.0, 0
    for batch in batches:
        logits = model(batch.src, batch.tgt_in)  # (B, T, V)
        total += F.cross_entropy(
            logits.flatten(0, 1).float(),
            batch.tgt_out.flatten(),
            ignore_index=model.cfg.pad_id,
            reduction="sum",
        ).item()
        tokens += batch.n_tgt_tokens
    return total / tokens


@pytest.mark.parametrize("kind", ["run", "averaged", "marian"])
def test_the_first_loss_is_the_models_own(kind, source_run, tiny_data, tmp_path):
    model = {
        "run": lambda: source_run,
        "averaged": lambda: averaged(source_run, tmp_path / "averaged"),
        "marian": lambda: imported_marian(tiny_data, tmp_path),
    }[kind]()
    finetune(model, tiny_data, tmp_path / "ft", 1)
    logged = next(r for r in read_metrics(tmp_path / "ft") if r["kind"] == "train")
    batches = first_update(tmp_path / "ft", tmp_path / "scratch")
    source = Transformer.load(layout.model_dir(model))
    assert logged["step"] == 1
    assert logged["nll_loss"] == pytest.approx(nll_per_token(source, batches), rel=1e-5)
    # the check could fail: the weights a run starts with otherwise give another loss
    torch.manual_seed(RECIPES["finetune"].seed)
    fresh = Transformer(source.cfg)
    assert abs(nll_per_token(fresh, batches) - logged["nll_loss"]) > 0.01
    started = json.loads((tmp_path / "ft" / "run.json").read_text())["init"]
    assert Path(started["model"]) == layout.model_dir(model).resolve()
    assert len(started["weights_sha256"]) == 64


def test_a_student_starts_from_the_layers_it_keeps(source_run, tiny_data, tmp_path):
    """`--set n_decoder_layers=1`: the run's first loss is MODEL's with its first decoder
    layer alone (its encoder and embeddings whole), not with its last."""
    finetune(source_run, tiny_data, tmp_path / "ft", 1, "n_decoder_layers=1")
    logged = next(r for r in read_metrics(tmp_path / "ft") if r["kind"] == "train")
    batches = first_update(tmp_path / "ft", tmp_path / "scratch")
    losses = []
    for kept in (0, 1):
        model = Transformer.load(layout.model_dir(source_run))
        model.decoder_layers = torch.nn.ModuleList([model.decoder_layers[kept]])
        losses.append(nll_per_token(model, batches))
    assert logged["nll_loss"] == pytest.approx(losses[0], rel=1e-5)
    assert abs(losses[1] - logged["nll_loss"]) > 0.01  # the check could fail
    written = json.loads((tmp_path / "ft" / "run.json").read_text())["model"]
    assert (written["n_encoder_layers"], written["n_decoder_layers"]) == (2, 1)


def test_kept_layers_are_spread_over_the_stack_first_and_last_among_them():
    assert kept_layers(3, 1) == [0]
    assert kept_layers(3, 2) == [0, 2]
    assert kept_layers(6, 3) == [0, 2, 5]
    assert kept_layers(12, 4) == [0, 4, 7, 11]
    assert kept_layers(6, 6) == list(range(6))


def test_a_resumed_finetuning_run_goes_on_from_its_own_checkpoints(source_run, tiny_data, tmp_path):
    model = shutil.copytree(layout.model_dir(source_run), tmp_path / "model")
    full, part = tmp_path / "full", tmp_path / "part"
    finetune(model, tiny_data, full, 6)
    finetune(model, tiny_data, part, 3)
    shutil.rmtree(model)  # the resumed run must not need it
    resume = ["train", "--out", str(part), "--resume", "--max-steps", "6", "--no-progress"]
    assert main(resume) == 0
    assert_bitwise_equal(full, part, 6)
    steps = [r["step"] for r in read_metrics(part) if r["kind"] == "train"]
    assert steps == list(range(1, 7))


@pytest.mark.parametrize(
    ("freeze", "frozen"),
    [("embeddings", ("src_embed.",)), ("encoder", ("encoder_layers.",))],
)
def test_frozen_tensors_stay_bit_identical(freeze, frozen, source_run, tiny_data, tmp_path):
    model = layout.model_dir(source_run)
    finetune(model, tiny_data, tmp_path / "ft", 4, f"freeze={freeze}", "lr_peak=1e-2")
    before = load_file(str(model / layout.WEIGHTS_FILE))
    after_dir = layout.step_dir(tmp_path / "ft", 4)
    after = load_file(str(after_dir / layout.WEIGHTS_FILE))
    held = [name for name in before if name.startswith(frozen)]
    moved = [name for name in before if not name.startswith(frozen)]
    assert held and all(torch.equal(before[n], after[n]) for n in held)
    assert all(not torch.equal(before[n], after[n]) for n in moved if n.endswith("w_1.weight"))
    # the optimizer holds state only for what trains
    state = ckpt.read_optimizer(after_dir)["state"]
    assert len(state) == len(moved)


def test_the_finetune_recipe_rises_to_a_constant_rate():
    cfg = RECIPES["finetune"]
    rates = [scheduled_rate(step, 512, cfg) for step in (1, 50, 100, 101, 5000)]
    assert rates[0] == pytest.approx(1e-6) and rates[1] == pytest.approx(5e-5)
    assert rates[2] == rates[3] == rates[4] == pytest.approx(1e-4)
    assert rates[2] < scheduled_rate(4000, 512, RECIPES["paper"]) / 5  # well below the paper's


def test_another_table_of_pieces_is_named_by_its_first_difference(source_run, tiny_data, tmp_path):
    pb = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    data = shutil.copytree(tiny_data, tmp_path / "data")
    proto = pb.ModelProto()
    proto.ParseFromString((data / "spm.model").read_bytes())
    was = proto.pieces[10].piece
    proto.pieces[10].piece = "▁zzz"
    (data / "spm.model").write_bytes(proto.SerializeToString())
    init = open_init(source_run)
    with pytest.raises(ValueError, match=f"id 10 is '▁zzz' there and '{was}' in the model"):
        check_vocabulary(init, DataDir.open(data))
    check_vocabulary(init, DataDir.open(tiny_data))  # its own: accepted


def test_a_model_changed_since_the_run_began_is_refused(source_run, tmp_path):
    model = shutil.copytree(layout.model_dir(source_run), tmp_path / "model")
    init = open_init(model)
    changed = Transformer.load(model)
    with torch.no_grad():
        changed.src_embed.weight[5, 0] += 1.0
    changed.save(model)
    with pytest.raises(ValueError, match="changed since this run began from it"):
        load_into(Transformer(changed.cfg), init)
