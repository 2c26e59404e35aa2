"""Feedback on submit: each submission graded as it arrives in nbgrader's exchange, by the same pipeline as
`grade` (grader.running.grading.Grader: the sandbox, the grader-side tests, the ledger, the feedback page).

Students submit as always (the Assignments tab, `nbgrader submit`): nbgrader writes
<exchange>/<course>/inbound/<student>+<assignment>+<timestamp>+<random>/. This service finds each new
folder, records it as an attempt in the gradebook's database (table grader_attempts: every folder once, so
none is graded twice, and one that arrived while the service was down is graded when it is back), grades
it, and releases its feedback with nbgrader's own release_feedback, so the student's "Fetch Feedback"
brings the page into JupyterLab.

What a student can choose is treated as data, not trusted:
- who: the folder must belong to the Unix user its name claims (the classroom's servers run as each
  student's own user); a folder named for someone else is refused, and the named student sees that;
- when: the arrival time is the newest change time (ctime) of the folder and its files, which no user can
  set back; the `timestamp.txt` a student wrote is replaced by it before grading (late penalties);
- how often: SubmitPolicy's attempts per hour and minimum gap, counted on accepted attempts; an attempt
  over a limit is refused with the time of the next one allowed (shown on the status page beforehand);
- what they learn before the deadline: the instructor's choice per assignment (SubmitPolicy.
  before_deadline): the whole page, the visible tests only (grader.feedback.feedback_summary.
  withhold_hidden_results), or nothing until the deadline; after it every graded attempt's whole page.
The deadline is nbgrader's own due date of the assignment (the Formgrader's "Due date", or `nbgrader db
assignment add NAME --duedate=...`); with none, the before-deadline policy holds until one is set.

Which attempt counts (the score in the gradebook, its CSV exports and the LMS) is SubmitPolicy.counted:
the last accepted one before the deadline, or the best; the gradebook always holds the counted one.
"""
import argparse
import datetime
import fcntl
import os
import pwd
import re
import shutil
import sys
import time
from concurrent import futures
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from sqlalchemy import Column, DateTime, Float, LargeBinary, String, Table, Text, select
from sqlalchemy.exc import IntegrityError
from traitlets import Bool, Dict, Enum, Float as FloatTrait, Integer, TraitError
from traitlets.config import Configurable

from grader.limits import FIXED
from grader.intake import student_ids
from grader.course import CourseError, check_assignments
from grader.running.grading import Grader, _worker_grade, _worker_name_mistakes
from grader.intake.submissions import take_submission
from grader.running.ledger import class_lock, engine_for, grader_id, metadata, now, pack, read_pages, unpack

# nbgrader submit's folder name: <student>+<assignment>+<timestamp>+<random> (0.9's add_random_string).
INBOUND_NAME = re.compile(r"(?P<student>[^+]{1,64})\+(?P<assignment>[^+]{1,128})\+(?P<timestamp>[^+]{1,64})"
                          r"\+(?P<random>[A-Za-z0-9_=-]{1,64})")
# nbgrader submit writes secrets.token_hex(64); the feedback's file name is made from it.
SECRET = re.compile(r"[0-9a-f]{32,256}")
MAX_TREE_ENTRIES = FIXED["inbound_entries"].value
MAX_REFUSED_PER_HOUR = FIXED["refused_records_per_hour"].value
HOUR = datetime.timedelta(hours=1)

ATTEMPTS = Table(
    "grader_attempts", metadata,
    Column("folder", String(320), primary_key=True),  # the inbound folder's name
    Column("student", String(128), nullable=False, index=True),
    Column("assignment", String(128), nullable=False),
    Column("arrived_at", DateTime, nullable=False),
    Column("state", String(16), nullable=False),  # waiting, grading, graded, refused, failed
    Column("reason", Text),  # why refused, or what grading said
    Column("score", Float), Column("max_score", Float),
    Column("pages", LargeBinary),  # the whole feedback pages (ledger.pack)
    Column("released", String(16), nullable=False, default=""),  # "", "visible", "full"
    Column("graded_at", DateTime),
)


class SubmitPolicy(Configurable):
    """The on-submit service's rules, for every assignment unless `assignments` overrides one."""

    attempts_per_hour = Integer(4, help="Attempts at one assignment a student may have graded in any hour"
                                ).tag(config=True)
    min_gap_minutes = FloatTrait(5.0, help="Minutes between two graded attempts at one assignment by one student"
                                 ).tag(config=True)
    before_deadline = Enum(["full", "visible", "none"], "visible", help=(
        "Feedback on an attempt before the assignment's due date: full (the whole page: score, hidden tests' "
        "results, named mistakes), visible (the visible tests' results and the mistakes they name, nothing "
        "that depends on a hidden test) or none (only that it was graded); after the due date every "
        "attempt's whole page is released")).tag(config=True)
    counted = Enum(["last", "best"], "last", help="Which attempt counts: the last one accepted before the due "
                                                  "date, or the best of those").tag(config=True)
    assignments = Dict(help="Overrides by assignment, e.g. {'08_real_translation': {'min_gap_minutes': 15, "
                            "'before_deadline': 'none'}}").tag(config=True)
    owner_is_student = Bool(True, help="Grade an inbound folder only when its owner's Unix user name is the "
                                       "student it names (each student's server runs as their own user)"
                            ).tag(config=True)
    poll_seconds = FloatTrait(2.0, help="How often the exchange is looked at, in seconds").tag(config=True)

    RULES = ("attempts_per_hour", "min_gap_minutes", "before_deadline", "counted")

    def rules(self, assignment: str) -> "Rules":
        override = dict(self.assignments.get(assignment) or {})
        unknown = sorted(set(override) - set(self.RULES))
        if unknown:
            raise CourseError(f"SubmitPolicy.assignments[{assignment!r}]: unknown {', '.join(unknown)}; "
                              f"valid: {', '.join(self.RULES)}")
        try:  # the traits check each value as they check the class-wide ones
            checked = SubmitPolicy(**{name: override.get(name, getattr(self, name)) for name in self.RULES})
        except TraitError as error:
            raise CourseError(f"SubmitPolicy.assignments[{assignment!r}]: {error}") from None
        return Rules(*(getattr(checked, name) for name in self.RULES))


@dataclass(frozen=True)
class Rules:
    attempts_per_hour: int
    min_gap_minutes: float
    before_deadline: str
    counted: str


def owner_name(path: Path) -> str:
    try:
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except KeyError:
        return f"uid {os.lstat(path).st_uid}"


def arrival(path: Path) -> datetime.datetime:
    """When a submission folder last changed: the newest ctime of it and its entries (never followed), in UTC.
    A user cannot set a ctime back, so a folder filled after a deadline arrives after it. Raises ValueError
    past MAX_TREE_ENTRIES entries."""
    newest, seen = _ctime(path), 0
    stack = [path] if path.is_dir() and not path.is_symlink() else []
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                seen += 1
                newest = max(newest, entry.stat(follow_symlinks=False).st_ctime)
                if seen > MAX_TREE_ENTRIES:
                    raise ValueError(f"more than {MAX_TREE_ENTRIES:,} files and folders")
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return _utc(newest)


def _ctime(path: Path) -> float:
    return os.lstat(path).st_ctime


def _utc(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


class OnSubmit:
    """The service's work on one course: find attempts, grade them, release what the policy allows."""

    def __init__(self, grader: Grader, exchange: Path, policy: SubmitPolicy = None, clock=now, log=None,
                 outbox=None):
        """`outbox`: a grader.outputs.lms_outbox.Outbox that takes each counted score once the student may see it."""
        self.grader, self.policy, self.clock = grader, policy or SubmitPolicy(config=grader.config), clock
        self.outbox = outbox
        self.course_id = grader.config.CourseDirectory.course_id
        self.inbound = Path(exchange) / self.course_id / "inbound"
        self.copies = grader.workspace / "attempts"  # each accepted attempt as taken, for regrades and release
        self.log = log or (lambda message: print(message, file=sys.stderr, flush=True))
        self.engine = engine_for(grader.db_url)
        self.known = set()  # folders recorded, or refused without a record
        self.assignments = set(check_assignments((), grader.source))
        with class_lock(grader.db_url):
            metadata.create_all(self.engine, checkfirst=True)
        for name in self.assignments:
            self.grader.generate(name)
        self._api_visible = None
        self._resumed = False
        self.pool, self.running, self.named = None, {}, {}  # the graders' pool, its jobs, catalogues asked for

    # -- finding attempts ---------------------------------------------------------------------------
    def discover(self) -> int:
        """Record every new inbound folder, accepted (waiting) or refused, oldest first; returns how many."""
        if not self.inbound.is_dir():
            return 0
        with self.engine.connect() as connection:
            self.known |= set(connection.execute(select(ATTEMPTS.c.folder)).scalars())
        found = []
        with os.scandir(self.inbound) as entries:
            for entry in entries:
                if entry.name in self.known:
                    continue
                self.known.add(entry.name)
                try:
                    found.append((arrival(Path(entry.path)), entry))
                except (OSError, ValueError) as error:  # the folder's own change time stands for it
                    try:
                        when = _utc(_ctime(Path(entry.path)))
                    except OSError:
                        when = self.clock()
                    found.append((when, entry, f"unreadable: {error}"))
        recorded = 0
        for arrived, entry, *problem in sorted(found, key=lambda item: item[0]):
            recorded += self._record(entry, arrived, problem[0] if problem else "")
        return recorded

    def _record(self, entry, arrived: datetime.datetime, problem: str) -> int:
        match = INBOUND_NAME.fullmatch(entry.name)
        if match is None:
            self.log(f"on-submit: {entry.name!r} is not an nbgrader submission's name; left alone")
            return 0
        student, assignment = match["student"], match["assignment"]
        if student_ids.problem(student):
            self.log(f"on-submit: not graded: {student_ids.problem(student)}")
            return 0
        state, reason = "waiting", ""
        if problem:
            state, reason = "refused", problem
        elif assignment not in self.assignments:
            state, reason = "refused", f"this course has no assignment {assignment!r}"
        elif not entry.is_dir(follow_symlinks=False):
            state, reason = "refused", "not a folder (nbgrader submit makes a folder)"
        elif self.policy.owner_is_student and owner_name(Path(entry.path)) != student:
            state, reason = "refused", "not submitted from this student's own account"
        else:
            state, reason = self._limits(student, assignment, arrived)
        if state == "refused" and self._refused_lately(student, arrived) >= MAX_REFUSED_PER_HOUR:
            self.log(f"on-submit: {entry.name!r} refused ({reason}); not recorded: over "
                     f"{MAX_REFUSED_PER_HOUR} refused attempts in an hour")
            return 0
        try:
            with self.engine.begin() as connection:
                connection.execute(ATTEMPTS.insert().values(
                    folder=entry.name, student=student, assignment=assignment, arrived_at=arrived, state=state,
                    reason=reason, released=""))
        except IntegrityError:  # recorded by another service on the same gradebook
            return 0
        self.log(f"on-submit: {student}/{assignment} arrived {arrived:%Y-%m-%d %H:%M:%S} UTC: "
                 + (f"refused ({reason})" if state == "refused" else "queued"))
        return 1

    def _accepted(self, student: str, assignment: str) -> list:
        with self.engine.connect() as connection:
            return list(connection.execute(
                select(ATTEMPTS).where((ATTEMPTS.c.student == student) & (ATTEMPTS.c.assignment == assignment)
                                       & (ATTEMPTS.c.state != "refused")).order_by(ATTEMPTS.c.arrived_at)))

    def _refused_lately(self, student: str, arrived) -> int:
        with self.engine.connect() as connection:
            return len(list(connection.execute(select(ATTEMPTS.c.folder).where(
                (ATTEMPTS.c.student == student) & (ATTEMPTS.c.state == "refused")
                & (ATTEMPTS.c.arrived_at > arrived - HOUR)))))

    def next_allowed(self, student: str, assignment: str) -> tuple:
        """(the earliest time another attempt is accepted, the attempts used in the last hour), from now."""
        return self._next_allowed(student, assignment, self.clock())

    def _next_allowed(self, student: str, assignment: str, at) -> tuple:
        rules = self.policy.rules(assignment)
        times = [row.arrived_at for row in self._accepted(student, assignment) if row.arrived_at <= at]
        recent = [t for t in times if t > at - HOUR]
        allowed = at
        if times:
            allowed = max(allowed, times[-1] + datetime.timedelta(minutes=rules.min_gap_minutes))
        if len(recent) >= rules.attempts_per_hour:
            allowed = max(allowed, recent[len(recent) - rules.attempts_per_hour] + HOUR)
        return allowed, len(recent)

    def _limits(self, student: str, assignment: str, arrived) -> tuple:
        rules = self.policy.rules(assignment)
        allowed, used = self._next_allowed(student, assignment, arrived)
        if allowed <= arrived:
            return "waiting", ""
        why = (f"{rules.attempts_per_hour} attempts per hour" if used >= rules.attempts_per_hour
               else f"one attempt every {rules.min_gap_minutes:g} minutes")
        return "refused", f"over the limit of {why}; the next is accepted from {allowed:%Y-%m-%d %H:%M:%S} UTC"

    # -- grading ------------------------------------------------------------------------------------
    def grade_waiting(self, wait: bool = True) -> list:
        """Start grading the waiting attempts, the oldest of each student's assignment first, one per student
        and assignment at a time, `workers` at once (a pool of graders kept between polls, so no attempt
        waits for another's batch); each is released as soon as it is graded. With `wait`, return when all
        started ones are done. Returns the Results finished in this call."""
        with self.engine.begin() as connection:
            if not self._resumed:  # a service killed while grading: those wait again
                connection.execute(ATTEMPTS.update().where(ATTEMPTS.c.state == "grading").values(state="waiting"))
                self._resumed = True
            rows = list(connection.execute(select(ATTEMPTS).where(ATTEMPTS.c.state == "waiting")
                                           .order_by(ATTEMPTS.c.arrived_at)))
        busy = {(row.student, row.assignment) for row in self.running.values()}
        finished = []
        for row in rows:
            if (row.student, row.assignment) in busy:
                continue
            with self.engine.begin() as connection:
                claimed = connection.execute(ATTEMPTS.update().where(
                    (ATTEMPTS.c.folder == row.folder) & (ATTEMPTS.c.state == "waiting")).values(state="grading"))
            if claimed.rowcount != 1:
                continue
            problem = self._take(row)
            if problem:
                self._set(row.folder, state="refused", reason=problem)
                continue
            busy.add((row.student, row.assignment))
            if self.grader.workers <= 1:
                [result] = self.grader.grade_pairs([(row.student, row.assignment)], progress=False, regrade=True)
                finished.append(self._graded(row, result))
                continue
            if self.pool is None:
                self.pool = self.grader._pool()
            if row.assignment not in self.named:  # its catalogue first, as grade_pairs does
                self.named[row.assignment] = self.pool.submit(_worker_name_mistakes, row.assignment)
            job = (row.student, row.assignment, True, "", "", f"on-submit {grader_id()}")
            self.running[self.pool.submit(_worker_grade, *job)] = row
        while self.running:
            done, _ = futures.wait(list(self.running), timeout=None if wait else 0,
                                   return_when=futures.FIRST_COMPLETED)
            for future in done:
                row = self.running.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 (a grader process died: this attempt fails, others go on)
                    self._set(row.folder, state="failed", reason=f"grading failed: {type(error).__name__}")
                    self.log(f"on-submit: {row.folder}: grading failed: {error!r}"[:1000])
                    if isinstance(error, BrokenProcessPool):
                        self._restart_pool()
                    continue
                finished.append(self._graded(row, result))
            if not wait:
                break
        return finished

    def _restart_pool(self):
        """After a grader process died: the jobs still in the broken pool wait again, in a new pool."""
        for future, row in list(self.running.items()):
            self._set(row.folder, state="waiting")
            self.running.pop(future)
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool, self.named = None, {}

    def _graded(self, row, result):
        """Record a graded attempt, release what the policy allows, keep the counted one in the gradebook."""
        folder = self.grader.workspace / "feedback" / row.student / row.assignment
        pages = read_pages(folder, ".html", sorted(p.stem for p in folder.glob("*.html")))
        self._set(row.folder, state="graded", score=result.score, max_score=result.max_score,
                  reason=result.error or "", pages=pack(pages), graded_at=self.clock())
        self._release(row.folder, row.student, row.assignment)
        self._keep_counted_in_gradebook(row.student, row.assignment, graded=row.folder)
        self._send_counted(row.student, row.assignment)
        return result

    def close(self):
        """Stop the pool of graders (after the grading under way)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def _take(self, row) -> str:
        """Copy the attempt with grader.intake.submissions into submitted/ (and keep a copy); '' or why it cannot be graded."""
        source = self.inbound / row.folder
        copy = self.copies / row.folder
        if copy.exists():
            shutil.rmtree(copy)
        try:
            notes = take_submission(source, self.copies, row.folder, row.assignment,
                                    self.grader.config.CourseDirectory.max_file_size)
        except OSError as error:
            return f"could not be copied: {error}"
        taken = copy / row.assignment
        secret = taken / "submission_secret.txt"
        try:
            valid = secret.is_file() and SECRET.fullmatch(secret.read_text(errors="replace").strip())
        except OSError:
            valid = False
        if not valid:
            return "not made by nbgrader submit (its submission_secret.txt is missing or malformed)"
        for note in notes:
            self.log(f"on-submit: {row.folder}: {note}")
        # nbgrader reads the submission time (late penalties) from timestamp.txt: the arrival, not the student's.
        (taken / "timestamp.txt").write_text(row.arrived_at.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
        self._place(row.folder, row.student, row.assignment)
        return ""

    def _place(self, folder: str, student: str, assignment: str):
        target = self.grader.submitted_dir(student, assignment)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(self.copies / folder / assignment, target, symlinks=True)

    def _set(self, folder: str, **values):
        with self.engine.begin() as connection:
            connection.execute(ATTEMPTS.update().where(ATTEMPTS.c.folder == folder).values(**values))

    def deadline(self, assignment: str):
        with Gradebook(self.grader.db_url) as gradebook:
            try:
                return gradebook.find_assignment(assignment).duedate
            except MissingEntry:
                return None

    def _before_deadline(self, assignment: str) -> bool:
        due = self.deadline(assignment)
        return due is None or self.clock() <= due

    def counted(self, student: str, assignment: str):
        """The attempt that counts (a row), or None."""
        due = self.deadline(assignment)
        graded = [row for row in self._accepted(student, assignment)
                  if row.state == "graded" and (due is None or row.arrived_at <= due)]
        if not graded:
            return None
        if self.policy.rules(assignment).counted == "best":
            return max(graded, key=lambda row: ((row.score or 0.0), -row.arrived_at.timestamp()))
        return graded[-1]

    def _keep_counted_in_gradebook(self, student: str, assignment: str, graded: str):
        """The gradebook holds the counted attempt: after grading another one, the counted one is graded again."""
        counted = self.counted(student, assignment)
        if counted is None or counted.folder == graded:
            return
        self._place(counted.folder, student, assignment)
        self.grader.grade_pairs([(student, assignment)], progress=False, feedback=True, regrade=True)
        self.log(f"on-submit: {student}/{assignment}: the gradebook holds the counted attempt {counted.folder}")

    # -- feedback -----------------------------------------------------------------------------------
    def _release(self, folder: str, student: str, assignment: str):
        """Release what the policy allows of one graded attempt, with nbgrader's release_feedback."""
        before = self._before_deadline(assignment)
        kind = self.policy.rules(assignment).before_deadline if before else "full"
        if kind == "none":
            return
        with self.engine.connect() as connection:
            row = connection.execute(select(ATTEMPTS).where(ATTEMPTS.c.folder == folder)).first()
        target = self.grader.workspace / "feedback" / student / assignment
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in ("timestamp.txt", "submission_secret.txt"):
            shutil.copy(self.copies / folder / assignment / name, target / name)
        if kind == "visible":  # autograded/ holds this attempt: it was graded last
            self._visible_api().generate_feedback(assignment, student, force=True)
            for name in ("timestamp.txt", "submission_secret.txt"):  # generate_feedback starts the folder anew
                shutil.copy(self.copies / folder / assignment / name, target / name)
        else:
            for name, text in unpack(row.pages).items():
                (target / name).write_text(text)
        outcome = self.grader.api.release_feedback(assignment, student)
        if not outcome["success"]:
            self.log(f"on-submit: release_feedback {student}/{assignment} failed: {outcome.get('error')}")
            return
        self._set(folder, released=kind)

    def _visible_api(self) -> NbGraderAPI:
        if self._api_visible is None:
            config = self.grader.config.copy()
            config.FeedbackSummary.hidden_results = "withheld"
            self._api_visible = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
        return self._api_visible

    def release_after_deadlines(self) -> int:
        """Every graded attempt of an assignment past its due date gets its whole page; returns how many."""
        released = 0
        with self.engine.connect() as connection:
            rows = list(connection.execute(select(ATTEMPTS).where(
                (ATTEMPTS.c.state == "graded") & (ATTEMPTS.c.released != "full")).order_by(ATTEMPTS.c.arrived_at)))
        for row in rows:
            if not self._before_deadline(row.assignment):
                self._release(row.folder, row.student, row.assignment)
                self._send_counted(row.student, row.assignment)
                released += 1
        return released

    def _send_counted(self, student: str, assignment: str):
        """The counted score to the LMS's outbox, once the student may see it: never a hidden test's result early."""
        if self.outbox is None:
            return
        if self._before_deadline(assignment) and self.policy.rules(assignment).before_deadline != "full":
            return
        counted = self.counted(student, assignment)
        if counted is not None and counted.graded_at is not None:
            self.outbox.put(student, assignment, counted.score or 0.0, counted.max_score or 0.0, counted.graded_at)

    # -- the loop -----------------------------------------------------------------------------------
    def poll(self, wait: bool = True) -> list:
        self.discover()
        results = self.grade_waiting(wait)
        self.release_after_deadlines()
        if self.outbox is not None:
            self.outbox.post_due()
        return results

    def status(self, student: str) -> list:
        """What the student's status page shows, one dict per assignment they can submit."""
        shown = []
        for assignment in sorted(self.assignments):
            rules = self.policy.rules(assignment)
            allowed, used = self.next_allowed(student, assignment)
            before = self._before_deadline(assignment)
            counted = self.counted(student, assignment)
            with self.engine.connect() as connection:
                attempts = list(connection.execute(select(ATTEMPTS).where(
                    (ATTEMPTS.c.student == student) & (ATTEMPTS.c.assignment == assignment))
                    .order_by(ATTEMPTS.c.arrived_at)))
            shown.append({
                "assignment": assignment, "deadline": self.deadline(assignment), "rules": rules, "now": self.clock(),
                "used_this_hour": used, "next_allowed": allowed,
                "attempts": [{"arrived_at": row.arrived_at, "state": row.state, "reason": row.reason or "",
                              "score": row.score if (not before or rules.before_deadline == "full") else None,
                              "max_score": row.max_score, "released": row.released,
                              "counted": counted is not None and counted.folder == row.folder}
                             for row in attempts]})
        return shown


def single_service(workspace: Path):
    """Hold the workspace's lock for the life of the process: one service per course workspace."""
    handle = open(workspace / "on_submit.lock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise CourseError(f"another on-submit service already runs in {workspace}") from None
    return handle


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.running.on_submit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, required=True, help="the service's grading workspace")
    parser.add_argument("--source", type=Path, required=True, help="the course's nbgrader source folder")
    parser.add_argument("--exchange", type=Path, required=True, help="nbgrader's exchange root")
    parser.add_argument("--db-url", default=os.environ.get("GRADER_DB_URL"),
                        help="the course's gradebook (default: $GRADER_DB_URL)")
    parser.add_argument("--workers", type=int, default=None, help="notebooks graded at once (default: cores)")
    parser.add_argument("--once", action="store_true", help="grade what is waiting, then stop")
    args = parser.parse_args(argv)
    try:
        grader = Grader(args.workspace, args.source, workers=args.workers, db_url=args.db_url,
                        exchange=args.exchange)
        lock = single_service(grader.workspace)  # noqa: F841 (held until the process ends)
        service = OnSubmit(grader, args.exchange)
        try:
            while True:
                service.poll(wait=args.once)
                if args.once:
                    return 0
                time.sleep(service.policy.poll_seconds)
        finally:
            service.close()
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
