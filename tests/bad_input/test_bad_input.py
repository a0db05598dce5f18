"""Every case of the bad-input suite (tests/bad_input/suite.py): the expected exit code, a
message that names the file or field, the value and what to do, no traceback, and no data lost."""

import pytest

from tests.bad_input.kit import Case, make_fixtures
from tests.bad_input.suite import CASES, run_case


@pytest.fixture(scope="module")
def fixtures(tiny_data, tmp_path_factory):
    return make_fixtures(tmp_path_factory.mktemp("bad-input"), data=tiny_data)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gets_a_clear_message(case: Case, fixtures, tmp_path):
    outcome = run_case(case, fixtures, tmp_path)
    assert not outcome.traceback, outcome.message
    assert outcome.code == case.code, outcome.message
    for needle in case.says:
        assert needle in outcome.message, outcome.message
    assert outcome.kept, f"data lost or setting dropped: {outcome.message}"
