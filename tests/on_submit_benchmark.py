"""Feedback on submit, timed (python -m tests.on_submit_benchmark [-n 5] [-a ASSIGNMENT ...]; as root): for
each notebook, a class of n students (Unix users running `nbgrader submit` themselves) submits solved
notebooks at the same moment through nbgrader's exchange; the on-submit service (grader/running/on_submit.py, one
grader process per core, started before the class submits, as the hub starts it) grades them and releases
each page. Printed per notebook: the queue (its length when the class has submitted) and each student's
wait from their `nbgrader submit` returning to their page being in the exchange (what "Fetch Feedback"
brings). A run of every notebook at each class size records its table in results/benchmark-on-submit.json, which
docs/classroom.md ("Feedback on submit") shows.
"""
import argparse
import os
import statistics
import threading
import time

from course_build import results
from grader.course import SOLUTIONS, check_assignments, prepare_environment
from grader.running.on_submit import ATTEMPTS
from grader.authoring.samples import fill_answers
from tests.exchange_class import ExchangeCourse, shared_folder

NOTEBOOKS = ["02_three_stage_attention", "03_date_translation", "04_self_attention", "05_attention_in_models",
             "06_transformer", "07_attention_applications"]


def solved(released, source):
    return fill_answers(released, source, 1.0)


def time_notebook(assignment: str, students: int) -> dict:
    with shared_folder("on-submit-bench-") as root:
        course = ExchangeCourse(root, SOLUTIONS, assignment, workers=os.cpu_count(), before_deadline="full")
        service = course.service()
        service.poll()  # the named mistakes' catalogue is ready before the class, as in the classroom
        users = [f"obench{i:02d}" for i in range(students)]
        for user in users:
            course.home(user)
        submitted, threads = {}, []

        def submit(user):
            submitted[course.submit(user, solved)] = time.monotonic()

        for user in users:  # the class submits at once
            threads.append(threading.Thread(target=submit, args=(user,)))
            threads[-1].start()
        released, longest = {}, 0
        deadline = time.monotonic() + 1800
        while len(released) < students and time.monotonic() < deadline:
            service.poll(wait=False)
            with service.engine.connect() as connection:
                for row in connection.execute(ATTEMPTS.select()):
                    if row.released and row.folder not in released and row.folder in submitted:
                        released[row.folder] = time.monotonic()
                    longest = max(longest, sum(r.state in ("waiting", "grading")
                                               for r in connection.execute(ATTEMPTS.select())))
            time.sleep(0.2)
        for thread in threads:
            thread.join()
        service.close()
        waits = sorted(released[folder] - submitted[folder] for folder in released)
        return {"assignment": assignment, "students": students, "queue": longest, "waits": waits}


def class_columns(sizes: list) -> list:
    return ["notebook", *(f"{size} at once: first / median / last wait (s)" if size > 1 else "one student: wait (s)"
                          for size in sizes)]


def wait_cell(waits: list) -> str:
    if len(waits) == 1:
        return f"{waits[0]:.1f}"
    return f"{waits[0]:.1f} / {statistics.median(waits):.1f} / {waits[-1]:.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.on_submit_benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--students", type=int, action="append", default=[], dest="sizes",
                        help="students submitting at once (repeatable: a class of each size; default: 1 and 5)")
    parser.add_argument("-a", "--assignment", action="append", default=[], dest="assignments",
                        help=f"a notebook (repeatable; default: {', '.join(NOTEBOOKS)})")
    args = parser.parse_args(argv)
    sizes = sorted(set(args.sizes or [1, 5]))
    prepare_environment()
    chosen = check_assignments(args.assignments or NOTEBOOKS, SOLUTIONS)
    table = {assignment: [f"`{assignment}`"] for assignment in chosen}
    longest = {}  # the longest wait of any student, per class size
    for size in sizes:
        print(f"{size} students submit at once, {os.cpu_count()} cores, one grader process per core")
        print(f"{'notebook':<28}{'queue':>6}{'first s':>9}{'median s':>10}{'last s':>8}   each student's wait (s)")
        for assignment in chosen:
            row = time_notebook(assignment, size)
            waits = row["waits"]
            if len(waits) < row["students"]:
                print(f"{assignment:<28} only {len(waits)} of {row['students']} released in 30 minutes")
                table[assignment].append(f"{len(waits)} of {size} released in 30 minutes")
                continue
            table[assignment].append(wait_cell(waits))
            longest[size] = max(longest.get(size, 0.0), waits[-1])
            print(f"{assignment:<28}{row['queue']:>6}{waits[0]:>9.1f}{statistics.median(waits):>10.1f}"
                  f"{waits[-1]:>8.1f}   {' '.join(f'{w:.1f}' for w in waits)}", flush=True)
    if set(chosen) == set(NOTEBOOKS):  # the manual's table: every notebook, measured in one run
        path = results.record("benchmark-on-submit", "Feedback on submit: each student's wait, solved notebooks",
                              class_columns(sizes), list(table.values()), class_sizes=" and ".join(map(str, sizes)),
                              **{f"longest_wait_{size}_at_once": round(wait, 1) for size, wait in longest.items()})
        print(f"recorded in {path.relative_to(results.REPO_ROOT)}")


if __name__ == "__main__":
    main()
