"""The model is loaded in its one thread, and the attention matrix comes from the translation the
batch found, in that thread."""

import threading

from fastapi.testclient import TestClient

import aiayn.engines.search as search_module
import aiayn.serve.served as served_module
from aiayn.config import EngineConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.layout import model_dir
from aiayn.serve.app import create_app


def test_attention_is_read_in_the_model_thread_without_a_second_search(tiny_run, monkeypatch):
    searches, threads = [], []
    search, read = search_module.nbest_hypotheses, search_module.attention_of

    def counted_search(*args, **kwargs):
        searches.append(threading.current_thread().name)
        return search(*args, **kwargs)

    def recorded_read(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(search_module, "nbest_hypotheses", counted_search)
    monkeypatch.setattr(search_module, "attention_of", recorded_read)
    with TestClient(create_app(tiny_run, engine=EngineConfig(precision="int8"))) as client:
        body = {"text": "The dog sees a cat.", "beam": 2, "attention": True}
        item = client.post("/translate", json=body).json()["translations"][0]
    assert len(searches) == 1, "one search for the translation and its attention"
    assert threads and all(t.startswith("aiayn-model") for t in searches + threads)
    att = item["attention"]
    assert att["target"][-1] == "</s>" and len(att["cross"]) == len(att["target"])
    text = Tokenizer(model_dir(tiny_run)).join(att["target"][:-1])
    assert text == item["text"]  # the matrix is that of the translation returned


def test_the_model_is_loaded_in_the_thread_that_runs_it(tiny_run, monkeypatch):
    """One thread calls PyTorch: a second (the loading one) would keep its own OpenMP team."""
    loads, searches = [], []
    load, search = served_module.open_translator, search_module.nbest_hypotheses

    def recorded_load(*args, **kwargs):
        loads.append(threading.get_ident())
        return load(*args, **kwargs)

    def recorded_search(*args, **kwargs):
        searches.append(threading.get_ident())
        return search(*args, **kwargs)

    monkeypatch.setattr(served_module, "open_translator", recorded_load)
    monkeypatch.setattr(search_module, "nbest_hypotheses", recorded_search)
    with TestClient(create_app(tiny_run)) as client:
        for text in ("The dog sees a cat.", "A cat."):
            assert client.post("/translate", json={"text": text}).status_code == 200
    assert len(loads) == 1 and loads[0] != threading.get_ident()
    assert len(searches) == 2 and set(searches) == set(loads)
