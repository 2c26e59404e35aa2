"""A course on nbgrader's real exchange whose students are Unix users running nbgrader themselves (runuser):
the on-submit service's tests (tests/test_on_submit.py) and its latency benchmark
(tests/on_submit_benchmark.py) share it. Needs root."""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from classroom.layout import ensure_user, let_users_run_python
from grader.running.grading import Grader
from grader.running.on_submit import OnSubmit, SubmitPolicy


@contextmanager
def shared_folder(prefix: str):
    """A folder under /tmp the students' users may cross (pytest's tmp_path is root's alone); removed after."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def user_ids(user: str) -> tuple:
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


class ExchangeCourse:
    """A course workspace (the on-submit service's), an exchange and the students' homes, in `root`, with
    `assignment` of `source` released; students are Unix users made on demand."""

    def __init__(self, root: Path, source: Path, assignment: str, workers: int = 1, **policy):
        self.root, self.source, self.assignment = root, source, assignment
        self.exchange = root / "exchange"
        self.exchange.mkdir()
        self.exchange.chmod(0o1777)
        root.chmod(0o755)
        let_users_run_python()
        self.grader = Grader(root / "service", source=source, workers=workers, exchange=self.exchange)
        self.grader.generate(assignment)
        run = self.nbgrader(["release_assignment", assignment, "--force"], self.grader.workspace)
        assert run.returncode == 0, run.stderr[-2000:]
        self.policy = SubmitPolicy(config=self.grader.config, **policy)

    def service(self, **kwargs) -> OnSubmit:
        return OnSubmit(self.grader, self.exchange, self.policy, log=lambda message: None, **kwargs)

    def nbgrader(self, args, cwd, user=None):
        flags = [f"--Exchange.root={self.exchange}", "--CourseDirectory.course_id=attention"]
        command = [sys.executable, "-m", "nbgrader", *args, *flags]
        env = dict(os.environ)
        if user:
            command = ["runuser", "-u", user, "--", "env", f"HOME={cwd}", f"JUPYTER_CONFIG_PATH={cwd}", *command]
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)

    def home(self, user: str):
        home = self.root / "homes" / user
        home.parent.mkdir(exist_ok=True)
        home.parent.chmod(0o755)
        ensure_user(user, home)
        return home

    def submit(self, user: str, answer) -> str:
        """`user` fetches the assignment (once), writes `answer(released, source)` and submits; returns the
        inbound folder's name."""
        home = self.home(user)
        a = self.assignment
        if not (home / a).exists():
            run = self.nbgrader(["fetch_assignment", a], home, user)
            assert run.returncode == 0, run.stderr[-2000:]
        released = nbformat.read(home / a / f"{a}.ipynb", as_version=4)
        source = nbformat.read(self.source / a / f"{a}.ipynb", as_version=4)
        path = home / a / f"{a}.ipynb"
        nbformat.write(answer(released, source), path)
        shutil.chown(path, user, user)
        inbound = self.exchange / "attention" / "inbound"
        before = set(os.listdir(inbound))
        run = self.nbgrader(["submit", a], home, user)
        assert run.returncode == 0, run.stderr[-2000:]
        [folder] = [name for name in set(os.listdir(inbound)) - before if name.startswith(f"{user}+")]
        return folder

    def fetch_feedback(self, user: str) -> list:
        """The feedback pages `user`'s own `nbgrader fetch_feedback` brings, newest attempt last."""
        home = self.root / "homes" / user
        a = self.assignment
        run = self.nbgrader(["fetch_feedback", a], home, user)
        assert run.returncode == 0, run.stderr[-2000:]
        return [path.read_text() for path in sorted((home / a / "feedback").glob(f"*/{a}.html"))]

    def gradebook_score(self, student: str) -> float:
        with Gradebook(self.grader.db_url) as gradebook:
            return gradebook.find_submission(self.assignment, student).score

    def set_deadline(self, when):
        with Gradebook(self.grader.db_url) as gradebook:
            gradebook.update_or_create_assignment(self.assignment, duedate=when)


