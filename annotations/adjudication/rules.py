"""Who may adjudicate an answer: one rule over rows already loaded, used by the view, the service and the
queue alike."""

from django.conf import settings

from annotations.models import Assignment


def may_adjudicate_own():
    return settings.ADJUDICATOR_MAY_ADJUDICATE_OWN


def adjudication_refusal(user_id, item_id, slots, mine):
    """Who may adjudicate an answer, as one rule over rows already loaded: None when user may, else why
    not. slots: (annotator_id, status) of the item's assignments; mine: (item_id, status) of the user's
    own assignments on the same answer in any audit. Both annotators must have submitted; an annotator
    of the item may not (unless ADJUDICATOR_MAY_ADJUDICATE_OWN); nor may anyone holding the answer in
    another audit (when own answers are allowed: only while that assignment is not submitted, since they
    would see others' labels and the judge on claims they are still labelling)."""
    slots, own = list(slots), may_adjudicate_own()
    if len(slots) != 2 or any(status != Assignment.Status.SUBMITTED for _, status in slots):
        return "Both annotators must submit this answer before it can be adjudicated."
    if not own and any(annotator == user_id for annotator, _ in slots):
        return "You labelled this answer, so another adjudicator must resolve it."
    if any(i != item_id and (not own or status != Assignment.Status.SUBMITTED) for i, status in mine):
        return "You label this answer in another audit, so another adjudicator must resolve it."
    return None
