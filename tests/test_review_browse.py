"""Review: the lead's answer pages treat a malformed query parameter as absent instead of failing."""

from django.test import TestCase

from tests.factories import make_answer, make_user


class MalformedParameterTests(TestCase):
    def setUp(self):
        self.answer = make_answer()
        self.client.raise_request_exception = False
        self.client.force_login(make_user("lead", "lead"))

    def test_it_ignores_a_dataset_that_is_not_an_id(self):
        r = self.client.get("/answers/?dataset=abc")
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, self.answer.external_id)

    def test_it_ignores_a_judge_version_that_is_not_an_id(self):
        r = self.client.get(f"/answers/{self.answer.id}/?version=abc")
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, self.answer.question)


class AnswerPageWayBackTests(TestCase):
    def test_it_links_an_answer_back_to_its_datasets_list(self):
        answer = make_answer()
        self.client.force_login(make_user("lead", "lead"))
        r = self.client.get(f"/answers/{answer.id}/")
        back = f'<a href="/answers/?dataset={answer.dataset_id}">All answers of {answer.dataset.name}</a>'
        self.assertContains(r, back, html=True)
