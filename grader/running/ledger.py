"""What has been graded, recorded in the gradebook's own database, so that a grader killed half-way (a node
drained, an OOM kill, Ctrl-C) loses nothing and a rerun grades only what is missing; and shards, so that N
graders on N machines share one class through that database.

A submission counts as graded only when its row in `grader_graded` says "done": that row is written in one
transaction after nbgrader has committed the submission's scores, and it holds the score nbgrader wrote,
the autograded notebooks and the feedback pages (compressed), and digests of the submitted files and of
the assignment's source. Before grading starts its row is set to "grading", so a regrade that is killed
never leaves an old "done" beside half-overwritten scores. A submission is missing when it has no "done"
row, when its files or the assignment's source changed since, when feedback is wanted and the row has
none, or when nbgrader's gradebook disagrees with the row's score.

The final step (`grade --finish`) writes grades.csv, the autograded notebooks and the feedback pages of
the whole class from the database, each file under a temporary name renamed into place.
"""
import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import socket
import zlib
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy import (Column, DateTime, Float, Integer, LargeBinary, MetaData, String, Table, Text,
                        create_engine, select, text)
from sqlalchemy.engine import make_url

from grader.course import CourseError
from grader.outputs.gradebook import Result

metadata = MetaData()
GRADED = Table(
    "grader_graded", metadata,
    Column("student", String(128), primary_key=True),
    Column("assignment", String(128), primary_key=True),
    Column("state", String(16), nullable=False),  # "grading", then "done"
    Column("submission_digest", String(64)),
    Column("source_digest", String(64)),
    Column("score", Float), Column("max_score", Float),
    Column("failed", Text), Column("error", Text), Column("notes", Text),  # JSON lists, the error as text
    Column("autograded", LargeBinary), Column("feedback", LargeBinary),  # zlib of JSON {file name: text}
    Column("attempts", Integer, nullable=False, default=0),  # gradings started
    Column("completions", Integer, nullable=False, default=0),  # gradings finished
    Column("graded_by", String(255)),  # host, process and shard of the last grading started
    Column("started_at", DateTime), Column("graded_at", DateTime),
)
# What the shards of one class agree on, one row per setting: "shards", the count the first shard started with.
CLASS = Table(
    "grader_class", metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(255), nullable=False),
)
PG_LOCK_KEY = 7_402_113  # the advisory lock the shards of one gradebook take while preparing the class


# -- shards --------------------------------------------------------------------------------------
def parse_shard(value: str) -> tuple:
    """"K/N" -> (K, N): the K-th of N shares, counted from 0 like JOB_COMPLETION_INDEX and Slurm arrays."""
    try:
        index, count = (int(part) for part in str(value).split("/"))
    except ValueError:
        raise CourseError(f"--shard {value}: expected K/N, e.g. 0/4 for the first of four shares") from None
    if count < 1 or not 0 <= index < count:
        raise CourseError(f"--shard {value}: K must be 0 to {max(count - 1, 0)} for N = {count}")
    return index, count


def shard_of(student: str, assignment: str, count: int) -> int:
    """The share a submission belongs to: a stable hash (the same on every machine and Python), not hash()."""
    digest = hashlib.sha256(f"{student}\0{assignment}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def in_shard(pairs, shard) -> list:
    if shard is None:
        return list(pairs)
    index, count = shard
    return [(student, assignment) for student, assignment in pairs
            if shard_of(student, assignment, count) == index]


# -- digests -------------------------------------------------------------------------------------
def folder_digest(folder: Path) -> str:
    """sha256 over the relative paths and bytes of every regular file under `folder` (links not followed)."""
    digest = hashlib.sha256()
    folder = Path(folder)
    if not folder.is_dir():
        return digest.hexdigest()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def pack(files: dict):
    return zlib.compress(json.dumps(files, sort_keys=True).encode(), 6) if files is not None else None


def unpack(blob) -> dict:
    return json.loads(zlib.decompress(blob)) if blob else {}


def read_pages(folder: Path, suffix: str, names: list) -> dict:
    """{file name: text} for each of `names` (notebook names) with `suffix` found in `folder`."""
    found = {}
    for name in names:
        path = Path(folder) / f"{name}{suffix}"
        if path.is_file():
            found[path.name] = path.read_text(encoding="utf-8")
    return found


def write_if_changed(path: Path, content: str) -> bool:
    """Write `content` to `path` through a temporary file renamed into place; False if it was there."""
    if path.is_file() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(content, encoding="utf-8")
    os.replace(temporary, path)
    return True


# -- the class lock --------------------------------------------------------------------------------
@contextlib.contextmanager
def class_lock(db_url: str):
    """Held while a grader prepares the class in the gradebook (assignments, students, this table), so shards
    starting together never insert the same row twice: a PostgreSQL advisory lock, or for SQLite a lock file
    beside the database. Both are released by the server or the kernel if the grader dies holding them."""
    url = make_url(db_url)
    if url.get_backend_name() == "postgresql":
        engine = engine_for(db_url)
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": PG_LOCK_KEY})
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": PG_LOCK_KEY})
                connection.commit()
    elif url.get_backend_name() == "sqlite" and url.database:
        with open(f"{url.database}.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    else:  # another database: nbgrader's own constraints still refuse a duplicate row
        yield


_engines = {}


def engine_for(db_url: str):
    if db_url not in _engines:
        _engines[db_url] = create_engine(db_url, pool_pre_ping=True)
    return _engines[db_url]


def now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


# -- the ledger ------------------------------------------------------------------------------------
class Ledger:
    """The `grader_graded` table of one gradebook."""

    def __init__(self, db_url: str):
        self.db_url = db_url
        self.engine = engine_for(db_url)

    def create(self):
        """Create the table if missing (call under class_lock: two shards creating it at once may collide)."""
        metadata.create_all(self.engine, checkfirst=True)

    def shard_count(self, count: int) -> int:
        """The class's shard count: `count`, recorded if this is the class's first shard (call under class_lock);
        a different count than the one recorded is refused, since shares of different counts overlap."""
        recorded = self.recorded_shard_count()
        if recorded is None:
            with self.engine.begin() as connection:
                connection.execute(CLASS.insert().values(name="shards", value=str(count)))
            return count
        if recorded != count:
            raise CourseError(
                f"--shard K/{count}: this class is being graded in {recorded} shards (recorded when its first "
                f"shard started); run its shards as K/{recorded}, K from 0 to {int(recorded) - 1} (with Slurm: "
                f"export SHARDS={recorded}). `grade --finish` of the whole class clears the record.")
        return count

    def recorded_shard_count(self):
        """The shard count of the class being graded, or None (not sharded, or finished)."""
        with self.engine.connect() as connection:
            recorded = connection.execute(select(CLASS.c.value).where(CLASS.c.name == "shards")).scalar()
        return None if recorded is None else int(recorded)

    def forget_shard_count(self):
        """After the whole class is finished: a later round may shard it differently."""
        with self.engine.begin() as connection:
            connection.execute(CLASS.delete().where(CLASS.c.name == "shards"))

    def rows(self, pairs=None) -> dict:
        """(student, assignment) -> row, for `pairs` (all rows when None)."""
        with self.engine.connect() as connection:
            rows = {(row.student, row.assignment): row for row in connection.execute(select(GRADED))}
        return rows if pairs is None else {pair: rows[pair] for pair in pairs if pair in rows}

    def missing(self, pairs, digests: dict, source_digests: dict, feedback: bool) -> tuple:
        """Split `pairs` into (missing, {pair: Result of the done ones}); digests by pair, by assignment."""
        rows = self.rows()
        scores = gradebook_scores(self.db_url, {assignment for _, assignment in pairs})
        todo, done = [], {}
        for pair in pairs:
            row = rows.get(pair)
            if (row is None or row.state != "done" or row.submission_digest != digests[pair]
                    or row.source_digest != source_digests[pair[1]]
                    or (feedback and not row.error and not row.feedback)
                    or pair not in scores or abs(scores[pair] - (row.score or 0.0)) > 1e-9):
                todo.append(pair)
            else:
                done[pair] = result_of(row)
        return todo, done

    def start(self, student: str, assignment: str, graded_by: str):
        """Mark the submission as being graded (its old "done", if any, no longer counts)."""
        key = (GRADED.c.student == student) & (GRADED.c.assignment == assignment)
        with self.engine.begin() as connection:
            if connection.execute(select(GRADED.c.attempts).where(key)).first() is None:
                connection.execute(GRADED.insert().values(
                    student=student, assignment=assignment, state="grading", attempts=1, completions=0,
                    graded_by=graded_by, started_at=now()))
            else:
                connection.execute(GRADED.update().where(key).values(
                    state="grading", attempts=GRADED.c.attempts + 1, graded_by=graded_by, started_at=now()))

    def finish(self, result: Result, submission_digest: str, source_digest: str, autograded: dict, feedback):
        """Record the graded submission, in one transaction: from now on it counts as done."""
        key = (GRADED.c.student == result.student) & (GRADED.c.assignment == result.assignment)
        with self.engine.begin() as connection:
            connection.execute(GRADED.update().where(key).values(
                state="done", submission_digest=submission_digest, source_digest=source_digest,
                score=result.score, max_score=result.max_score, failed=json.dumps(result.failed),
                error=result.error, notes=json.dumps(result.notes), autograded=pack(autograded),
                feedback=pack(feedback), completions=GRADED.c.completions + 1, graded_at=now()))

    def export(self, workspace: Path) -> int:
        """Write every done submission's autograded notebooks and feedback pages into `workspace`;
        return how many files changed."""
        changed = 0
        with self.engine.connect() as connection:
            query = select(GRADED.c.student, GRADED.c.assignment, GRADED.c.autograded,
                           GRADED.c.feedback).where(GRADED.c.state == "done")
            for row in connection.execution_options(yield_per=50).execute(query):
                for kind, blob in (("autograded", row.autograded), ("feedback", row.feedback)):
                    for name, content in unpack(blob).items():
                        target = Path(workspace) / kind / row.student / row.assignment / Path(name).name
                        changed += write_if_changed(target, content)
        return changed


def result_of(row) -> Result:
    result = Result(row.student, row.assignment, row.score or 0.0, row.max_score or 0.0,
                    json.loads(row.failed or "[]"), row.error or "", json.loads(row.notes or "[]"))
    if row.started_at and row.graded_at:  # autograde and feedback, for the class report's timings
        result.seconds = (row.graded_at - row.started_at).total_seconds()
    return result


def gradebook_scores(db_url: str, assignments) -> dict:
    """(student, assignment) -> the score in nbgrader's gradebook, for every submission of `assignments`."""
    found = {}
    with Gradebook(db_url) as gradebook:
        for assignment in assignments:
            try:
                for submission in gradebook.find_assignment(assignment).submissions:
                    found[submission.student.id, assignment] = submission.score
            except MissingEntry:  # an assignment not in the gradebook yet: nothing of it is graded
                continue
    return found


def grader_id(shard=None) -> str:
    where = f"{socket.gethostname()}:{os.getpid()}"
    return f"{where} shard {shard[0]}/{shard[1]}" if shard else where
