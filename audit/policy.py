"""The two policies (strict, lenient) read from the same claim verdicts. Pure functions, no ORM."""

from audit.models.answers import Verdict
from audit.models.audits import Policy

FAILING = {
    Policy.STRICT: frozenset({Verdict.UNSUPPORTED.value, Verdict.CONTRADICTED.value}),
    Policy.LENIENT: frozenset({Verdict.CONTRADICTED.value}),
}
POLICIES = (Policy.STRICT.value, Policy.LENIENT.value)


def answer_fails(verdicts, policy):
    """True when any of an answer's claim verdicts fails under the policy (no scored claim: passes)."""
    failing = FAILING[policy]
    return any(v in failing for v in verdicts)
