"""A long real answer: 5,000 words cut into 100 imported claims, 40 passages of 300 words each (a RAG log of a
report-writing assistant). Imported through the web form, it renders whole on the answer page and in the
labelling workspace: every claim highlighted in the answer, every passage shown, in bounded time."""

import json
import time

from audit.models import Answer
from tests.factories import make_annotators, make_assignments, make_audit
from tests.test_import_real_shapes import Upload


def long_record():
    sentences = [
        f"In quarter {i % 4 + 1} region {i} reported revenue of {1000 + i} thousand euros." for i in range(100)
    ]
    words = " ".join(sentences).split()
    filler = " ".join(["The board noted the figures and asked for a follow-up."] * (5000 // 10))
    answer = " ".join(sentences) + " " + " ".join(filler.split()[: 5000 - len(words)])
    passages = [
        {"id": f"doc-{j}", "source": f"reports/{j}.pdf", "text": " ".join([f"Region {j} figures."] * 100)}
        for j in range(40)
    ]
    claims = [
        {"text": s, "verdict": "supported", "evidence": "Region 1 figures.", "passage_id": "doc-1"} for s in sentences
    ]
    return {
        "id": "long-1",
        "question": "Summarise the quarterly revenue by region.",
        "answer": answer,
        "passages": passages,
        "claims": claims,
    }


class LongAnswerTests(Upload):
    def test_it_imports_and_renders_a_5000_word_answer_with_40_passages(self):
        rec = long_record()
        self.assertEqual(len(rec["answer"].split()), 5000)
        self.assertEqual(self.upload("long.jsonl", json.dumps(rec).encode()).created, 1)
        a = Answer.objects.get()
        self.assertEqual((a.passages.count(), a.claims.count()), (40, 100))
        started = time.monotonic()
        r = self.client.get(f"/answers/{a.pk}/")
        self.assertEqual(r.status_code, 200)
        page = r.content.decode()
        for j in (0, 20, 39):
            self.assertIn(f"reports/{j}.pdf", page)
        annotator, other = make_annotators()
        [mine, _] = make_assignments(make_audit([a]), annotator, other)
        self.client.force_login(annotator)
        r = self.client.get(f"/label/{mine.pk}/")
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, 'data-passage="', count=40)
        self.assertContains(r, '<mark class="claim-span"', count=100)
        self.assertLess(time.monotonic() - started, 20)
