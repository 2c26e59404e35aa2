"""Scores to an LTI 1.3 platform this project did not write (tests/lti_platform.py on lti1p3platform) with
pylti1p3's Assignment and Grade Services, from the outbox (grader/outputs/lms_outbox.py): posted once, kept while the
platform is down or the student has not launched yet, retried with back-off, never posted twice."""
import datetime

import pytest

from grader.running.ledger import now
from grader.outputs.lms_outbox import RETRY_FIRST, Outbox
from tests.lti_platform_process import Platform

A = "02_three_stage_attention"


@pytest.fixture
def platform(tmp_path):
    running = Platform(tmp_path).start()
    yield running
    running.stop()


class Clock:
    def __init__(self):
        self.at = now()

    def __call__(self):
        return self.at

    def advance(self, delta):
        self.at += delta


def test_a_score_is_posted_once_kept_while_the_platform_is_down_and_posted_when_it_is_back(platform, tmp_path):
    clock = Clock()
    launches = {"ada": platform.ags_claims("sub-ada")}
    outbox = Outbox(f"sqlite:///{tmp_path / 'gradebook.db'}", platform.registration, launches.get, clock=clock,
                    log=lambda message: None)

    outbox.put("ada", A, 7.0, 10.0, clock())
    assert outbox.post_due() == 1
    assert platform.scores() == {("sub-ada", A): 7.0}
    [item] = platform.gradebook()["lineitems"]
    assert item["label"] == A and item["scoreMaximum"] == 10.0
    outbox.put("ada", A, 7.0, 10.0, clock())  # the same counted score again: nothing to post
    assert outbox.pending() == [] and outbox.post_due() == 0

    platform.set_down(True)
    clock.advance(datetime.timedelta(minutes=5))
    outbox.put("ada", A, 9.0, 10.0, clock())
    assert outbox.post_due() == 0
    [row] = outbox.pending()
    assert row.tries == 1 and "503" in row.last_error and row.next_try_at == clock() + RETRY_FIRST
    clock.advance(datetime.timedelta(seconds=10))
    assert outbox.post_due() == 0 and outbox.pending()[0].tries == 1  # not due yet: no try
    clock.advance(RETRY_FIRST)
    assert outbox.post_due() == 0 and outbox.pending()[0].next_try_at == clock() + 2 * RETRY_FIRST  # doubled
    assert platform.scores() == {("sub-ada", A): 7.0}

    platform.set_down(False)
    clock.advance(2 * RETRY_FIRST)
    assert outbox.post_due() == 1
    assert platform.scores() == {("sub-ada", A): 9.0} and outbox.pending() == []
    assert len(platform.gradebook()["lineitems"]) == 1  # one line item per assignment, found again


def test_a_student_with_no_launch_yet_waits_and_a_later_score_replaces_an_unposted_one(platform, tmp_path):
    clock = Clock()
    launches = {}
    outbox = Outbox(f"sqlite:///{tmp_path / 'gradebook.db'}", platform.registration, launches.get, clock=clock,
                    log=lambda message: None)
    outbox.put("bo", A, 3.0, 10.0, clock())
    assert outbox.post_due() == 0
    assert "no LMS launch of this student" in outbox.pending()[0].last_error

    clock.advance(datetime.timedelta(minutes=1))
    outbox.put("bo", A, 4.0, 10.0, clock())  # a newer counted score before the first was ever posted
    launches["bo"] = platform.ags_claims("sub-bo")
    assert outbox.post_due() == 1
    assert platform.scores() == {("sub-bo", A): 4.0}
