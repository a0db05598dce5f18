"""The attention matrix comes from the translation the batch found, in the model thread."""

import threading

from fastapi.testclient import TestClient

import aiayn.serve.app as app_module
from aiayn.data.vocab import Tokenizer
from aiayn.layout import model_dir
from aiayn.serve.app import create_app


def test_attention_is_read_in_the_model_thread_without_a_second_search(tiny_run, monkeypatch):
    searches, threads = [], []
    search, read = app_module.nbest_hypotheses, app_module.attention_of

    def counted_search(*args, **kwargs):
        searches.append(threading.current_thread().name)
        return search(*args, **kwargs)

    def recorded_read(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(app_module, "nbest_hypotheses", counted_search)
    monkeypatch.setattr(app_module, "attention_of", recorded_read)
    with TestClient(create_app(tiny_run, precision="int8")) as client:
        body = {"text": "The dog sees a cat.", "beam": 2, "attention": True}
        item = client.post("/translate", json=body).json()["translations"][0]
    assert len(searches) == 1, "one search for the translation and its attention"
    assert threads and all(t.startswith("aiayn-model") for t in searches + threads)
    att = item["attention"]
    assert att["target"][-1] == "</s>" and len(att["cross"]) == len(att["target"])
    text = Tokenizer(model_dir(tiny_run)).join(att["target"][:-1])
    assert text == item["text"]  # the matrix is that of the translation returned
