"""Property-based run of schemathesis against the API's own OpenAPI schema, on a live test server.

Bounded and reproducible: a fixed number of derandomized examples per operation. Every response must be
a non-5xx whose status code, content type, headers and body the schema documents.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from claimaudit.services import api_token_create
from tests.factories import make_answer, make_audit, make_dataset, make_user

EXAMPLES = 20  # per operation: bounded, and the same examples on every run (derandomized)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def token(transactional_db):
    lead = make_user("lead", "lead")
    answers = [make_answer(make_dataset("weekly"), n_claims=2) for _ in range(3)]
    make_audit(answers, name="2026-W48")
    return api_token_create(lead, "schemathesis")[1]


def test_it_answers_every_generated_request_within_the_schema(live_server, token):
    headers = {"Authorization": f"Bearer {token}"}
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/v1/openapi.json", timeout=120, headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 11  # every documented method and path

    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def run(case):
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=120)

        run()
