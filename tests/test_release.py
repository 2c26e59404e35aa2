"""notebooks/ is exactly what `nbgrader generate_assignment` makes from solutions/."""
import os
import subprocess
import sys

import pytest

from tests.course_files import ASSIGNMENTS, NOTEBOOKS, REPO

pytestmark = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments in solutions/")


def snapshot() -> dict:
    return {p.relative_to(NOTEBOOKS).as_posix(): p.read_bytes() for p in NOTEBOOKS.rglob("*") if p.is_file()}


def test_release_command_leaves_the_student_notebooks_unchanged():
    before = snapshot()
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    run = subprocess.run([sys.executable, "-m", "grader", "release"], cwd=REPO, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [w for a in ASSIGNMENTS for w in ("released", f"notebooks/{a}/")]
    after = snapshot()
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    assert not changed, (
        f"notebooks/ drifted from solutions/: {changed}. Run `make release` and commit the result "
        "(never edit notebooks/ by hand)."
    )
