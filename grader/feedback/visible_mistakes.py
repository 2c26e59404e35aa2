"""The named mistakes a visible test recognises in the student's own kernel (Run, Validate).

Each named mistake of an assignment's catalogue (course/<assignment>/answers.py, grader/feedback/mistakes.py) is
put in place of its exercise's answer in a kernel of the solved notebook, and the exercise's visible test
runs; the digests of the failure it gives (attention_course.dependencies.failure_digest: the exercise,
the failure's type and message, and the same without its numbers) are kept with the mistake's name in
attention_course/mistake_digests.json, which ships with the course. A student whose visible test fails
with the same message reads "This looks like: <name>."; where the message differs only in its numbers
(a check of a model with random weights), every mistake that fails that check is named. Only digests
ship: no mistake's code, nothing of a hidden test. Mistakes that fail a visible test alike share a
digest and are named together; one the visible test does not catch has none.

`python -m grader release` rebuilds the assignments whose source notebook or catalogue changed;
`python -m grader.feedback.visible_mistakes [assignment ...]` rebuilds the named ones (all without names).
"""
import hashlib
import inspect
import json
import sys


from attention_course import dependencies
from grader.course import check_assignments, source_notebook, write_atomically
from grader.feedback.mistakes import catalogue, describe, notebook_digest
from grader.sandbox.notebook_kernel import NotebookKernel

DIGESTS = dependencies.MISTAKE_DIGESTS
_READ_LAST = ("import attention_course.dependencies as _attention_course_dependencies\n"
              "print(_attention_course_dependencies.last_failure or '')\n"
              "del _attention_course_dependencies")


def source_key(assignment: str, source_nb) -> str:
    """What an assignment's digests depend on: its source notebook, its catalogue of named mistakes and how a
    failure is digested."""
    text = json.dumps([notebook_digest(source_nb), catalogue(assignment),
                       inspect.getsource(dependencies.failure_digest)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def stored() -> dict:
    try:
        table = json.loads(DIGESTS.read_text())
    except (OSError, ValueError):
        table = {}
    return {"sources": table.get("sources", {}), "digests": table.get("digests", {})}


def stale(assignments) -> list:
    """The assignments whose stored digests were not made from their notebook and catalogue as they are."""
    sources = stored()["sources"]
    found = []
    return [assignment for assignment in assignments
            if sources.get(assignment) != source_key(assignment, source_notebook(assignment))]


def digests(assignment: str) -> dict:
    """{digest: [names]} of the named mistakes of `assignment` that fail their exercise's visible test."""
    kernel = NotebookKernel(assignment)
    found = {}
    try:
        kernel.run_all()
        for exercise, mistakes in catalogue(assignment).items():
            visible = kernel.test_cells(exercise)[0]
            answer = kernel.answer_cell(exercise).source
            for name, code in mistakes.items():
                if kernel.run(code).ok and not kernel.run(visible.source).ok:
                    for digest in kernel.run(_READ_LAST).stdout.split():  # the exact and the number-free one
                        found.setdefault(digest, []).append(describe(name))
                restored = kernel.run(answer)
                if not restored.ok:
                    raise RuntimeError(f"{assignment}: restoring the answer to {exercise} failed: {restored.error}")
            kernel.run(visible.source)  # the exercise's own test passes again, as the notebook left it
    finally:
        kernel.close()
    return {digest: sorted(set(names)) for digest, names in found.items()}


def refresh(assignments, *, force: bool = False, log=print) -> list:
    """Rebuild the digests of `assignments` that are stale (all of them with `force`); return the rebuilt."""
    chosen = list(assignments) if force else stale(assignments)
    if not chosen:
        return []
    table = stored()
    for assignment in chosen:
        log(f"Named mistakes of {assignment}: running each against its visible test ...")
        key = source_key(assignment, source_notebook(assignment))  # before the run: an edit during it makes it stale
        table["digests"][assignment] = digests(assignment)
        table["sources"][assignment] = key
        named = {name for names in table["digests"][assignment].values() for name in names}
        log(f"  {len(named)} named mistakes recognised by a visible test")
    write_atomically(DIGESTS, json.dumps(table, indent=1, sort_keys=True) + "\n")
    return chosen


def main(argv=None) -> int:
    names = sys.argv[1:] if argv is None else argv
    refresh(check_assignments(names), force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
