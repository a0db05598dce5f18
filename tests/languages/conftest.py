"""The tiny multilingual model and data directory (tests/languages/tiny_multilingual.py), made
once."""

from __future__ import annotations

import pytest

from tests.documents.conftest import talking_model  # noqa: F401 (a bilingual model)
from tests.languages.tiny_multilingual import make_data, make_model


@pytest.fixture(scope="session")
def multilingual_model(tmp_path_factory):
    return make_model(tmp_path_factory.mktemp("multilingual") / "model")


@pytest.fixture(scope="session")
def multilingual_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("multilingual") / "data")
