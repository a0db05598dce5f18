"""Choosing the checkpoint to go on from: the newest intact one, the last good one."""

import json

import pytest
import torch

from aiayn import layout
from aiayn.train import checkpoint as ckpt
from aiayn.train.recovery import damage, last_good, newest_intact
from tests.conftest import tiny_model


@pytest.fixture
def run(tmp_path):
    """Checkpoints at steps 2, 4, 6, 8 of a run whose loss fell, then blew up after step 6."""
    model = tiny_model()
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 3, dtype=torch.long), torch.ones(1, 2, dtype=torch.long)).sum().backward()
    optimizer.step()
    tokenizer = tmp_path / "spm.model"
    tokenizer.write_bytes(b"pieces")
    for step in (2, 4, 6, 8):
        state = {"train_state": {"step": step}}
        ckpt.write_checkpoint(layout.step_dir(tmp_path, step), model, tokenizer, state, optimizer)
    losses = [6.2, 5.0, 4.1, 3.9, 3.5, 3.4, 389.0, 2e4, 3e4]  # steps 1..9
    lines = [json.dumps({"kind": "train", "step": s, "loss": v}) for s, v in enumerate(losses, 1)]
    (tmp_path / layout.METRICS_FILE).write_text("\n".join(lines) + "\n")
    return tmp_path


def test_the_last_good_checkpoint_is_judged_by_the_loss_of_its_weights(run):
    found, why = last_good(run)
    # step 8's weights gave 3e4 (logged at step 9); step 6's gave 389 (at step 7), > 1.5 x 3.4
    assert found.step == 4
    assert "3.500 (logged at step 5)" in why and "1.5x of the lowest until then, 3.500" in why


def test_a_checkpoint_with_no_loss_after_it_is_not_trusted(run):
    record = {"kind": "train", "step": 1, "loss": 6.0}
    (run / layout.METRICS_FILE).write_text(json.dumps(record) + "\n")
    found, why = last_good(run)
    assert found is None and "start again" in why


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("model.safetensors", "model.safetensors is unreadable"),
        ("optimizer.pt", "optimizer.pt is unreadable"),
        ("state.json", "state.json is not valid JSON"),
        ("config.json", "config.json is not valid JSON"),
    ],
)
def test_resume_passes_over_a_damaged_newest_checkpoint(run, name, reason):
    newest = layout.latest(run).path
    assert damage(newest) is None
    path = newest / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    found, skipped = newest_intact(run)
    assert found.step == 6
    assert [s.checkpoint.step for s in skipped] == [8] and reason in skipped[0].reason
    readers = {"optimizer.pt": ckpt.read_optimizer, "state.json": ckpt.read_state}
    if name in readers:  # read directly, a clear error naming the file
        with pytest.raises(ValueError, match=rf"{name}.*(delete it|not valid JSON)"):
            readers[name](newest)
    found, _ = last_good(run)
    assert found.step == 4
