"""The weekly-loop test's person-at-a-browser: logs in through the login form, keeps the CSRF token the
pages carry (the form field, or the `hx-headers` of <body> that htmx sends), and reads pages as HTML.
Also the loop's input file and the annotators' labelling rule."""

import html
import json
import re

from django.test import Client

from tests.factories import PASSWORD

TOKEN = re.compile(r'(?:"x-csrftoken": "|name="csrfmiddlewaretoken" value=")([^"]+)"')


def text_of(fragment):
    """The text a browser shows for an HTML fragment (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


class Person:
    """One user at one browser: real login, CSRF enforced, every HTML page kept for blindness checks."""

    def __init__(self, user):
        self.user, self.c, self.token, self.pages = user, Client(enforce_csrf_checks=True), None, []
        self.get("/login/")
        r = self.post("/login/", {"username": user.username, "password": PASSWORD}, expect=302)
        self.get(r["Location"])  # login rotates the CSRF token: read the new one from the next page

    def _keep(self, r):
        if "text/html" in r.get("Content-Type", ""):
            body = r.content.decode()
            self.pages.append(body)
            if m := TOKEN.search(body):
                self.token = m.group(1)
        return r

    def get(self, url, expect=200, htmx=False, data=None):
        headers = {"HX-Request": "true"} if htmx else {}
        r = self.c.get(url, data or {}, headers=headers)
        assert r.status_code == expect, (url, r.status_code, r.content[:600])
        return self._keep(r)

    def post(self, url, data, expect=200, htmx=False):
        data = dict(data)
        if htmx:  # htmx sends the token from <body hx-headers>
            headers = {"HX-Request": "true", "X-CSRFToken": self.token}
        else:
            headers = {}
            data["csrfmiddlewaretoken"] = self.token
        r = self.c.post(url, data, headers=headers)
        assert r.status_code == expect, (url, r.status_code, r.content[:600])
        return self._keep(r)


def loop_records():
    """10 answers about 'Model i': sentence 1 and 2 are in the passages, the waterproof one never is.
    Answers 0-4 carry pre-decomposed claims (0 and 1 with an external judge's verdicts, whose evidence
    quotes nothing in the passages: the guard fails it); answers 5-9 have none (the judge decomposes)."""
    out = []
    for i in range(10):
        s1, s2 = f"The Model {i} battery lasts {10 + i} hours.", f"The Model {i} weighs {i + 1} kilograms."
        s3 = f"The Model {i} is waterproof to {i + 30} metres."
        sentences = [s1, s2, s3] if i in (0, 1, 4, 5, 9) else [s1, s2]
        rec = {
            "id": f"wk-{i}",
            "question": f"Tell me about the Model {i}.",
            "answer": " ".join(sentences),
            "created_at": f"2026-03-0{1 + i % 7}T10:00:00Z",
            "meta": {"doc_type": "faq" if i < 6 else "manual"},
            "passages": [
                {
                    "id": f"m{i}-spec",
                    "source": "specs.pdf",
                    "text": f"Specifications. {s1} The charger is sold separately.",
                },
                {"id": f"m{i}-faq", "source": "faq.html", "text": f"Shipping takes a week. {s2}"},
            ],
        }
        if i < 5:
            rec["claims"] = [{"text": s} for s in sentences]
        if i < 2:
            rec["claims"][0].update(
                verdict="supported",
                evidence=f"VENDOR-QUOTE-{i} not in any passage",
                passage_id=f"m{i}-spec",
                reason=f"VENDOR-REASON-{i}",
            )
        out.append(rec)
    return out


def jsonl(records):
    return "".join(json.dumps(r) + "\n" for r in records).encode()


FLIP = {
    "supported": "unsupported",
    "unsupported": "contradicted",
    "contradicted": "unsupported",
    "non_assertive": "unsupported",
}


def true_verdict(claim_text, passages):
    """The careful annotator's verdict: supported when the claim (without its full stop) is a span of a
    passage, non_assertive without a content word about the product, otherwise unsupported."""
    core = claim_text.strip().rstrip(".")
    if "Model" not in core:
        return "non_assertive", None
    for pk, text in passages.items():
        at = text.find(core)
        if at >= 0:
            return "supported", (pk, at, at + len(core), core)
    return "unsupported", None
