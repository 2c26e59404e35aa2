"""A simulated class of notebook 02 whose students make named mistakes, handed in as Canvas zip downloads.

Shared by tests/test_feedback_report.py and the browser test of the feedback and the class report.
"""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat

from grader.authoring.assignment_answers import answers
from grader.course import nbgrader_meta
from grader.authoring.samples import fill_answers
from tests.course_files import REPO, source_notebook, student_notebook

ASSIGNMENT = "02_three_stage_attention"
WRONG = answers(ASSIGNMENT).WRONG
# A shape error raised inside the student's own function: the feedback shows their line, not the grader's.
CRASHING_DOT_SCORE = "def dot_score(Q, K):\n    scores = Q @ K.transpose(0, 2, 1)\n    return scores\n"
# student -> (Canvas user id, {exercise: (named mistake or None, code)})
CLASS = {
    "alice": ("1001", {}),
    "bob": ("1002", {"attention": ("softmax_over_queries", WRONG["attention"]["softmax_over_queries"])}),
    "carol": ("1003", {"scaled_dot_score": ("divide_by_d_k_not_its_root",
                                            WRONG["scaled_dot_score"]["divide_by_d_k_not_its_root"])}),
    "dave": ("1004", {"scaled_dot_score": ("divide_by_d_k_not_its_root",
                                           WRONG["scaled_dot_score"]["divide_by_d_k_not_its_root"])}),
    "erin": ("1005", {"dot_score": (None, CRASHING_DOT_SCORE)}),
    "frank": ("1006", {"scaled_dot_score": ("d_k_from_axis_1", WRONG["scaled_dot_score"]["d_k_from_axis_1"])}),
}
# What the feedback and the report call each student's mistake. d_k from axis 1 and d_k from len(Q[0]) give
# the same results on every test of scaled_dot_score, so they are named together.
LOOKS_LIKE = {"bob": ("attention", "softmax over queries"),
              "carol": ("scaled_dot_score", "divide by d_k not its root"),
              "dave": ("scaled_dot_score", "divide by d_k not its root"),
              "frank": ("scaled_dot_score", "d_k from axis 1 or d_k from len of first item")}


def class_notebook(answers: dict):
    """The released notebook, solved, with the given answers in place of the notebook's own."""
    notebook = fill_answers(student_notebook(ASSIGNMENT), source_notebook(ASSIGNMENT))
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and meta["grade_id"] in answers:
            cell.source = answers[meta["grade_id"]][1].strip("\n")
    return notebook


def write_zips(folder: Path) -> Path:
    """One Canvas-style zip download of the class: <student>_<user id>_<file id>_<notebook>.ipynb."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "submissions.zip", "w") as archive:
        for number, (student, (user_id, answers)) in enumerate(sorted(CLASS.items())):
            archive.writestr(f"{student}_{user_id}_{3000 + number}_{ASSIGNMENT}.ipynb",
                             nbformat.writes(class_notebook(answers)))
    return folder


def grade_class(root: Path) -> tuple:
    """(the workspace, what `grade` printed) after `python -m grader grade` graded the class from its zips,
    with both LMS exports."""
    workspace = root / "workspace"
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(write_zips(root / "downloads")),
                          "--assignment", ASSIGNMENT, "--workspace", str(workspace), "--no-progress",
                          "--export", "canvas", "--export", "moodle"],
                         cwd=REPO, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return workspace, run.stdout
