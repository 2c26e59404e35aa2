"""The fingerprints of the named mistakes ship with the course (course/named_mistakes, grader/feedback/mistakes.py), made by
`python -m grader release`: current for every assignment's notebook and catalogue, so that no grading waits for
them, and hashes only."""
import json
import re

import nbformat
import pytest

from grader.feedback import mistakes
from grader.course import named_mistakes_dir, source_notebook
from tests.course_files import ASSIGNMENTS

HASH = re.compile(r"[0-9a-f]{64}")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_shipped_fingerprints_are_current(assignment):
    missing = mistakes.Catalogue(assignment, source_notebook(assignment)).missing()
    assert not missing, (f"{assignment}: {sum(map(len, missing.values()))} named mistakes have no fingerprint for the "
                         f"notebook and catalogue as they are; run python -m grader release {assignment}")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_shipped_fingerprints_hold_only_hashes_and_names(assignment):
    stored = json.loads((named_mistakes_dir() / f"{assignment}.json").read_text())
    assert set(stored) == {"notebook", "fingerprints", "names"} and HASH.fullmatch(stored["notebook"])
    assert stored["fingerprints"] and all(HASH.fullmatch(key) and (value == "" or HASH.fullmatch(value))
                                          for key, value in stored["fingerprints"].items())
    wrong = mistakes.catalogue(assignment)
    assert {exercise: set(names) for exercise, names in stored["names"].items()} == \
        {exercise: set(names) for exercise, names in wrong.items()}, \
        f"{assignment}: the names differ from course/{assignment}/answers.py; run python -m grader mistakes {assignment}"
    assert all(key in stored["fingerprints"] for names in stored["names"].values() for key in names.values())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_without_the_answers_the_file_alone_names_the_same_mistakes(assignment, monkeypatch):
    """The course image ships course/named_mistakes but not answers.py (it holds correct answers): every
    fingerprint names the same mistakes from the file alone."""
    notebook = source_notebook(assignment)
    full = mistakes.Catalogue(assignment, notebook)
    monkeypatch.setattr(mistakes, "catalogue", lambda _assignment: {})
    alone = mistakes.Catalogue(assignment, notebook)
    assert alone.mistakes == {} and alone.missing() == {}
    prints = {(exercise, full.known[key]) for exercise, names in full.keys.items() for key in names.values()
              if full.known[key]}
    assert prints and all(alone.names_for(*pair) == full.names_for(*pair) != [] for pair in prints)


def test_a_stale_catalogue_is_found_stale(tmp_path):
    """An edited notebook makes every fingerprint of its assignment missing (they are keyed by the notebook)."""
    notebook = source_notebook(ASSIGNMENTS[0])
    notebook.cells[-1].source += "\n"
    (tmp_path / f"{ASSIGNMENTS[0]}.json").write_text((named_mistakes_dir() / f"{ASSIGNMENTS[0]}.json").read_text())
    catalogue = mistakes.Catalogue(ASSIGNMENTS[0], notebook, tmp_path)
    assert sum(map(len, catalogue.missing().values())) == sum(map(len, mistakes.catalogue(ASSIGNMENTS[0]).values()))


def test_without_the_answers_a_stale_file_names_nothing_and_the_grader_says_how_to_rebuild_it(tmp_path, monkeypatch):
    from traitlets.config import Config

    from grader.feedback.feedback_summary import FeedbackSummary, named_mistakes

    assignment = ASSIGNMENTS[0]
    (tmp_path / "source" / assignment).mkdir(parents=True)
    notebook = source_notebook(assignment)
    notebook.cells[-1].source += "\n"  # the instructor edited the notebook after the release
    nbformat.write(notebook, tmp_path / "source" / assignment / f"{assignment}.ipynb")
    (tmp_path / "shipped").mkdir()
    (tmp_path / "shipped" / f"{assignment}.json").write_text((named_mistakes_dir() / f"{assignment}.json").read_text())
    monkeypatch.setattr(mistakes, "catalogue", lambda _assignment: {})
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.CourseDirectory.source_directory = "source"
    config.FeedbackSummary.mistakes_dir = str(tmp_path / "shipped")
    assert FeedbackSummary(config=config).mistakes_dir == str(tmp_path / "shipped")
    said = []
    found = named_mistakes(config, assignment, f"sqlite:///{tmp_path / 'gradebook.db'}", log=said.append)
    assert found.keys == {} and not found.current
    assert len(said) == 1 and f"python -m grader mistakes {assignment}" in said[0], said
