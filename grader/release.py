"""Regenerate the student notebooks in notebooks/ from solutions/ with `nbgrader generate_assignment`, and
the digests of the named mistakes their visible tests recognise (grader/visible_mistakes.py) where stale."""
import os
import subprocess
import sys

from grader import visible_mistakes
from grader.course import GRADER_DIR, REPO, CourseError, check_assignments, prepare_environment


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
    if into is None:  # the course's own release: the named mistakes its visible tests recognise, where stale
        visible_mistakes.refresh(chosen)
    return chosen
