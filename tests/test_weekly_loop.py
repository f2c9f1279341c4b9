"""The whole weekly loop through the HTTP endpoints the pages use, as the
real users, with CSRF enforced: import -> judge run -> audit (preview, create, assign) -> two blind
annotators -> adjudication -> report -> close -> export -> reopen -> history.

The judge run is started from the judge runs page, which enqueues a django_tasks_db task; the test then
runs that stored task with the db_worker's own Worker.run_task (the polling loop itself needs its own
transaction, see test_judge_offline for the real worker process). Judge verdicts are read from the
database, never assumed, so the offline judge may change without breaking this test."""

import csv
import io
import json
import re

import pyarrow.parquet as pq
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.defaultfilters import floatformat
from django.test import TestCase
from django_tasks_db.models import DBTaskResult

from annotations.models import Assignment, GoldLabel
from audit.models import Answer, AuditAnswer, Claim, JudgeRun, JudgeVerdict, JudgeVersion
from tests.factories import make_user, worker_run
from tests.loop_helpers import FLIP, Person, jsonl, loop_records, text_of, true_verdict

BAD = {"unsupported", "contradicted"}
CLAIM_ROW = re.compile(r'<p class="claim-text" id="c(\d+)-text"><span class="claim-no">\d+\.</span> (.*?)</p>', re.S)
PASSAGE = re.compile(r'<p class="passage-text" data-passage="(\d+)">(.*?)</p>', re.S)


def section(page, sid):
    m = re.search(rf'<(section|p|tr|table) id="{sid}"[^>]*>(.*?)</\1>', page, re.S)
    assert m, f"#{sid} missing"
    return re.sub(r"\s+", " ", text_of(m.group(2)))


class WeeklyLoopTests(TestCase):
    def setUp(self):
        self.lead = Person(make_user("lena_lead", "lead"))
        self.alice = Person(make_user("alice_annot", "annotator"))
        self.bob = Person(make_user("bob_annot", "annotator"))
        self.carol = Person(make_user("carol_adj", "adjudicator"))
        self.labels = {}  # claim id -> {username: verdict}

    def test_it_runs_the_weekly_loop_through_the_pages(self):
        dataset_id = self.import_answers()
        run = self.judge(dataset_id)
        audit_id = self.create_audit(dataset_id)
        self.assign(audit_id)
        items = list(AuditAnswer.objects.filter(audit_id=audit_id).order_by("position"))
        claim_ids = set(Claim.objects.filter(answer__audit_items__audit_id=audit_id).values_list("id", flat=True))
        for person in (self.alice, self.bob):
            self.annotate(person, audit_id, len(items))
        self.assertEqual(set(self.labels), claim_ids, "every claim of the sample labelled by both")
        disputed = sorted(c for c, v in self.labels.items() if v["alice_annot"] != v["bob_annot"])
        self.assertGreaterEqual(len(disputed), 3)
        self.assertLess(len(disputed), len(claim_ids))
        self.check_blind(audit_id)
        gold = self.adjudicate(audit_id, disputed)
        self.assertEqual(dict(GoldLabel.objects.filter(audit_id=audit_id).values_list("claim_id", "verdict")), gold)
        self.check_report(audit_id, run, items, gold)
        self.close_and_export(audit_id, items, gold)
        self.reopen_and_history(audit_id, items, disputed)

    # 1. Import -------------------------------------------------------------------------------------
    def import_answers(self):
        self.lead.get("/import/")
        records = loop_records()
        upload = SimpleUploadedFile("week.jsonl", jsonl(records), content_type="application/jsonl")
        r = self.lead.post(
            "/import/",
            {"file": upload, "dataset": "", "new_dataset": "loop-ds", "judge_name": "vendor-judge"},
            htmx=True,
        )
        page = r.content.decode()
        self.assertIn("Imported week.jsonl into loop-ds", page)
        self.assertIn('<div class="stat">10</div>created', page)
        self.assertEqual(Answer.objects.filter(dataset__name="loop-ds").count(), 10)
        self.assertEqual(Claim.objects.count(), sum(len(r.get("claims", [])) for r in records))
        return Answer.objects.filter(dataset__name="loop-ds").values_list("dataset_id", flat=True).first()

    # 2. Judge --------------------------------------------------------------------------------------
    def judge(self, dataset_id):
        page = self.lead.get("/judge/runs/").content.decode()
        self.assertRegex(page, rf'<option value="{dataset_id}"[^>]*>loop-ds</option>')
        r = self.lead.post("/judge/runs/", {"dataset": dataset_id, "backend": "offline"}, expect=302)
        run_id = int(re.fullmatch(r"/judge/runs/(\d+)/", r["Location"]).group(1))
        task = DBTaskResult.objects.get()
        self.assertTrue(task.task_path.endswith("judge_run_task"))
        self.assertEqual(task.args_kwargs["args"][0], run_id)
        task = worker_run(task, "weekly-loop-test")
        self.assertEqual(task.status, "SUCCESSFUL", task.traceback)
        r = self.lead.get(f"/judge/runs/{run_id}/", expect=286, htmx=True)  # done: htmx stops polling
        run = JudgeRun.objects.get(pk=run_id)
        self.assertEqual((run.status, run.answers_done, run.items_failed), ("done", 10, 0), run.message)
        self.assertEqual(JudgeVerdict.objects.filter(run=run).count(), Claim.objects.count())
        self.assertGreater(Claim.objects.filter(origin="judge").count(), 0)  # answers 5-9 were decomposed
        return run

    # 3. Audit and assignment -------------------------------------------------------------------------
    def create_audit(self, dataset_id):
        self.lead.get("/audits/new/")
        form = {
            "name": "2026-W10",
            "dataset": dataset_id,
            "size": 8,
            "strata": "meta.doc_type, judge",
            "allocation": "proportional",
            "default_fail_rate": 0.2,
            "min_per_stratum": 1,
            "seed": 4242,
            "meta_filters": "",
            "fail_rates": "",
            "created_from": "",
            "created_to": "",
            "judge_version": "",
        }
        preview = self.lead.post("/audits/new/", form, htmx=True).content.decode()
        self.assertIn("Population: <strong>10</strong> answers; sample: <strong>8</strong>", preview)
        self.assertIn("doc_type=faq", preview)
        self.assertFalse(AuditAnswer.objects.exists(), "the preview saves nothing")
        r = self.lead.post("/audits/new/", form, expect=302)
        audit_id = int(re.fullmatch(r"/audits/(\d+)/", r["Location"]).group(1))
        self.assertEqual(AuditAnswer.objects.filter(audit_id=audit_id).count(), 8)
        return audit_id

    def assign(self, audit_id):
        page = self.lead.get(f"/audits/{audit_id}/").content.decode()
        ids = {name: int(pk) for pk, name in re.findall(r'value="(\d+)"[^>]*>\s*(\w+_annot)', page)}
        self.assertEqual(set(ids), {"alice_annot", "bob_annot"})
        self.lead.post(f"/audits/{audit_id}/assign/", {"annotators": list(ids.values())}, expect=302)
        page = self.lead.get(f"/audits/{audit_id}/").content.decode()
        self.assertIn("Labelling", page)
        self.assertEqual(Assignment.objects.filter(audit_answer__audit_id=audit_id).count(), 16)

    # 4. Annotate (blind) -----------------------------------------------------------------------------
    def annotate(self, person, audit_id, n_items):
        me = person.user.username
        home = person.get("/").content.decode()
        url = re.search(r'href="(/label/\d+/)">Label next answer', home).group(1)
        submitted = 0
        while url.startswith("/label/") and "/queue/" not in url:
            page = person.get(url).content.decode()
            self.assertNotIn('<mark class="evidence"', page)  # nothing marked before I attach evidence
            passages = {int(pk): text_of(t) for pk, t in PASSAGE.findall(page)}
            for claim_id, raw in CLAIM_ROW.findall(page):
                self.label_claim(
                    person, url, page, int(claim_id), text_of(raw.split(' <span class="tag">')[0]), passages
                )
            if me == "alice_annot" and submitted == 0:  # answer-level field: the omission flag
                person.post(f"{url}answer/", {"field": "omission", "checked": "on"}, htmx=True)
            r = person.post(f"{url}submit/", {"seconds": 95}, htmx=True)
            url, submitted = r["HX-Redirect"], submitted + 1
        self.assertEqual(url, f"/label/queue/{audit_id}/")
        queue = person.get(url).content.decode()
        self.assertIn(f"{n_items} of {n_items} answers submitted", queue)

    def label_claim(self, person, url, page, claim_id, text, passages):
        me = person.user.username
        verdict, span = true_verdict(text, passages)
        if me == "bob_annot" and claim_id % 3 == 0:  # the known subset on which Bob disagrees
            verdict, span = FLIP[verdict], None
        save = re.search(rf'<li id="claim-{claim_id}"[^>]*>.*?<form hx-post="([^"]+)"', page, re.S).group(1)
        self.assertTrue(save.startswith(url))
        row = person.post(save, {"verdict": verdict}, htmx=True).content.decode()
        self.assertIn(f'data-verdict="{verdict}"', row)
        if verdict in ("supported", "contradicted"):
            if span and (me == "alice_annot" or claim_id % 2 == 0):  # select the text and press e
                pk, start, end, quote = span
                row = person.post(
                    save, {"passage": pk, "start": start, "end": end, "text": quote}, htmx=True
                ).content.decode()
                self.assertIn("<blockquote>" + quote + "</blockquote>", row)
            else:  # no evidence selected: the note says why
                person.post(save, {"note": f"{me}: no span to select for this verdict"}, htmx=True)
        if me == "alice_annot" and verdict == "unsupported":
            person.post(save, {"true_not_in_passages": "false"}, htmx=True)  # the flag button as it shows
        self.labels.setdefault(claim_id, {})[me] = verdict

    def check_blind(self, audit_id):
        reasons = set(JudgeVerdict.objects.exclude(reason="").values_list("reason", flat=True))
        names = set(JudgeVersion.objects.values_list("name", flat=True))
        secrets = reasons | names | {"VENDOR-QUOTE", "VENDOR-REASON", "offline baseline", "guard"}
        for person, other in ((self.alice, "bob_annot"), (self.bob, "alice_annot")):
            self.assertGreater(len(person.pages), 10)
            for page in person.pages:
                self.assertNotIn(other, page)
                for s in secrets:
                    self.assertNotIn(s, page)
            answer_id = AuditAnswer.objects.filter(audit_id=audit_id).values_list("answer_id", flat=True)[0]
            for url in (
                f"/reports/{audit_id}/",
                f"/reports/{audit_id}/report.json",
                f"/answers/{answer_id}/",
                "/judge/runs/",
                "/adjudicate/",
                f"/adjudicate/export/{audit_id}/",
                f"/audits/{audit_id}/",
            ):
                person.get(url, expect=403)  # no URL leads an annotator to the judge or the other's labels

    # 6. Adjudicate -----------------------------------------------------------------------------------
    def adjudicate(self, audit_id, disputed):
        queue = self.carol.get("/adjudicate/").content.decode()
        self.assertIn(f"<strong>{len(disputed)}</strong> disputed claim", queue)
        gold = {c: v["alice_annot"] for c, v in self.labels.items() if c not in disputed}
        links = sorted(set(re.findall(rf'href="(/adjudicate/{audit_id}/answers/\d+/)"', queue)))
        seen = []
        for link in links:
            page = self.carol.get(link).content.decode()
            slot_of = dict((n, s) for s, n in re.findall(r"<strong>([AB])</strong> = (\w+)", page))
            blocks = re.findall(r'class="claim-block card kind-disputed" id="claim-block-(\d+)"', page)
            for claim_id in map(int, blocks):
                who = "alice_annot" if disputed.index(claim_id) % 2 == 0 else "bob_annot"
                verdict = self.labels[claim_id][who]
                evidence = slot_of["alice_annot"].lower() if verdict == "supported" else "none"
                form = re.search(rf'hx-post="({link}claims/{claim_id}/)".*?name="version" value="(\d+)"', page, re.S)
                r = self.carol.post(
                    form.group(1),
                    {
                        "version": form.group(2),
                        "verdict": verdict,
                        "evidence": evidence,
                        "passage": "",
                        "start": "",
                        "end": "",
                        "reason": f"Passage check: {verdict} (took {who})",
                    },
                    htmx=True,
                )
                self.assertIn("Saved gold (version 1)", r.content.decode())
                gold[claim_id] = verdict
                seen.append(claim_id)
        self.assertEqual(sorted(seen), disputed)
        queue = self.carol.get("/adjudicate/").content.decode()
        self.assertIn(f"<strong>{len(disputed)}</strong> resolved", queue)
        return gold

    # 7. Report ---------------------------------------------------------------------------------------
    def expected(self, items, gold, judge):
        claims_of = {}
        for cid, aid in Claim.objects.filter(id__in=gold).values_list("id", "answer_id"):
            claims_of.setdefault(aid, []).append(cid)
        fail = {it.answer_id: any(gold[c] in BAD for c in claims_of.get(it.answer_id, [])) for it in items}
        by = {
            u: {it.answer_id: any(self.labels[c][u] in BAD for c in claims_of[it.answer_id]) for it in items}
            for u in ("alice_annot", "bob_annot")
        }
        return {
            "fails": sum(fail.values()),
            "n": len(items),
            "claims": len(gold),
            "fail": fail,
            "claim_agree": sum(v["alice_annot"] == v["bob_annot"] for v in self.labels.values()),
            "answer_agree": sum(by["alice_annot"][a] == by["bob_annot"][a] for a in fail),
            "judge_agree": sum(judge[c] == g for c, g in gold.items()),
        }

    def check_report(self, audit_id, run, items, gold):
        judge = dict(
            JudgeVerdict.objects.filter(judge_version=run.judge_version, claim_id__in=gold).values_list(
                "claim_id", "verdict"
            )
        )
        self.assertEqual(set(judge), set(gold))
        e = self.expected(items, gold, judge)
        page = self.lead.get(f"/reports/{audit_id}/").content.decode()
        faith = section(page, "faithfulness")
        self.assertIn(f"{e['fails']} of {e['n']} answers have an unsupported or contradicted claim", faith)
        rate = floatformat(e["fails"] / e["n"], 3)
        self.assertIn(f'<h3>Answers failing</h3><p class="stat"><span class="num">{rate}<', page)
        iaa = section(page, "iaa-percent")
        self.assertIn(f"{e['claim_agree']} of {e['claims']}", iaa)
        self.assertIn(f"{e['answer_agree']} of {e['n']}", iaa)
        acc = section(page, "judge-accuracy")
        self.assertIn(f"{floatformat(e['judge_agree'] / e['claims'], 3)}", acc)
        self.assertIn(f"{e['judge_agree']} of {e['claims']}", acc)
        self.assertIn(
            f"The judge agreed with gold on {e['judge_agree']} of {e['claims']} claims; the annotators "
            f"agreed with each other on {e['claim_agree']} of {e['claims']}",
            section(page, "noise-floor"),
        )
        r = self.lead.get(f"/reports/{audit_id}/report.json")
        self.assertIn("attachment", r["Content-Disposition"])
        data = json.loads(r.content)
        self.assertEqual(data["judge"]["version"]["id"], run.judge_version_id)
        self.assertEqual((data["faithfulness"]["fails"], data["faithfulness"]["answers"]), (e["fails"], e["n"]))
        self.assertEqual(data["agreement"]["claims"]["agree"], e["claim_agree"])
        rows = data["judge"]["matrix"]["rows"]
        matrix = {(row["judge"], c["gold"]): c["count"] for row in rows for c in row["cells"]}
        for jv in ("supported", "contradicted", "unsupported", "non_assertive"):
            for gv in ("supported", "contradicted", "unsupported", "non_assertive"):
                want = sum(judge[c] == jv and g == gv for c, g in gold.items())
                self.assertEqual(matrix[(jv, gv)], want, (jv, gv))
        self.expect = e

    # 8. Close, export, reopen ------------------------------------------------------------------------
    def close_and_export(self, audit_id, items, gold):
        detail = f"/audits/{audit_id}/"
        page = self.lead.get(detail).content.decode()
        self.assertIn(f"{len(gold)} of {len(gold)} claims have gold", page)
        self.lead.post(f"/adjudicate/{audit_id}/close/", {"next": detail}, expect=302)
        self.assertIn("labels and gold frozen", self.lead.get(detail).content.decode())
        # Edits are refused: an annotator's label save and the adjudicator's gold save.
        a = Assignment.objects.filter(annotator=self.alice.user, audit_answer__audit_id=audit_id).first()
        claim = Claim.objects.filter(answer=a.audit_answer.answer_id).first()
        r = self.alice.post(f"/label/{a.pk}/claim/{claim.pk}/", {"verdict": "non_assertive"}, htmx=True, expect=409)
        self.assertIn("closed", r.content.decode())
        g = GoldLabel.objects.get(audit_id=audit_id, claim=claim)
        r = self.carol.post(
            f"/adjudicate/{audit_id}/answers/{a.audit_answer_id}/claims/{claim.pk}/",
            {"version": g.version, "verdict": "non_assertive", "evidence": "none", "reason": "too late"},
            htmx=True,
            expect=409,
        )
        self.assertIn("closed", r.content.decode())
        self.assertEqual(GoldLabel.objects.get(pk=g.pk).verdict, gold[claim.pk])
        self.check_exports(audit_id, items, gold)

    def export(self, audit_id, fmt, level="claim"):
        url = f"/adjudicate/export/{audit_id}/"
        first = self.lead.get(url, data={"level": level, "format": fmt}).content
        self.assertEqual(self.lead.get(url, data={"level": level, "format": fmt}).content, first, fmt)
        return first

    def check_exports(self, audit_id, items, gold):
        csv_rows = list(csv.DictReader(io.StringIO(self.export(audit_id, "csv").decode())))
        jsonl_rows = [json.loads(line) for line in self.export(audit_id, "jsonl").decode().splitlines()]
        parquet_rows = pq.read_table(io.BytesIO(self.export(audit_id, "parquet"))).to_pylist()
        for rows, false in ((csv_rows, "false"), (jsonl_rows, False), (parquet_rows, False)):
            self.assertEqual(len(rows), len(gold))
            self.assertEqual({int(r["claim_id"]): r["gold_verdict"] for r in rows}, gold)
            self.assertEqual({r["provisional"] for r in rows}, {false})
        answers = list(csv.DictReader(io.StringIO(self.export(audit_id, "csv", level="answer").decode())))
        external = dict(Answer.objects.filter(id__in=self.expect["fail"]).values_list("external_id", "id"))
        self.assertEqual(
            {r["answer_id"]: r["gold_pass"] == "false" for r in answers},
            {x: self.expect["fail"][pk] for x, pk in external.items()},
        )

    def reopen_and_history(self, audit_id, items, disputed):
        detail = f"/audits/{audit_id}/"
        self.lead.post(
            f"/adjudicate/{audit_id}/reopen/", {"reason": "Recheck the Model 3 answers", "next": detail}, expect=302
        )
        self.assertIn("Adjudication", self.lead.get(detail).content.decode())
        reopened = self.lead.get(f"/adjudicate/export/{audit_id}/", data={"format": "jsonl"}).content.decode()
        self.assertEqual({json.loads(line)["provisional"] for line in reopened.splitlines()}, {True})
        item = AuditAnswer.objects.get(audit_id=audit_id, answer__claims=disputed[0])
        history = text_of(self.lead.get(f"/adjudicate/{audit_id}/answers/{item.pk}/history/").content.decode())
        for event in (
            "Label: save",
            "Gold label: adjudicated",
            "Audit: closed",
            "Audit: reopened",
            "Recheck the Model 3 answers",
            "alice_annot",
            "bob_annot",
            "carol_adj",
            "lena_lead",
        ):
            self.assertIn(event, history)
