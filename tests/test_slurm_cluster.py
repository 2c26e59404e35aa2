"""deploy/grading/ on a real Slurm cluster (tests/slurm_cluster.py: munged, slurmctld and slurmd on this machine)
with a throwaway PostgreSQL gradebook, run as docs/deploy.md says: the array of three shards, one task's grader
killed (SIGKILL) in the middle of a notebook, `finish` refusing the incomplete class, that task rerun alone,
`finish`, and the whole array rerun, which grades nothing. Every score, grades.csv and every feedback page equal
one plain `grade` of the class (tests/test_shards.py's class: each notebook sleeps in a cell of its own, so the
process table shows which notebook a grader is in)."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.running.ledger import Ledger, shard_of
from tests import slurm_cluster
from tests.course_files import FIXTURE_SOURCE, REPO
from tests.test_postgres_gradebook import postgres_url  # noqa: F401 (the throwaway server, a fixture)
from tests.test_shards import graded_once  # noqa: F401 (the class and its plain grade, a fixture)
from tests.test_shards import (ASSIGNMENT, SHARDS, STUDENTS, assert_graded_exactly_once, assert_nothing_left, env,
                               reference, sleeping)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(slurm_cluster.problem()), reason=slurm_cluster.problem())]
SCRIPTS = REPO / "deploy" / "grading"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with slurm_cluster.slurm_cluster(tmp_path_factory.mktemp("slurm")) as made:
        yield made
    assert not made.alive(), f"still running after the cluster was stopped: {made.alive()}"


def sbatch(cluster, variables: dict, *arguments) -> str:
    """`sbatch --parsable ARGUMENTS` from the repository, with the operator's exported variables; the job id."""
    submitted = subprocess.run(["sbatch", "--parsable", *arguments], cwd=REPO,
                               env={**env(), **cluster.env, **variables}, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    return submitted.stdout.strip().split(";")[0]


def states(cluster, job: str) -> dict:
    """{array task id (or None): Slurm's state} of `job`."""
    shown = subprocess.run(["scontrol", "-o", "show", "job", job], env=cluster.env, capture_output=True, text=True,
                           timeout=30).stdout
    found = {}
    for line in shown.splitlines():
        task = re.search(r"\bArrayTaskId=(\d+)", line)
        found[int(task.group(1)) if task else None] = re.search(r"\bJobState=(\S+)", line).group(1)
    return found


def wait(cluster, job: str, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = states(cluster, job)
        if found and not any(state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") for state in found.values()):
            return found
        time.sleep(1)
    raise AssertionError(f"job {job} still running after {timeout} s: {states(cluster, job)}")


def grader_of_task(task: int, timeout: float = 120) -> int:
    """The process id of the `grade --shard TASK/N` a task started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if b"grader" in argv and f"{task}/{SHARDS}".encode() in argv and b"--shard" in argv:
                return int(cmdline.parent.name)
        time.sleep(0.2)
    raise AssertionError(f"task {task}'s grader never started")


def test_the_deploy_scripts_on_a_slurm_cluster_equal_one_grade(cluster, graded_once, postgres_url,  # noqa: F811
                                                                tmp_path):
    root, once = graded_once
    scores, grades_csv, pages = reference(once)
    logs, graded = tmp_path / "logs", tmp_path / "graded"
    logs.mkdir()
    # What docs/deploy.md has the operator export, and the resources of this small machine.
    variables = {"GRADER_DB_URL": postgres_url, "SUBMISSIONS": str(root / "class"),
                 "COURSE_SOURCE": str(FIXTURE_SOURCE), "SHARDS": str(SHARDS), "GRADED": str(graded),
                 "PYTHON": sys.executable}
    resources = ["--cpus-per-task=1", "--mem=3G"]
    array = ["--array=0-2", f"--output={logs}/%x-%A_%a.log", *resources]

    job = sbatch(cluster, variables, *array, str(SCRIPTS / "grade-array.sbatch"))
    share = {student for student in STUDENTS if shard_of(student, ASSIGNMENT, SHARDS) == 1}
    victim = grader_of_task(1)
    deadline = time.monotonic() + 240
    while not sleeping(victim) & share:  # in the middle of one of its notebooks
        assert time.monotonic() < deadline, "task 1's grader never reached a notebook's sleeping cell"
        time.sleep(0.05)
    killed = (sleeping(victim) & share).pop()
    os.kill(victim, signal.SIGKILL)
    assert wait(cluster, job) == {0: "COMPLETED", 1: "FAILED", 2: "COMPLETED"}
    assert_nothing_left(share)

    # finish refuses the incomplete class, writes nothing and names the task to rerun
    early = sbatch(cluster, variables, f"--output={logs}/%x-%j.log", *resources, str(SCRIPTS / "finish.sbatch"))
    assert wait(cluster, early) == {None: "FAILED"}
    assert f"rerun shards 1 of {SHARDS}" in (logs / f"grade-attention-finish-{early}.log").read_text()
    assert not graded.exists() or not any(graded.rglob("grades.csv")), "finish wrote a partial grades.csv"

    # the killed task rerun alone, as the docs say (sbatch --array=K): it is still shard 1 of 3
    rerun = sbatch(cluster, variables, "--array=1", f"--output={logs}/%x-%A_%a.log", *resources,
                   str(SCRIPTS / "grade-array.sbatch"))
    assert wait(cluster, rerun) == {1: "COMPLETED"}
    rerun_log = (logs / f"grade-attention-{rerun}_1.log").read_text()
    counted = re.search(rf"shard 1/{SHARDS}: (\d+) submissions graded by this run, (\d+) graded before", rerun_log)
    assert counted and int(counted.group(1)) >= 1 and sum(map(int, counted.groups())) == len(share), rerun_log[-2000:]

    final = sbatch(cluster, variables, f"--dependency=afterany:{rerun}", f"--output={logs}/%x-%j.log", *resources,
                   str(SCRIPTS / "finish.sbatch"))
    assert wait(cluster, final) == {None: "COMPLETED"}, (logs / f"grade-attention-finish-{final}.log").read_text()
    assert (graded / "grades.csv").read_bytes() == grades_csv
    for student in STUDENTS:
        page = graded / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        assert page.read_bytes() == pages[student], f"{student}: feedback differs from the plain grade"
    for (student, assignment), row in Ledger(postgres_url).rows().items():
        assert row.score == scores[student, assignment], student

    # the whole array again: every task grades nothing, and says so
    again = sbatch(cluster, variables, *array, str(SCRIPTS / "grade-array.sbatch"))
    assert wait(cluster, again) == {0: "COMPLETED", 1: "COMPLETED", 2: "COMPLETED"}
    for task in range(SHARDS):
        log = (logs / f"grade-attention-{again}_{task}.log").read_text()
        assert f"shard {task}/{SHARDS}: 0 submissions graded by this run" in log, log[-2000:]
    assert_graded_exactly_once(postgres_url, [killed])
    for each in (job, rerun, again):
        assert not list(Path("/tmp").glob(f"grade-attention-{each}-*")), "a task's workspace stayed"
