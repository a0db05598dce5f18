"""schemathesis against the app's OpenAPI schema, in process, on the tiny run: at least 500
generated requests (valid ones and ones that break the schema on purpose) over every operation
and field; no 5xx, every answer as the schema declares it. The long run:
benchmarks/api_fuzz.py."""

from aiayn.serve.app import Limits, create_app
from harness.api_fuzz import fuzz


def test_generated_requests_get_no_5xx_and_only_answers_the_schema_declares(tiny_run):
    app = create_app(tiny_run, Limits(max_chars=200, max_texts=4))
    report = fuzz(app, examples=250, seed=0)
    assert report.requests >= 500, report
    assert report.server_errors == 0 and report.failures == [], report.failures[:3]
    assert report.statuses[200] > 0 and report.statuses[422] > 0  # both kinds were answered
