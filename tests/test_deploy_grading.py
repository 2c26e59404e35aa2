"""deploy/grading/: the Kubernetes Indexed Job and the Slurm job array that grade a class in shards.

The manifests are checked against the Kubernetes API schema (kubernetes-validate, strict: no unknown field)
and for what grading needs of them; the Slurm scripts are run with Slurm's variables set and a Python that
prints its arguments. Neither ran on a cluster here (docs/deploy.md says what was and was not run).
"""
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.course_files import REPO

GRADING = REPO / "deploy" / "grading"
KUBERNETES = "1.37.0"  # the schemas kubernetes-validate bundles; the API fields used are GA since 1.33


def manifests() -> dict:
    return {path.name: yaml.safe_load(path.read_text()) for path in sorted(GRADING.glob("*.yaml"))}


@pytest.mark.parametrize("name", sorted(p.name for p in GRADING.glob("*.yaml")))
def test_manifest_is_valid_against_the_kubernetes_schema(name):
    kubernetes_validate.validate(manifests()[name], KUBERNETES, strict=True)


def container(job: dict) -> dict:
    (only,) = job["spec"]["template"]["spec"]["containers"]
    return only


def test_the_shards_are_an_indexed_job_reading_the_gradebook_from_a_secret():
    jobs = manifests()
    shards, finish = jobs["grade-job.yaml"], jobs["finish-job.yaml"]
    spec = shards["spec"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] <= spec["completions"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never" and spec["backoffLimitPerIndex"] >= 1
    command = container(shards)["command"]
    assert command[command.index("--shard") + 1] == f"$(JOB_COMPLETION_INDEX)/{spec['completions']}"
    assert "--finish" in container(finish)["command"] and "--shard" not in container(finish)["command"]
    image = re.search(r"registry\.example\.org/attention-course", (REPO / "docs" / "deploy.md").read_text())
    for job in (shards, finish):
        assert container(job)["image"].startswith(image.group(0) + ":")  # the course image of docs/deploy.md
        assert not any("postgresql" in part for part in container(job)["command"]), "the URL belongs in a Secret"
        (variable,) = [v for v in container(job)["env"] if v["name"] == "GRADER_DB_URL"]
        assert variable["valueFrom"]["secretKeyRef"] == {"name": "attention-gradebook", "key": "url"}
        # The same submissions and source notebooks for the shards and the final step.
        assert container(job)["command"][6:10] == container(shards)["command"][6:10]


def run_sbatch(script: str, tmp_path: Path, **variables) -> subprocess.CompletedProcess:
    """The script as Slurm would run it, with a Python that prints the arguments it was given."""
    python = tmp_path / "python"
    python.write_text(f"#!{sys.executable}\nimport sys\nprint(' '.join(sys.argv[1:]))\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": os.environ["PATH"], "PYTHON": str(python), "COURSE_REPO": str(REPO), "TMPDIR": str(tmp_path),
           **variables}
    return subprocess.run(["bash", str(GRADING / script)], env=env, capture_output=True, text=True)


def test_the_slurm_array_grades_the_share_of_its_task(tmp_path):
    common = {"GRADER_DB_URL": "postgresql+psycopg://grader@db/attention", "SUBMISSIONS": "/shared/submitted",
              "COURSE_SOURCE": "/shared/source"}
    run = run_sbatch("grade-array.sbatch", tmp_path, SLURM_ARRAY_TASK_ID="3", SLURM_ARRAY_TASK_COUNT="8",
                     SLURM_ARRAY_JOB_ID="77", SLURM_CPUS_PER_TASK="2", **common)
    assert run.returncode == 0, run.stderr
    started, command = run.stdout.splitlines()
    assert started.startswith("task 3 of job 77 (restart 0) on ")
    arguments = command.split()
    assert arguments[:4] == ["-m", "grader", "grade", "/shared/submitted"]
    assert arguments[arguments.index("--shard") + 1] == "3/8"
    assert "postgresql" not in run.stdout, "the URL reaches grade through the environment only"
    assert not list(tmp_path.glob("grade-attention-*")), "the task's workspace is removed when it ends"
    script = (GRADING / "grade-array.sbatch").read_text()
    array = re.search(r"^#SBATCH --array=0-(\d+)$", script, re.M)
    assert array, "the job array's tasks are numbered from 0, like --shard"
    assert re.search(r"\$\{SHARDS:-(\d+)\}", script)[1] == str(int(array[1]) + 1), "SHARDS's default is the array's"
    assert "#SBATCH --open-mode=append" in script, "a requeued task keeps its first attempt's log"
    # Rerun alone (sbatch --array=2: Slurm counts one task) it is still shard 2 of the class's 8; 16 with SHARDS.
    for variables, shard in (({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "1"}, "2/8"),
                             ({"SLURM_ARRAY_TASK_ID": "3", "SHARDS": "16"}, "3/16")):
        alone = run_sbatch("grade-array.sbatch", tmp_path, SLURM_ARRAY_JOB_ID="78", **variables, **common)
        arguments = alone.stdout.splitlines()[-1].split()
        assert arguments[arguments.index("--shard") + 1] == shard, alone.stderr
    finish = run_sbatch("finish.sbatch", tmp_path, **common)
    assert finish.returncode == 0 and "--finish" in finish.stdout.split(), finish.stderr
    missing = run_sbatch("grade-array.sbatch", tmp_path, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="8",
                         SUBMISSIONS="/s", COURSE_SOURCE="/c")
    assert missing.returncode != 0 and "GRADER_DB_URL" in missing.stderr
