"""Benchmarks that print numbers (nothing here asserts a time).

python -m grader.benchmark notebooks          Run All (full, with training) and one autograde per assignment
python -m grader.benchmark grading [-n 20]    n simulated students x all assignments: plain sequential
                                              `nbgrader autograde` against `grade` with parallel workers,
                                              without feedback (the same work) and with it
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbgrader.api import Gradebook

from grader.course import SOLUTIONS, assignments, prepare_environment
from grader.grading import Grader
from grader.samples import fill_answers

MIX = (1.0, 0.5, 0.0)  # solved, partial, blank, in turn


def run_all_seconds(assignment: str) -> float:
    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
    env_before = os.environ.pop("NBGRADER_EXECUTION", None)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(SOLUTIONS / assignment)}}).execute()
    if env_before is not None:
        os.environ["NBGRADER_EXECUTION"] = env_before
    return time.perf_counter() - start


def write_class(root: Path, release: Path, names: list, students: int) -> Path:
    folder = root / "class"
    for assignment in names:
        student_nb = nbformat.read(release / assignment / f"{assignment}.ipynb", as_version=4)
        source_nb = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
        for index in range(students):
            target = folder / f"student{index:02d}" / assignment
            target.mkdir(parents=True)
            nbformat.write(fill_answers(student_nb, source_nb, MIX[index % len(MIX)]), target / f"{assignment}.ipynb")
    return folder


def scores(db_url: str) -> dict:
    with Gradebook(db_url) as gradebook:
        return {(s.student.id, s.assignment.name): s.score for a in gradebook.assignments for s in a.submissions}


def notebooks_benchmark(names):
    print(f"{'assignment':<28}{'Run All (s)':>12}{'autograde 1 student (s)':>26}")
    for assignment in names:
        run_all = run_all_seconds(assignment)
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(Path(tmp) / "workspace", workers=1)
            grader.generate(assignment)
            folder = write_class(Path(tmp), grader.workspace / "release", [assignment], 1)
            grader.take_tree(folder, [assignment])
            start = time.perf_counter()
            result = grader.autograde("student00", assignment)
            autograde = time.perf_counter() - start
        print(f"{assignment:<28}{run_all:>12.1f}{autograde:>26.1f}   score {result.score:g}/{result.max_score:g}", flush=True)


def grading_benchmark(names, students: int, workers: int):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sequential = Grader(root / "sequential", workers=1)
        for assignment in names:
            sequential.generate(assignment)
        folder = write_class(root, sequential.workspace / "release", names, students)
        sequential.take_tree(folder, names)
        # The baseline is stock nbgrader: its own Execute, no sandbox, no trusted verdicts.
        config = sequential.config
        (sequential.workspace / "nbgrader_config.py").write_text("\n".join([
            "c = get_config()",
            f"c.CourseDirectory.root = {str(sequential.workspace)!r}",
            f"c.CourseDirectory.source_directory = {config.CourseDirectory.source_directory!r}",
            f"c.CourseDirectory.release_directory = {config.CourseDirectory.release_directory!r}",
            f"c.CourseDirectory.db_url = {config.CourseDirectory.db_url!r}",
            f"c.Execute.timeout = {config.Execute.timeout!r}",
            "c.IgnorePattern.enabled = True",
            f"c.IgnorePattern.pattern = {config.IgnorePattern.pattern!r}",
            "c.OverwriteCells.add_missing_cells = True", ""]))
        env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
        start = time.perf_counter()
        for assignment in names:
            subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"],
                           cwd=sequential.workspace, env=env, check=True, capture_output=True)
        plain = time.perf_counter() - start

        timings = {}
        for feedback in (False, True):  # first the same work as the baseline, then the whole `grade`
            parallel = Grader(root / f"parallel-feedback-{feedback}", workers=workers)
            start = time.perf_counter()
            parallel.run(folder, names, progress=False, feedback=feedback)
            timings[feedback] = time.perf_counter() - start
            same = scores(sequential.db_url) == scores(parallel.db_url)
            print(f"identical scores ({'with' if feedback else 'without'} feedback): {same}", flush=True)
    notebooks = students * len(names)
    print(f"{students} students x {len(names)} assignments = {notebooks} notebooks, {os.cpu_count()} cores")
    rows = (("plain sequential nbgrader autograde", plain),
            (f"grade (sandboxed), {workers} workers, autograde only", timings[False]),
            (f"grade (sandboxed), {workers} workers, + HTML feedback", timings[True]))
    for label, seconds in rows:
        print(f"{label:<40}{seconds:8.1f} s {students / (seconds / 60):7.2f} students/min"
              f"  {plain / seconds:5.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader.benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["notebooks", "grading"], nargs="?", default="notebooks")
    parser.add_argument("-a", "--assignment", action="append", default=[], help="only these assignments")
    parser.add_argument("-n", "--students", type=int, default=20)
    parser.add_argument("-w", "--workers", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    prepare_environment()
    names = args.assignment or assignments()
    if args.what == "notebooks":
        notebooks_benchmark(names)
    else:
        grading_benchmark(names, args.students, args.workers)


if __name__ == "__main__":
    main()
