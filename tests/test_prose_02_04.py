"""Notebooks 02 and 04: what the prose states matches the notebook (counts, points, sources).

Headings, the grading flag, the setup cell and the Run All time are checked course-wide in
tests/test_notebook_structure.py.

Numbers the code measures (run times, thresholds, training steps) are printed by the cell next to the
sentence that states them; the counts below are facts of the notebook itself, checked here.
"""
import re

import pytest

from tests.course_files import HEADING, nbgrader_meta, source_notebook

ASSIGNMENTS = ["02_three_stage_attention", "04_self_attention"]
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def number(text):
    return int(text) if text.isdigit() else NUMBER_WORDS[text.lower()]


def markdown(assignment):
    return [c.source for c in source_notebook(assignment).cells if c.cell_type == "markdown"]


def exercises_and_points(assignment):
    cells = source_notebook(assignment).cells
    answers = [nbgrader_meta(c)["grade_id"] for c in cells if nbgrader_meta(c).get("solution")]
    points = sum(nbgrader_meta(c).get("points", 0) for c in cells if nbgrader_meta(c).get("grade"))
    return answers, points


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_intro_states_the_number_of_exercises_and_points(assignment):
    intro = markdown(assignment)[0]
    answers, points = exercises_and_points(assignment)
    counts = re.findall(r"\b(\w+) (?:exercises|graded functions|small NumPy functions)\b", intro)
    stated_points = re.findall(r"\b(\d+) points\b", intro)
    assert counts and stated_points, f"{assignment}: the introduction states no exercise count or points"
    for count in counts:
        assert number(count) == len(answers), f"{assignment}: the introduction says {count}, there are {len(answers)}"
    for stated in stated_points:
        assert float(stated) == points, f"{assignment}: the introduction says {stated} points, the tests give {points:g}"
    for name in answers:
        assert f"`{name}`" in intro, f"{assignment}: the introduction does not name the graded function {name}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_headings_state_points(assignment):
    text = "\n".join(markdown(assignment))
    answers, _ = exercises_and_points(assignment)
    assert len(HEADING.findall(text)) == len(answers)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_sources_are_cited_and_no_working_notes_named(assignment):
    text = "\n".join(markdown(assignment))
    for banned in (r"\bseed 00\d", r"\bseeds?\b(?! of)", r"\bthe survey\b", r"\bthe article\b", r"\bself attention\b"):
        assert not re.search(banned, text, re.I), f"{assignment}: the prose says {banned!r}"
    assert "Zhang Junlin" in text and "深度学习中的注意力模型" in text and "2017" in text
    assert "Vaswani et al." in text
    first = next(i for i, t in enumerate(markdown(assignment)) if re.search(r"self-attention", t, re.I))
    assert re.search(r"same sequence", markdown(assignment)[first]), (
        f"{assignment}: self-attention is not glossed (queries, keys and values from the same sequence) where it first appears")
