"""The API fuzzed: schemathesis against the app's own OpenAPI schema, in process (ASGI).

Requests are generated for every operation and every field from the schema the app publishes
(`/openapi.json`): valid ones, and ones that break the schema on purpose; each answer is
checked. `fuzz()` returns the requests, answers by status, server errors and schema violations
(the first few in words). tests/serve/test_fuzz.py runs it for about 500 requests on the tiny
run; `benchmarks/api_fuzz.py` is the long run on a trained model.

Checks: no 5xx (`not_a_server_error`); every answer's status code, content type, headers and body
are the ones the schema declares (`*_conformance`); a request the schema forbids is refused
(`negative_data_rejection`). Not `positive_data_acceptance`: the server's limits (texts per
request, characters per text, nbest <= beam) depend on how it was started and are not in the
schema, so a schema-valid request may rightly get 413 or 422.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as seeded
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig
from schemathesis.errors import FailureGroup

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

# A request that breaks the schema is refused with one of the server's refusals: 413 for one too
# large to read (schemathesis counts only 4xx codes about the data itself by default).
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": [401, 413, 422, 429]}}}
)


@dataclass
class Report:
    requests: int = 0
    statuses: collections.Counter = field(default_factory=collections.Counter)
    server_errors: int = 0
    failures: list[str] = field(default_factory=list)  # the first few, in words

    @property
    def violations(self) -> int:
        return len(self.failures)


def fuzz(app: Any, examples: int, seed: int = 0, headers: dict[str, str] | None = None) -> Report:
    """Up to `examples` generated requests per operation and per mode (valid, invalid)."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=CONFIG)
    report = Report()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run(operation, mode, examples, seed, headers or {}, report)
    return report


def run(operation, mode, examples: int, seed: int, headers: dict, report: Report) -> None:
    @seeded(seed)
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],  # nothing raises: nothing to shrink
    )
    def one(case) -> None:
        report.requests += 1
        try:
            response = case.call(headers=headers)
        except requests.Timeout:  # no answer within schemathesis' 10 s: a hang
            report.failures.append(f"{operation.label}: no answer to {case.body!r:.300}")
            return
        report.statuses[response.status_code] += 1
        report.server_errors += response.status_code >= 500
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except FailureGroup as failed:  # every check that failed, and the request
            checks = "; ".join(f"{f.title}: {f.message}"[:600] for f in failed.exceptions)
            report.failures.append(f"{checks}\n    {case.as_curl_command()[:800]}")

    try:
        one()
    except Unsatisfiable:  # nothing to break: an operation without parameters or body
        assert mode == GenerationMode.NEGATIVE, operation.label
