"""Fixtures of the training tests."""

import pytest

from tests.train.multilingual_fixture import make_multilingual_dir


@pytest.fixture(scope="session")
def tiny_multi_data(tmp_path_factory):
    """A multilingual data directory: en<->de and en<->fr (the French ones a third as large)."""
    return make_multilingual_dir(tmp_path_factory.mktemp("multi-data") / "data")
