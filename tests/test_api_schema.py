"""Property-based run of schemathesis against the API's own OpenAPI schema, on a live test server.

Bounded and reproducible: a fixed number of derandomized examples per operation, for a lead's token (inputs the
schema allows, then inputs it does not) and for an annotator's (who may read only their own progress). Every
response must be a non-5xx whose status code, content type, headers and body the schema documents; an input the
schema refuses must be refused. Not checked: that every input the schema allows is accepted
(positive_data_acceptance): cross-field rules the README documents (exactly one of dataset or audit, an import
record's required fields in any of its formats, a name unless previewing) are 400s that a JSON schema cannot state.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from claimaudit.services import api_token_create
from tests.factories import make_answer, make_assignments, make_audit, make_dataset, make_user

EXAMPLES = 20  # per operation and run: bounded, and the same examples on every run (derandomized)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def tokens(transactional_db):
    lead, annotator = make_user("lead", "lead"), make_user("ann", "annotator")
    answers = [make_answer(make_dataset("weekly"), n_claims=2) for _ in range(3)]
    make_assignments(make_audit(answers, name="2026-W48"), annotator, make_user("other", "annotator"))
    return {"lead": api_token_create(lead, "schemathesis")[1], "annotator": api_token_create(annotator, "st")[1]}


@pytest.mark.parametrize(
    ("who", "mode", "checks"),
    [
        ("lead", GenerationMode.POSITIVE, CHECKS),
        ("lead", GenerationMode.NEGATIVE, [*CHECKS, negative_data_rejection]),
        ("annotator", GenerationMode.POSITIVE, CHECKS),
    ],
)
def test_it_answers_every_generated_request_within_the_schema(live_server, tokens, who, mode, checks):
    headers = {"Authorization": f"Bearer {tokens[who]}"}
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
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case):
            case.call_and_validate(headers=headers, checks=checks, timeout=120)

        run()
