def annotator_audits(user):
    """[{audit, total, submitted, next_assignment_id}] for the audits where user has assignments."""
    return []
