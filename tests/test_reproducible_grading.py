"""The same class graded twice gives the same files, byte for byte: every autograded notebook, feedback page,
grades.csv and class report (its grading times, the clock's, go to report_times.csv beside it). Real notebooks:
02 and 04 (04 times a sequential loop against a matrix product outside grading runs), each solved, half
solved and untouched. What the clock decides is left out of a graded run: nbclient's timing metadata, the
split of printed output into messages (joined per stream), and every time a notebook prints
(attention_course.runtime.seconds_since)."""
from pathlib import Path

import pytest

from grader.outputs.class_report import write_report
from grader.course import NOTEBOOKS, SOLUTIONS
from grader.running.grading import Grader
from grader.authoring.samples import write_samples

pytestmark = pytest.mark.slow
ASSIGNMENTS = ["02_three_stage_attention", "04_self_attention"]
CLOCK_FILES = {"report_times.csv"}


def graded_files(workspace: Path) -> dict:
    kept = {}
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace)
        if path.is_file() and path.name not in CLOCK_FILES and (
                relative.parts[0] in ("autograded", "feedback") or path.name == "grades.csv"
                or path.name.startswith("report")):
            kept[str(relative)] = path.read_bytes()
    return kept


def test_a_class_graded_twice_gives_the_same_files_byte_for_byte(tmp_path):
    write_samples(NOTEBOOKS, SOLUTIONS, ASSIGNMENTS, tmp_path / "class",
                  {"solved": 1.0, "half": 0.5, "untouched": 0.0})
    runs = []
    for name in ("first", "second"):
        grader = Grader(tmp_path / name, workers=2)
        results = grader.run(tmp_path / "class", progress=False)
        assert len(results) == 6 and not any(result.error for result in results)
        write_report(grader.workspace, results, grader.source)
        runs.append(graded_files(grader.workspace))
    first, second = runs
    assert len([name for name in first if name.endswith(".html") and name.startswith("feedback")]) == 6
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"graded twice, these differ: {differing}"
    page = first["feedback/solved/04_self_attention/04_self_attention.html"].decode()
    assert "not timed in a grading run" in page, "the notebook's clock readings are left out, and it says so"
