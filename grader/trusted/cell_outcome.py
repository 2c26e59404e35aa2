"""What the grader itself did to a cell: stopped it at its time limit, skipped it once the notebook's budget was
spent or its kernel kept dying, or lost its kernel while it ran.

The grader writes it in the cell's metadata, under a key it first removes from every submitted cell, and the run
summary, the feedback and the class report read it from there. They never infer it from an error's name or text:
the student's code chooses those (an exception class named GradingBudgetSpent, a raised TimeoutError).
"""
KEY = "grader_outcome"
TIMED_OUT = "timed out"  # the cell reached its time limit and was interrupted
BUDGET_SPENT = "budget spent"  # not run: the notebook's grading budget was used up
NOT_RUN = "not run"  # not run: the kernel died too many times in this notebook
CRASHED = "crashed"  # the kernel died while this cell ran
OUTCOMES = (TIMED_OUT, BUDGET_SPENT, NOT_RUN, CRASHED)
STOPPED_EARLY = frozenset({BUDGET_SPENT, NOT_RUN})  # cells the grader never ran


def mark(cell, outcome: str):
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}: one of {', '.join(OUTCOMES)}")
    cell.setdefault("metadata", {})[KEY] = outcome


def outcome(cell) -> str:
    """The grader's outcome of a graded cell ('' when it ran to its end)."""
    value = (cell.get("metadata") or {}).get(KEY, "")
    return value if value in OUTCOMES else ""


def forget_submitted(nb):
    """Remove what a submission says about outcomes: only the grading that follows may write them."""
    for cell in nb.cells:
        (cell.get("metadata") or {}).pop(KEY, None)
