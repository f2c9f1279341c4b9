"""The HTTP API at its edges: races, oversized bodies, ignored parameters. Each test is an exact request that
once answered a 500, an HTML page, or a 200 that meant something else."""

from unittest import mock

from audit.models import Audit
from audit.sampling import services as sampling
from tests.factories import make_answer, make_dataset
from tests.test_api import ApiCase


class AuditNameRaceTests(ApiCase):
    def test_it_refuses_an_audit_name_taken_by_a_concurrent_request_naming_it(self):
        answer = make_answer(make_dataset("weekly"))
        real_preview = sampling.audit_preview

        def preview_while_another_request_commits(**kwargs):
            # The other request passed the same name checks a moment earlier and commits now.
            Audit.objects.create(name="W49", dataset=answer.dataset, size=1, seed=1, population_size=1)
            return real_preview(**kwargs)

        with mock.patch.object(sampling, "audit_preview", preview_while_another_request_commits):
            r = self.call("post", "/audits", body={"dataset": "weekly", "name": "W49", "size": 1, "seed": 1})
        body = self.assertError(r, 400)
        self.assertEqual([e["field"] for e in body["errors"]], ["name"])
