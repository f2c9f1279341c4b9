"""Trail values and imported metadata read as text on every page: no Python repr (lists in brackets, None,
dicts in braces, a passage's database id)."""

import re

from django.test import TestCase

from annotations.assignments.services import audit_assign
from annotations.models import Assignment
from annotations.workspace.services import claim_label_save
from audit.history import describe
from audit.models import AuditAnswer, Passage
from tests.factories import make_answer, make_audit, make_user

REPR = re.compile(r"\[\'|\{\'|: None\b|\bTrue\b|\bFalse\b")


def cells(html):
    return html.split("<tbody>")[1].split("</tbody>")[0]


def test_it_describes_values_without_python_repr():
    passages = {292: 3}
    assert describe(None) == "none" and describe(True) == "yes" and describe([]) == "none"
    assert describe({"annotators": ["ann1", "ann3"], "assignments": 4}) == "annotators: ann1, ann3 · assignments: 4"
    assert describe({"strata": ["judge", "meta.model"], "seed": 7}) == "seed: 7 · strata: judge, meta.model"
    assert describe({"evidence": None}) == "evidence: none"
    span = {"passage": 292, "start": 4, "end": 9, "text": "Paris"}
    assert describe({"evidence": span}, passages) == "evidence: “Paris” in passage 3"
    gold = {"verdict": "supported", "evidence_passage": 292, "evidence_text": "Paris", "version": 2}
    assert describe(gold, passages) == "verdict: supported · evidence: “Paris” in passage 3 · version: 2"
    assert describe({"passage": 5, "text": "x"}) == "“x” in a passage"  # never the bare database id
    assert describe({"derived": {"answer_has_numbers": False}}) == "derived: answer_has_numbers: no"
    assert describe(list(range(12))).endswith("9 … (12 in all)")
    assert describe({"version": 3, "chars": 40, "copied_from": None, "restores": 1}) == "version: 3 · restores: 1"


class PagesTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.ann1, self.ann3 = make_user("ann1", "annotator"), make_user("ann3", "annotator")
        self.client.force_login(self.lead)

    def test_it_shows_the_people_trail_as_text(self):
        self.client.post(f"/people/{self.ann3.pk}/roles/", {"roles": ["adjudicator"]})
        self.client.post(f"/people/{self.ann3.pk}/active/", {"active": "0"})
        page = self.client.get(f"/people/{self.ann3.pk}/").content.decode()
        trail = page.split('id="trail-h"')[1]
        assert "from active: yes · to active: no" in trail
        assert "from roles: annotator · to roles: adjudicator" in trail
        assert not REPR.search(trail), trail

    def test_it_shows_the_answer_history_as_text_with_passages_by_number(self):
        answer = make_answer(n_claims=1, n_passages=2)
        audit = make_audit([answer], status="draft")
        audit_assign(audit, [self.ann1, self.ann3], user=self.lead)
        a = Assignment.objects.get(annotator=self.ann1)
        claim, passage = answer.claims.get(), Passage.objects.get(answer=answer, position=1)
        text = "Paris is the capital"
        start = passage.text.index(text)
        evidence = {"passage": passage.pk, "start": start, "end": start + len(text), "text": text}
        claim_label_save(a, claim, user=self.ann1, verdict="supported", evidence=evidence)
        claim_label_save(a, claim, user=self.ann1, evidence=None)
        item = AuditAnswer.objects.get(audit=audit)
        rows = cells(self.client.get(f"/adjudicate/{audit.pk}/answers/{item.pk}/history/").content.decode())
        assert "annotators: ann1, ann3" in rows
        assert f"evidence: “{text}” in passage 2" in rows and "evidence: none" in rows
        assert f"passage: {passage.pk}" not in rows and not REPR.search(rows), rows

    def test_it_shows_nested_answer_metadata_as_text(self):
        answer = make_answer(meta={"derived": {"answer_has_numbers": False}, "tags": ["a", "b"], "score": None})
        page = self.client.get(f"/answers/{answer.pk}/").content.decode()
        meta = page.split('<dl class="meta">')[1].split("</dl>")[0]
        assert "<dd>answer_has_numbers: no</dd>" in meta and "<dd>a, b</dd>" in meta and "<dd>none</dd>" in meta
