"""The order of grading: every notebook once, each assignment's first notebook early, then longest first."""
from grader.running.grading_order import LongestFirst


def jobs_of(counts: dict) -> list:
    return [(f"s{number}", assignment, True) for assignment, count in counts.items() for number in range(count)]


def test_every_job_is_handed_out_once_first_one_of_each_assignment():
    order = LongestFirst(jobs_of({"a": 3, "b": 2, "c": 4}))
    assert len(order) == 9
    first = [order.next() for _ in range(3)]
    assert [job[1] for job in first] == ["a", "b", "c"]
    for job in first:
        order.done(job[1], {"a": 5.0, "b": 40.0, "c": 1.0}[job[1]])
    rest = []
    while (job := order.next()) is not None:
        rest.append(job)
    assert [job[1] for job in rest] == ["b", "a", "a", "c", "c", "c"]
    assert sorted(first + rest) == sorted(jobs_of({"a": 3, "b": 2, "c": 4})) and len(order) == 0


def test_an_assignment_not_timed_yet_goes_before_timed_ones_and_the_mean_decides():
    order = LongestFirst(jobs_of({"a": 3, "b": 3}))
    a0, b0 = order.next(), order.next()
    order.done("a", 10.0)  # b's first notebook is still being graded: b counts as the longest
    assert order.next()[1] == "b"
    order.done("b", 2.0)
    order.done("b", 30.0)  # b's mean, 16 s, is above a's 10 s
    assert order.next()[1] == "b"
    assert [order.next()[1], order.next()[1], order.next()] == ["a", "a", None]
    assert a0[1] == "a" and b0[1] == "b"
