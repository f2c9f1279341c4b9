"""Acceptance: a tool's one string of context that is clearly a numbered list of passages ("passage 1:...\\n\\n
passage 2:...", as RAGTruth keeps them; "Passage N:", "Document N:", "Source N:", "[N]" at line start) imports as
those passages in order, ids from the markers, the string as written in the answer's meta.passages_raw; a string
that only mentions a number, or numbers out of sequence, stays one passage. Uploaded through the web form."""

import json

from audit.models import Answer
from tests.test_import_real_shapes import Upload


def ids_texts(answer):
    return list(answer.passages.values_list("external_id", "text"))


class NumberedContextTests(Upload):
    def imported(self, context, **fields):
        rec = {"input": "Which plan has SSO?", "output": "The Enterprise plan.", "context": context, "id": "q1"}
        self.assertEqual(self.upload("logs.jsonl", json.dumps(rec).encode(), **fields).created, 1)
        return Answer.objects.get()

    def test_it_splits_each_common_spelling_of_numbered_passages(self):
        for context, ids in (
            ("passage 1:SSO is on Enterprise.\n\npassage 2:SCIM is on Enterprise.\n\n", ["passage 1", "passage 2"]),
            ("Passage 1: SSO is on Enterprise.\nPassage 2: SCIM is on Enterprise.", ["Passage 1", "Passage 2"]),
            ("Document 1: SSO is on Enterprise.\n\nDocument 2: SCIM is on Enterprise.", ["Document 1", "Document 2"]),
            ("Source 1: SSO is on Enterprise.\nSource 2: SCIM is on Enterprise.\n", ["Source 1", "Source 2"]),
            ("[1] SSO is on Enterprise.\n[2] SCIM is on Enterprise.", ["1", "2"]),
        ):
            with self.subTest(context):
                a = self.imported(context)
                self.assertEqual(ids_texts(a), [(ids[0], "SSO is on Enterprise."), (ids[1], "SCIM is on Enterprise.")])
                self.assertEqual(a.meta["passages_raw"], context)
                Answer.objects.all().delete()

    def test_it_keeps_a_passage_with_lines_and_inner_numbers_whole(self):
        context = "passage 1:Plans:\nTeam\nEnterprise [2]\n\npassage 2:[1] SSO needs Enterprise.\npassage 3:Audit logs."
        a = self.imported(context)
        self.assertEqual(
            ids_texts(a),
            [
                ("passage 1", "Plans:\nTeam\nEnterprise [2]"),
                ("passage 2", "[1] SSO needs Enterprise."),
                ("passage 3", "Audit logs."),
            ],
        )

    def test_it_keeps_a_string_that_is_not_clearly_a_numbered_list_as_one_passage(self):
        for context in (
            "[2] See the appendix.",
            "passage 1: SSO is on Enterprise.",  # one marker is not a list
            "passage 1: SSO.\npassage 3: SCIM.",  # out of sequence
            "passage 2: SSO.\npassage 1: SCIM.",
            "[1] SSO.\n[2] SCIM.\n[2] Audit logs.",
            "Plans below.\npassage 1: SSO.\npassage 2: SCIM.",  # the string does not start with the list
            "passage 1:\npassage 2: SCIM.",  # an empty item
            "Passage 1: SSO. See passage 2: SCIM.",  # a marker inside a line
        ):
            with self.subTest(context):
                a = self.imported(context)
                self.assertEqual([t for _, t in ids_texts(a)], [context])
                self.assertNotIn("passages_raw", a.meta)
                Answer.objects.all().delete()

    def test_it_keeps_the_records_own_passages_raw_and_splits_through_a_mapping(self):
        rec = {
            "prompt": "Which plan has SSO?",
            "completion": "Enterprise.",
            "ctx": "Document 1: SSO is on Enterprise.\nDocument 2: SCIM too.",
            "meta": {"passages_raw": "kept"},
        }
        mapping = "question=prompt\nanswer=completion\npassages=ctx"
        self.upload("m.jsonl", json.dumps(rec).encode(), format="mapping", mapping=mapping)
        a = Answer.objects.get()
        self.assertEqual([i for i, _ in ids_texts(a)], ["Document 1", "Document 2"])
        self.assertEqual(a.meta["passages_raw"], "kept")  # the record's own meta wins
