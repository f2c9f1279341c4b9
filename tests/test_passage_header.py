"""A passage's title and url (kept in its meta at import) in its header on the workspace and adjudication pages."""

from django.test import TestCase
from django.urls import reverse

from audit.models import AuditAnswer, Passage
from tests.factories import make_assigned_audit, make_labelled_audit, make_user

META = {"title": "Key rotation <guide>", "url": "https://kb.example.com/keys", "score": 0.9}
LINK = (
    '<a class="passage-title" href="https://kb.example.com/keys" rel="noopener noreferrer nofollow" '
    'target="_blank">Key rotation &lt;guide&gt;</a>'
)


class PassageHeaderTests(TestCase):
    def test_it_shows_the_title_linked_to_the_url_in_the_workspace(self):
        ann = make_user("ann", "annotator")
        _, mine = make_assigned_audit(ann, n_answers=1)
        Passage.objects.filter(answer__audit_items__assignments=mine[0], position=0).update(meta=META)
        self.client.force_login(ann)
        r = self.client.get(reverse("workspace", args=[mine[0].pk]))
        self.assertContains(r, LINK, count=1)

    def test_it_shows_the_title_linked_to_the_url_on_the_adjudication_page(self):
        adj = make_user("adj", "adjudicator")
        audit = make_labelled_audit(make_user("a", "annotator"), make_user("b", "annotator"), n_answers=1)
        item = AuditAnswer.objects.get(audit=audit)
        Passage.objects.filter(answer_id=item.answer_id, position=1).update(meta=META)
        self.client.force_login(adj)
        r = self.client.get(reverse("adjudicate", args=[audit.id, item.id]))
        self.assertContains(r, LINK, count=1)
