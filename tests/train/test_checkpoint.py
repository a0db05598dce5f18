"""A TrainState goes into a checkpoint's state.json and comes back the same."""

from __future__ import annotations

import json

from aiayn import layout
from aiayn.train import checkpoint as ckpt
from tests.conftest import tiny_model

# The keys of "train_state" in the state.json of checkpoints already written: renaming one
# would stop them from resuming.
WRITTEN_KEYS = [
    "step",
    "best_bleu",
    "best_step",
    "validations_without_improvement",
    "bad_steps_in_a_row",
    "tokens_seen",
]


def test_a_train_state_comes_back_from_a_checkpoint(tmp_path):
    state = ckpt.TrainState(
        step=7,
        best_bleu=12.5,
        best_step=5,
        validations_without_improvement=2,
        bad_steps_in_a_row=1,
        tokens_seen=999,
    )
    tokenizer = tmp_path / "spm.model"
    tokenizer.write_bytes(b"a tokenizer")
    target = layout.step_dir(tmp_path / "run", state.step)
    ckpt.write_checkpoint(target, tiny_model(), tokenizer, ckpt.train_state_to_json(state))
    saved = json.loads((target / layout.STATE_FILE).read_text(encoding="utf-8"))
    assert list(saved["train_state"]) == WRITTEN_KEYS
    assert ckpt.train_state_from_json(ckpt.read_state(target)) == state


def test_a_checkpoint_from_before_tokens_seen_still_resumes():
    old = {"step": 3, "best_bleu": None, "best_step": None}
    old |= {"validations_without_improvement": 0, "bad_steps_in_a_row": 0}
    state = ckpt.train_state_from_json({"train_state": old})
    assert (state.step, state.tokens_seen) == (3, 0)
