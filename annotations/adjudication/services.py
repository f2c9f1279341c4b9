def gold_on_submit(audit_answer):
    """Called (inside the submit transaction) after an assignment of audit_answer is submitted.

    When both assignments are submitted, claims whose two verdicts agree become gold (source: agreed).
    When every assignment of the audit is submitted, the audit moves to adjudication."""
