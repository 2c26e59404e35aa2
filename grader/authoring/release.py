"""Regenerate the student notebooks in notebooks/ from solutions/ with `nbgrader generate_assignment`, and
where stale, what ships with them about the named mistakes: the digests their visible tests recognise
(grader/feedback/visible_mistakes.py) and the fingerprints the feedback names them by (grader/feedback/mistakes.py)."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.feedback import mistakes, visible_mistakes
from grader.course import GRADER_DIR, REPO, CourseError, check_assignments, prepare_environment, source_notebook


def release(names=(), into=None) -> list:
    """Run nbgrader generate_assignment for each named assignment (all when none); return them.

    into: a folder to release to (with its own gradebook) instead of notebooks/, to compare without
    touching the course."""
    prepare_environment()
    chosen = check_assignments(names)
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(GRADER_DIR))  # the course config, as from the Makefile
    elsewhere = [] if into is None else [f"--CourseDirectory.release_directory={into}",
                                         f"--CourseDirectory.db_url=sqlite:///{into}/gradebook.db"]
    for assignment in chosen:
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force",
                              *elsewhere], cwd=REPO, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            raise CourseError(f"nbgrader generate_assignment {assignment} failed:\n{run.stderr[-3000:]}")
    if into is None:  # the course's own release: what it ships about the named mistakes, where stale
        visible_mistakes.refresh(chosen)
        name_mistakes(chosen)
    return chosen


def name_mistakes(assignments, workers=None, log=print) -> list:
    """Fingerprint the named mistakes of `assignments` that course/named_mistakes does not hold for their notebook
    as it is (grader/feedback/mistakes.py), in a gradebook of their own; return the assignments that had any missing."""
    from grader.running.grading import Grader

    stale = [assignment for assignment in assignments
             if mistakes.Catalogue(assignment, source_notebook(assignment)).missing()]
    if stale:
        log(f"Named mistakes of {', '.join(stale)}: grading each in the sandbox for the feedback ...")
        with tempfile.TemporaryDirectory() as workspace:  # only its gradebook is used: the test cells
            grader = Grader(Path(workspace), workers=workers)
            for assignment in stale:
                grader.generate(assignment)
            grader.name_all_mistakes(stale)
    return stale
