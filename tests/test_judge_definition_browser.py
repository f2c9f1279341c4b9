"""In Chromium: a version's diff against the previous wording reads one line per line (no blank line between
lines, added and removed lines coloured across the width)."""

import pytest

from audit.judge.definitions import current_version, definition_save, definitions_seed
from tests.factories import make_user


@pytest.mark.browser
def test_it_shows_the_diff_single_spaced(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    answer = definitions_seed()[1]
    first = current_version(answer)
    text = first.spec["rubric_system"].replace("- summary\n", "- a summary of the context\n- a list of its steps\n")
    data = {"rubric_system": text, "model": first.model, "effort": first.effort}
    version, _, minted = definition_save(answer, data, lead, confirm=True)
    assert minted
    login(page, lead)
    page.goto(f"{live_server.url}/judge/versions/{version.pk}/")
    lines = page.locator("#diff pre.diff span")
    boxes = [lines.nth(i).bounding_box() for i in range(lines.count())]
    assert len(boxes) >= 6  # the two file headers, the hunk header, context, one removed and two added lines
    height = boxes[0]["height"]
    for above, below in zip(boxes, boxes[1:], strict=False):
        assert below["y"] == pytest.approx(above["y"] + height, abs=1)  # the next line right below: no blank line
        assert below["height"] == pytest.approx(height, abs=1)
    pre = page.locator("#diff pre.diff").bounding_box()
    assert pre["height"] < height * (len(boxes) + 2)  # the block holds the lines and its padding, nothing more
    added = page.locator("#diff pre.diff span.add", has_text="a list of its steps")
    assert added.bounding_box()["width"] > page.locator("#diff pre.diff").bounding_box()["width"] * 0.9
    assert "+- a list of its steps" in page.locator("#diff").inner_text().splitlines()
