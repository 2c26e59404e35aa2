"""The order a class's notebooks are graded in: the longest first, so that no worker is left grading alone
at the end of a run while the others have nothing to do.

A notebook costs about what its assignment's other notebooks cost, which a fresh gradebook does not know:
the first notebook of every assignment is handed out first, and from then on the assignment whose
notebooks took longest on average (one started but not timed yet counts as the longest).
"""
import math


class LongestFirst:
    """Jobs (tuples whose second item is the assignment) handed out one at a time by `next`; `done` tells
    how long a notebook of an assignment took."""

    def __init__(self, jobs):
        self.waiting = {}  # assignment -> its jobs, in the order given
        for job in jobs:
            self.waiting.setdefault(job[1], []).append(job)
        self.seconds = {}  # assignment -> seconds its graded notebooks took
        self.started = set()

    def __len__(self) -> int:
        return sum(len(jobs) for jobs in self.waiting.values())

    def next(self):
        """The next job, or None when every job has been handed out."""
        left = [assignment for assignment, jobs in self.waiting.items() if jobs]
        if not left:
            return None
        fresh = [assignment for assignment in left if assignment not in self.started]
        chosen = fresh[0] if fresh else max(left, key=self._mean_seconds)
        self.started.add(chosen)
        return self.waiting[chosen].pop(0)

    def done(self, assignment: str, seconds: float):
        self.seconds.setdefault(assignment, []).append(seconds)

    def _mean_seconds(self, assignment: str) -> float:
        times = self.seconds.get(assignment)
        return sum(times) / len(times) if times else math.inf
