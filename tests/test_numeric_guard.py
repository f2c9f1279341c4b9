"""The numeric guard on hand-made claim / evidence pairs, near misses included."""

import pytest

from audit.judge.numeric import missing_values, numeric_guard, values

PASSING = [
    ("The plan costs 1,000 dollars.", "The plan costs 1000 dollars a year."),
    ("The plan costs 1000 dollars.", "Pricing: 1 000 dollars."),
    ("The fee is 10.0 euros.", "a fee of 10 euros"),
    ("Usage grew by 10%.", "usage grew 10 percent last year"),
    ("Usage grew by 10 per cent.", "grew by 10%"),
    ("It launched on 5 March 2021.", "Launch date: 2021-03-05."),
    ("It launched on March 5, 2021.", "launched 5th March 2021"),
    ("It launched in 2021.", "It launched on 5 March 2021."),
    ("It launched in March 2021.", "It launched on 5 March 2021."),
    ("The city has 1.5 million people.", "population: 1,500,000"),
    ("The tower is 330 metres tall.", "330 m"),
]

FLAGGED = [
    ("The plan costs 1,000 dollars.", "The plan costs 100 dollars.", ["n:1000"]),
    ("The plan costs 10,000 dollars.", "The plan costs 1,000 dollars.", ["n:10000"]),
    ("The fee is 10.5 euros.", "a fee of 10 euros", ["n:10.5"]),
    ("The fee is 10 euros.", "a fee of 10.5 euros", ["n:10"]),
    ("Usage grew by 10%.", "usage grew by 10 points", ["p:10"]),
    ("It launched on 5 March 2021.", "It launched on 6 March 2021.", ["d:2021-03-05"]),
    ("It launched on 5 March 2021.", "It launched in March 2021.", ["d:2021-03-05"]),
    ("It launched in 2021.", "It launched in 2012.", ["n:2021"]),
    ("It was completed in 1889 and has 300 floors.", "It was completed in 1889.", ["n:300"]),
    ("Revenue was 1.5 million.", "Revenue was 1.5 thousand.", ["n:1500000"]),
]


@pytest.mark.parametrize(("claim", "evidence"), PASSING)
def test_it_passes_supported_claims_whose_values_are_in_the_evidence(claim, evidence):
    assert numeric_guard("supported", claim, evidence) is True
    assert missing_values(claim, evidence) == []


@pytest.mark.parametrize(("claim", "evidence", "missing"), FLAGGED)
def test_it_flags_supported_claims_whose_values_differ_from_the_evidence(claim, evidence, missing):
    assert numeric_guard("supported", claim, evidence) is False
    assert missing_values(claim, evidence) == missing


def test_it_does_not_apply_to_claims_without_values_or_to_other_verdicts():
    assert numeric_guard("supported", "Paris is the capital of France.", "Paris is the capital") is None
    assert numeric_guard("contradicted", "It has 300 floors.", "It has 3 floors.") is None
    assert numeric_guard("unsupported", "It has 300 floors.", "") is None


def test_it_reads_formats_as_the_same_value():
    assert values("1,000 and 1 000 and 1000 and 1000.00") == {"n:1000"}
    assert values("2021-03-05, 5 March 2021, March 5, 2021") == {"d:2021-03-05"}
    assert values("10%, 10 percent") == {"p:10"}
    assert values("version v2 of step") == set()  # a digit inside a word is not a quantity
