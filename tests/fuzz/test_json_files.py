"""Fuzzed JSON files: a data directory's `meta.json`, a run's `run.json`, a checkpoint's
`state.json` and `config.json`, a model's `search.json`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import example, given

from aiayn import DecodeConfig, layout
from aiayn.data.data_dir import DataMeta
from aiayn.evaluate.search_grid import SearchSetting
from aiayn.evaluate.tuned import read_tuned
from aiayn.model import Transformer
from aiayn.train.distributed import Distributed
from aiayn.train.recovery import damage
from aiayn.train.run_dir import open_run
from aiayn.train.trainer import Trainer, TrainingError
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import json_file, read_or_refuse, scratch

DEEP = b"[" * 100_000 + b"]" * 100_000  # nesting no file of ours has: json.loads recursed


def valid(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def files(tiny_data, tiny_run, checkpoint):
    """The valid JSON files (read once: hypothesis strategies are built from them)."""
    return {
        "meta": valid(tiny_data / layout.META_FILE),
        "run": valid(tiny_run / layout.RUN_CONFIG),
        "state": valid(checkpoint / layout.STATE_FILE),
        "config": valid(checkpoint / layout.CONFIG_FILE),
    }


def test_meta_json(tiny_data, files):
    @FUZZ
    @given(json_file(files["meta"]))
    @example(DEEP)
    @example(json.dumps({**files["meta"], "vocab_size": "64"}).encode())
    def fuzz(raw: bytes):
        with scratch() as tmp:
            (tmp / layout.META_FILE).write_bytes(raw)
            meta = read_or_refuse(lambda: DataMeta.load(tmp), tmp / layout.META_FILE)
            if meta is not None:  # what the readers of a data directory rely on
                assert isinstance(meta.vocab_size, int) and meta.vocab_size > 3
                assert all(isinstance(v, int) for v in meta.sizes.values())
                assert all(isinstance(v, int) and v >= 1 for v in meta.n_refs.values())
                assert isinstance(meta.src_lang, str) and isinstance(meta.tgt_lang, str)

    fuzz()


def test_run_json(tiny_run, files):
    @FUZZ
    @given(json_file(files["run"]))
    @example(DEEP)
    @example(json.dumps({**files["run"], "data": 7}).encode())
    @example(json.dumps({**files["run"], "train": []}).encode())
    @example(json.dumps({**files["run"], "data": "/no/such/data"}).encode())
    def fuzz(raw: bytes):
        with scratch() as tmp:
            shutil.copyfile(tiny_run / layout.TOKENIZER_FILE, tmp / layout.TOKENIZER_FILE)
            (tmp / layout.RUN_CONFIG).write_bytes(raw)
            read_or_refuse(lambda: open_run(tmp), tmp / layout.RUN_CONFIG, tmp)

    fuzz()


def test_config_json(checkpoint, files):
    @FUZZ
    @given(json_file(files["config"]))
    @example(DEEP)
    @example(json.dumps({**files["config"], "d_model": "32"}).encode())
    @example(json.dumps({**files["config"], "n_encoder_layers": 10**9}).encode())
    @example(json.dumps({**files["config"], "attention_dropout": 1}).encode())  # unnamed file
    def fuzz(raw: bytes):
        with scratch(checkpoint) as tmp:
            (tmp / layout.CONFIG_FILE).write_bytes(raw)
            names = (tmp / layout.CONFIG_FILE, tmp / layout.WEIGHTS_FILE)
            read_or_refuse(lambda: Transformer.load(tmp), *names)

    fuzz()


@pytest.fixture(scope="module")
def trainer(tiny_run):
    run, model_cfg, train_cfg = open_run(tiny_run)
    return Trainer(model_cfg, train_cfg, run, Distributed(), progress=False)


def test_state_json(checkpoint, files, trainer):
    """A state.json that is not JSON is found before resuming (the run goes on from the one
    before); resuming from one that is JSON but not a state says what is wrong."""

    @FUZZ
    @given(json_file(files["state"]))
    @example(DEEP)
    @example(json.dumps({**files["state"], "train_state": {}}).encode())
    @example(json.dumps({k: v for k, v in files["state"].items() if k != "sampler"}).encode())
    def fuzz(raw: bytes):
        with scratch(checkpoint) as tmp:
            (tmp / layout.STATE_FILE).write_bytes(raw)
            why = damage(tmp)
            if why is not None:
                assert layout.STATE_FILE in why
                return
            try:
                read_or_refuse(lambda: trainer.resume(tmp), tmp / layout.STATE_FILE, tmp)
            except TrainingError as err:  # `aiayn train: stopped: ...`, exit 3
                assert str(tmp) in str(err)

    fuzz()


def test_search_json(checkpoint):
    search = {
        "setting": {"alpha": 0.6, "length_penalty": "gnmt", "stop": "bound"},
        "power": {"alpha": 1.0, "length_penalty": "power", "stop": "bound"},
        "tuned_on": {"split": "valid", "sentences": 20, "bleu": 1.5, "paper_bleu": 1.0},
        "grid": [],
        "terms": {"alpha": 1.2, "length_penalty": "power", "stop": "k-finished"},
    }

    @FUZZ
    @given(json_file(search))
    @example(DEEP)
    def fuzz(raw: bytes):
        with scratch() as tmp:
            (tmp / layout.SEARCH_FILE).write_bytes(raw)
            tuned = read_or_refuse(lambda: read_tuned(tmp), tmp / layout.SEARCH_FILE)
            if tuned is not None:  # what `translate` and `serve` print and use
                assert tuned.summary() and tuned.as_record()
                assert tuned.search(our_search=False) in (None, tuned.power)
                cfg = tuned.config(DecodeConfig())
                assert cfg is not None
                if tuned.terms is not None:  # a sentence with glossary terms: the terms' setting
                    terms = cfg.for_terms()
                    assert (
                        SearchSetting(terms.alpha, terms.length_penalty, terms.stop) == tuned.terms
                    )

    fuzz()
