"""The one rule for text spans (audit/spans.py), and that import, the judge's store and the pages share it."""

from audit.judge.guard import evidence_guard
from audit.spans import evidence_span, layers, locate, normalise_ws, segments

ANSWER = "The tower was completed in 1889.\r\nIt is  324 metres\ttall.\r\nIt was built for the fair."


def test_it_normalises_every_whitespace_run_and_the_ends():
    assert normalise_ws("  a\r\n\tb   c \n") == "a b c"
    assert normalise_ws(None) == ""


def test_it_locates_a_claim_with_stray_whitespace_crlf_and_case():
    for claim, expected in (
        ("  The tower was completed in 1889. ", "The tower was completed in 1889."),
        ("\nIt is 324 metres tall.", "It is  324 metres\ttall."),
        ("it was built for the fair.\r\n", "It was built for the fair."),
    ):
        start, end = locate(ANSWER, claim)
        assert ANSWER[start:end] == expected
    assert locate(ANSWER, "It is 325 metres tall.") == (None, None)
    assert locate(ANSWER, "   ") == (None, None)


def test_it_prefers_the_occurrence_after_the_previous_claim():
    text = "Yes. It works. Yes. It works."
    assert locate(text, "Yes.") == (0, 4)
    assert locate(text, "Yes.", 14) == (15, 19)
    assert locate(text, "yes.  it works.", 14) == (15, 29)  # the tolerant search also starts there
    assert locate(text, "It works.", 29) == (5, 14)  # nothing after: the first occurrence


def test_it_finds_evidence_case_sensitively_and_agrees_with_the_guard():
    passage = "The tower is 330 metres (1,083 ft) tall,\r\nabout the same height as an 81-storey building."
    quote = "330 metres (1,083 ft) tall, about the same"
    start, end = evidence_span(passage, quote)
    assert passage[start:end] == "330 metres (1,083 ft) tall,\r\nabout the same"
    assert evidence_guard("supported", quote, passage) == ("supported", True)
    assert evidence_span(passage, "330 METRES") is None  # a quote is verbatim
    assert evidence_guard("supported", "330 METRES", passage) == ("unsupported", False)
    assert evidence_span(passage, "") is None and evidence_guard("contradicted", "", passage) == ("unsupported", False)


def test_it_cuts_segments_first_span_wins():
    assert segments("abcdef", [(1, 3, "x"), (2, 4, "y"), (4, 6, "z"), (None, None, "w")]) == [
        ("a", None),
        ("bc", "x"),
        ("d", None),
        ("ef", "z"),
    ]
    assert segments("abc", [(0, 9, "x")]) == [("abc", None)]  # out of range: skipped


def test_it_cuts_layers_keeping_overlaps_visible():
    assert layers("abcdef", [(1, 4, "A"), (3, 5, "B")]) == [
        ("a", []),
        ("bc", ["A"]),
        ("d", ["A", "B"]),
        ("e", ["B"]),
        ("f", []),
    ]
