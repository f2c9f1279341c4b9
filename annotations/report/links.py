"""Drill-down links for the report's counts: each linked count is the row count of the list it opens
(filters.py computes that list from the same frames). Section builders call these while they build."""

from urllib.parse import urlencode

from django.urls import reverse


class Links:
    def __init__(self, audit_id, version):
        self.audit_id, self.version = audit_id, version

    def _url(self, name, q):
        q |= {"version": self.version["id"]} if self.version else {}
        return f"{reverse(name, args=[self.audit_id])}?{urlencode(q)}"

    def claims(self, **q):
        return self._url("report_claims", q)

    def answers(self, **q):
        return self._url("report_answers", q)
