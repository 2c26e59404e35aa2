"""notebooks/ is exactly what `nbgrader generate_assignment` makes from solutions/."""
import subprocess
import sys

import pytest

from grader.authoring.release import release
from tests.course_files import ASSIGNMENTS, NOTEBOOKS, REPO

pytestmark = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments in solutions/")


def files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and p.name != "gradebook.db"}


def test_student_notebooks_are_what_nbgrader_makes_from_the_solutions(tmp_path):
    release(into=tmp_path)  # nbgrader's own generate_assignment, into a temporary folder
    made, committed = files(tmp_path), files(NOTEBOOKS)
    changed = sorted(name for name in set(made) | set(committed) if made.get(name) != committed.get(name))
    assert not changed, (
        f"notebooks/ drifted from solutions/: {changed}. Run `make release` and commit the result "
        "(never edit notebooks/ by hand)."
    )


def test_release_command_names_what_it_released():
    run = subprocess.run([sys.executable, "-m", "grader", "release", ASSIGNMENTS[0]], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["released", f"notebooks/{ASSIGNMENTS[0]}/"]
