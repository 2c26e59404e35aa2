"""Scores to the LMS gradebook with LTI Advantage Assignment and Grade Services (pylti1p3), from an outbox in
the gradebook's database (table grader_lms_outbox).

The on-submit service puts a student's counted score here once the student may see it (after the due date,
or at once under the "full" feedback policy: the LMS never learns a hidden test's result before the
student may). Each (student, assignment) has one row holding the latest counted score; it is posted when it
differs from what was posted last, to one line item per assignment (tag and resource id = the assignment's
name). A post that fails (the LMS down, a refusal, no launch of the student seen yet) stays pending and is
tried again after a back-off that doubles from RETRY_FIRST to RETRY_LONGEST; nothing is lost on a restart,
and a score posted is never posted again unless it changes. The instructor's status page lists what is
pending and why (classroom/on_submit_service.py).

Where a student's AGS end-point and LMS user id come from: the claims of their last launch (the hub keeps
them in its auth_state), given to the outbox as `launches(student) -> claims or None`.
"""
import datetime

from sqlalchemy import Column, DateTime, Float, Integer, String, Table, Text, select
from sqlalchemy.exc import IntegrityError

from grader.limits import FIXED
from grader.running.ledger import class_lock, engine_for, metadata, now
from grader.running.lti_registration import AGS_CLAIM, LtiRegistration

RETRY_FIRST = datetime.timedelta(seconds=30)
RETRY_LONGEST = datetime.timedelta(hours=1)
MAX_ERROR = FIXED["lms_error_characters"].value

OUTBOX = Table(
    "grader_lms_outbox", metadata,
    Column("student", String(128), primary_key=True),
    Column("assignment", String(128), primary_key=True),
    Column("score", Float, nullable=False), Column("max_score", Float, nullable=False),
    Column("graded_at", DateTime, nullable=False),  # the score's time, sent as the AGS timestamp
    Column("state", String(16), nullable=False),  # pending, posted
    Column("posted_score", Float), Column("posted_at", DateTime),
    Column("tries", Integer, nullable=False, default=0),
    Column("next_try_at", DateTime), Column("last_error", Text),
)


def backoff(tries: int) -> datetime.timedelta:
    return min(RETRY_FIRST * 2 ** max(0, tries - 1), RETRY_LONGEST)


class Outbox:
    def __init__(self, db_url: str, registration: LtiRegistration, launches, clock=now, log=print):
        self.registration, self.launches, self.clock, self.log = registration, launches, clock, log
        self.engine = engine_for(db_url)
        with class_lock(db_url):
            metadata.create_all(self.engine, checkfirst=True)

    def put(self, student: str, assignment: str, score: float, max_score: float, graded_at: datetime.datetime):
        """The counted score of `student` on `assignment`: pending until posted (nothing if already posted)."""
        values = dict(score=float(score), max_score=float(max_score), graded_at=graded_at)
        key = (OUTBOX.c.student == student) & (OUTBOX.c.assignment == assignment)
        with self.engine.begin() as connection:
            row = connection.execute(select(OUTBOX).where(key)).first()
            if row is None:
                try:
                    connection.execute(OUTBOX.insert().values(student=student, assignment=assignment, state="pending",
                                                              tries=0, next_try_at=self.clock(), **values))
                except IntegrityError:  # put by another service at the same moment: the next put updates it
                    pass
                return
            if row.state == "posted" and row.posted_score == values["score"] and row.graded_at >= graded_at:
                return
            connection.execute(OUTBOX.update().where(key).values(state="pending", tries=0, next_try_at=self.clock(),
                                                                 last_error=None, **values))

    def pending(self) -> list:
        with self.engine.connect() as connection:
            return list(connection.execute(select(OUTBOX).where(OUTBOX.c.state == "pending")
                                           .order_by(OUTBOX.c.next_try_at)))

    def post_due(self) -> int:
        """Post every pending score whose next try is due; returns how many were posted."""
        posted = 0
        for row in self.pending():
            if row.next_try_at and row.next_try_at > self.clock():
                continue
            try:
                self._post(row)
            except Exception as error:  # noqa: BLE001 (the LMS's answer, kept; tried again later)
                tries = row.tries + 1
                self._update(row, tries=tries, next_try_at=self.clock() + backoff(tries),
                             last_error=f"{type(error).__name__}: {error}"[:MAX_ERROR])
                self.log(f"lms: {row.student}/{row.assignment} not posted (try {tries}): {error}"[:MAX_ERROR])
                continue
            self._update(row, state="posted", posted_score=row.score, posted_at=self.clock(), last_error=None)
            posted += 1
        return posted

    def _update(self, row, **values):
        key = (OUTBOX.c.student == row.student) & (OUTBOX.c.assignment == row.assignment)
        with self.engine.begin() as connection:  # only if no newer score was put meanwhile
            connection.execute(OUTBOX.update().where(key & (OUTBOX.c.graded_at == row.graded_at)
                                                     & (OUTBOX.c.score == row.score)).values(**values))

    def _post(self, row):
        from pylti1p3.grade import Grade
        from pylti1p3.lineitem import LineItem
        from pylti1p3.service_connector import ServiceConnector
        from pylti1p3.assignments_grades import AssignmentsGradesService

        claims = self.launches(row.student)
        if not claims or not isinstance(claims.get(AGS_CLAIM), dict) or not claims.get("sub"):
            raise LookupError("no LMS launch of this student with grade services seen yet: the score is sent "
                              "after their next launch from the LMS")
        registration = self.registration.tool_conf().find_registration_by_params(self.registration.issuer,
                                                                                 self.registration.client_id)
        service = AssignmentsGradesService(ServiceConnector(registration), claims[AGS_CLAIM])
        item = (LineItem().set_tag(row.assignment).set_resource_id(row.assignment).set_label(row.assignment)
                .set_score_maximum(row.max_score))
        item = service.find_or_create_lineitem(item, find_by="tag")
        stamp = row.graded_at.replace(tzinfo=datetime.timezone.utc).isoformat(timespec="milliseconds")
        grade = (Grade().set_score_given(row.score).set_score_maximum(row.max_score).set_timestamp(stamp)
                 .set_activity_progress("Completed").set_grading_progress("FullyGraded").set_user_id(claims["sub"]))
        service.put_grade(grade, item)
