"""Named mistakes in the student's own kernel: the digests that ship are fresh, and a failure is named by its
digest alone (tests/test_mutants.py checks every named mistake of every notebook against its visible test)."""
import json

import pytest

from attention_course import dependencies
from grader.feedback import visible_mistakes
from grader.feedback.mistakes import catalogue, describe
from tests.course_files import ASSIGNMENTS


def test_the_shipped_digests_were_made_from_the_notebooks_and_catalogues_as_they_are():
    assert visible_mistakes.stale(ASSIGNMENTS) == [], (
        "run python -m grader release (or python -m grader.feedback.visible_mistakes NN_topic) after changing a notebook "
        "or course/<assignment>/answers.py")


def test_the_shipped_digests_name_mistakes_and_hold_no_code():
    table = json.loads(visible_mistakes.DIGESTS.read_text())
    assert set(table["digests"]) == set(ASSIGNMENTS)
    for assignment, digests in table["digests"].items():
        assert digests, f"{assignment}: no named mistake fails a visible test"
        named = {describe(name) for answers in catalogue(assignment).values() for name in answers}
        for digest, names in digests.items():
            assert len(digest) == 24 and set(names) <= named, (assignment, digest, names)


@pytest.fixture
def digests(tmp_path, monkeypatch):
    """A digest file of its own, read afresh."""
    path = tmp_path / "mistake_digests.json"
    monkeypatch.setattr(dependencies, "MISTAKE_DIGESTS", path)
    monkeypatch.setattr(dependencies, "_digests", None)

    def write(table):
        path.write_text(json.dumps({"sources": {}, "digests": {"00_fixture": table}}))
        monkeypatch.setattr(dependencies, "_digests", None)
    return write


def test_a_failure_is_named_by_the_mistakes_with_its_digest(digests):
    failure = AssertionError("softmax: expected rows summing to 1, got columns summing to 1")
    digests({dependencies.failure_digest("softmax", failure): ["softmax over queries", "axis 0"]})
    assert dependencies.mistake_note("softmax", failure) == "This looks like: softmax over queries or axis 0."
    assert dependencies.mistake_note("attention", failure) == "", "the digest belongs to one exercise"
    assert dependencies.mistake_note("softmax", AssertionError("another message")) == ""
    assert dependencies.mistake_note("softmax", ValueError(str(failure))) == "", "the type counts"


def test_what_differs_between_runs_does_not_change_the_digest():
    here = AssertionError(f"f(x) raised TypeError: <object at 0x7f3a>.\n{dependencies.RAISED_IN}\n  File a.py")
    there = AssertionError(f"f(x) raised TypeError: <object at 0x55b1>.\n{dependencies.RAISED_IN}\n  File b.py")
    assert dependencies.failure_digest("f", here) == dependencies.failure_digest("f", there)


def test_no_digest_file_names_nothing(digests, tmp_path, monkeypatch):
    monkeypatch.setattr(dependencies, "MISTAKE_DIGESTS", tmp_path / "missing.json")
    assert dependencies.mistake_note("softmax", AssertionError("x")) == ""


def test_a_check_of_random_weights_is_named_by_its_message_without_numbers(digests):
    """A model built with random weights fails the same check with other numbers each run (and NumPy pads them to
    other widths): the number-free digest still names the mistake; another check's failure names nothing."""
    built = AssertionError("probabilities sum to 1: expected [[1. 1.]], got [[0.0021 0.0056 0.0097 0.0138]]")
    rebuilt = AssertionError("probabilities sum to 1: expected [[1. 1.]], got [[0.0064 0.0113 0.015  0.0179]]")
    digests({dependencies.failure_digest("build", built): ["no softmax"],
             dependencies.failure_digest("build", built, exact=False): ["no softmax"]})
    assert dependencies.mistake_note("build", rebuilt) == "This looks like: no softmax."
    # NumPy's padding also puts a space before a closing bracket, in one run and not the next.
    assert dependencies.mistake_note("build", AssertionError(
        "probabilities sum to 1: expected [[1. 1.]], got [[0.0513 0.0487 0.05   0.049 ]]")) == "This looks like: no softmax."
    assert dependencies.mistake_note("build", AssertionError("parameters: expected 10, got 12")) == ""
