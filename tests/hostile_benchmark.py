"""A hostile class against an honest one (python -m tests.hostile_benchmark [-n 30]), a benchmark that prints
numbers: n students of the fixture assignment each, the hostile ones taking tests/hostile_submissions.py's
tricks in turn, the honest ones solved, half-solved and blank in turn; the grader's own CPU time and peak
memory (its process and its workers; the sandboxed kernels are the students'). It lives with the cases it
grades; it records its numbers in results/benchmark-hostile.json, which docs/benchmarks.md shows.
"""
import argparse
import os
import tempfile
import time
from pathlib import Path

import nbformat

from course_build import results
from course_build.benchmark import GraderCost
from grader.course import prepare_environment
from grader.running.grading import Grader
from grader.authoring.samples import fill_answers
from tests import hostile_submissions as cases
from tests.course_files import FIXTURE_SOURCE


def hostile_benchmark(students: int):
    tricks = [builder for name, (builder, _, _) in cases.EXPECTED.items() if name.startswith("trick_")]
    honest = [cases.case_solved, cases.case_blank,
              lambda folder, student, source: cases.write(folder, fill_answers(student, source, 0.5))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for label, builders in (("honest", honest), ("hostile", tricks)):
            grader = Grader(root / label, source=FIXTURE_SOURCE, cell_seconds=5, notebook_seconds=30)
            grader.generate(cases.ASSIGNMENT)
            released = nbformat.read(grader.workspace / "release" / cases.ASSIGNMENT / cases.NOTEBOOK, as_version=4)
            source = nbformat.read(FIXTURE_SOURCE / cases.ASSIGNMENT / cases.NOTEBOOK, as_version=4)
            for index in range(students):
                builders[index % len(builders)](root / f"{label}-class" / f"s{index:03d}" / cases.ASSIGNMENT,
                                                released, source)
            start = time.perf_counter()
            with GraderCost() as cost:
                grader.run(root / f"{label}-class", progress=False)
            cpu, peak = cost.summary()
            rows.append((label, time.perf_counter() - start, cpu, peak))
            print(f"{label}: {rows[-1][1]:.1f} s, grader CPU {cpu:.1f} s, largest grader process {peak:.0f} MB",
                  flush=True)
    print(f"{students} students each, fixture assignment, {os.cpu_count()} cores, cell timeout 5 s, budget 30 s "
          "per notebook")
    print(f"{'class':<10}{'wall s':>9}{'grader CPU s':>14}{'peak MB':>9}")
    for label, wall, cpu, peak in rows:
        print(f"{label:<10}{wall:>9.1f}{cpu:>14.1f}{peak:>9.0f}")
    (_, _, honest_cpu, honest_peak), (_, _, hostile_cpu, hostile_peak) = rows
    print(f"hostile / honest: grader CPU {hostile_cpu / honest_cpu:.2f}x, peak memory {hostile_peak / honest_peak:.2f}x")
    path = results.record("benchmark-hostile", f"{students} students a class, the fixture assignment, cell timeout 5 s, "
                          "budget 30 s a notebook", ["class", "wall time (s)", "grader CPU (s)",
                                                     "largest grader process (MB)"],
                          [[label, round(wall, 1), round(cpu, 1), round(peak)] for label, wall, cpu, peak in rows],
                          students=students, cpu_ratio=round(hostile_cpu / honest_cpu, 2),
                          memory_ratio=round(hostile_peak / honest_peak, 2))
    print(f"recorded in {path.relative_to(results.REPO_ROOT)}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.hostile_benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--students", type=int, default=30, help="students in each class (default: 30)")
    args = parser.parse_args(argv)
    prepare_environment()
    hostile_benchmark(args.students)


if __name__ == "__main__":
    main()
