"""Grade submissions with nbgrader's own apps: generate -> (zip_collect) -> autograde -> feedback -> export.

The other roles have their own subpackages: grader.intake (submissions in), grader.sandbox (the kernels),
grader.trusted (test cells decided in the grader), grader.feedback (the page), grader.outputs (results, grades.csv).
"""
import ctypes
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import nbformat
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from tqdm import tqdm

from grader.trusted import cell_outcome
from grader.sandbox import cgroups
from grader.course import (SOLUTIONS, CourseError, check_assignments, prepare_environment, workspace_config,
                           write_workspace_config)
from grader.feedback.feedback_summary import named_mistakes
from grader.running.grading_order import LongestFirst
from grader.outputs.gradebook import (Result, export_csv, failure_reason, read_result, record_ungradable,
                              register_students, summary_table)
from grader.intake.submissions import (TREE_LAYOUT, ZIP_LAYOUT, folders, student_folders, take_collected, take_submission,
                           take_tree, zips_by_assignment)
from grader.running.ledger import Ledger, class_lock, folder_digest, grader_id, in_shard, read_pages, result_of
from grader.intake.lms_archives import NOTES_FILE
from grader.limits import GradingLimits
from grader.sandbox.bubblewrap import THREAD_VARIABLES, sandbox_problem
from grader.authoring.samples import write_samples

# nbgrader 0.9 trips SQLAlchemy 2 autoflush warnings while autograding; they are harmless noise.
warnings.filterwarnings("ignore", module="nbgrader.api")

__all__ = ["Grader", "Result", "summary_table"]


class Grader:
    """One grading workspace: its own release copy, submitted/, autograded/, feedback/ and gradebook.

    `limits` override grader.limits.GradingLimits by name (memory_mb=4000, cell_seconds=60, ...; the
    assignment's own, course/<assignment>/assignment.toml, or the course config's otherwise); `workers` notebooks
    are graded at once (default: one per core), each kernel with cores // workers threads for NumPy and
    TensorFlow unless `threads` says otherwise. `db_url` puts the gradebook elsewhere, e.g. PostgreSQL
    for several graders (default: SQLite here). `exchange` is nbgrader's exchange root the workspace releases
    feedback to (the on-submit service, grader/running/on_submit.py; default: the workspace's own).
    """

    def __init__(self, workspace: Path, source: Path = SOLUTIONS, *, workers: int = None,
                 db_url: str = None, exchange: Path = None, **limits):
        prepare_environment()
        unknown = sorted(set(limits) - set(GradingLimits.class_trait_names(config=True)))
        if unknown:
            raise TypeError(f"unknown limits {', '.join(unknown)}; valid: "
                            f"{', '.join(GradingLimits.class_trait_names(config=True))}")
        self.workspace = Path(workspace).resolve()
        self.source = Path(source).resolve()
        self.workers = workers or os.cpu_count() or 1
        # Kernels graded side by side share the cores instead of each starting one thread per core.
        limits.setdefault("threads", max(1, (os.cpu_count() or 1) // self.workers))
        self.workspace.mkdir(parents=True, exist_ok=True)
        write_workspace_config(self.workspace, self.source, db_url)
        self.config = workspace_config(self.workspace, self.source, db_url)
        if exchange is not None:
            self.config.Exchange.root = str(Path(exchange).resolve())
        for name, value in limits.items():
            setattr(self.config.GradingLimits, name, value)
        self.limits = GradingLimits(config=self.config)
        if self.limits.sandbox:
            problem = sandbox_problem()
            if problem:
                raise CourseError(f"cannot grade safely: {problem}. To grade without a sandbox anyway "
                                  "(student code could then change grades), pass --unsafe-no-sandbox")
            if cgroups.problem():
                print(f"WARNING: {cgroups.problem()}", file=sys.stderr)
        self.settings = dict(limits)  # what each worker process is given
        self.config.SandboxedExecute.kernel_log_dir = str(self.workspace / "logs")
        self.api = NbGraderAPI(coursedir=CourseDirectory(config=self.config), config=self.config)
        self.db_url = self.config.CourseDirectory.db_url

    # -- steps -------------------------------------------------------------------------------
    def generate(self, assignment: str):
        outcome = self.api.generate_assignment(assignment, force=True, create=True)
        if not outcome["success"]:
            reason = outcome.get("error", outcome.get("log"))
            raise CourseError(f"nbgrader generate_assignment {assignment} failed:\n{reason}")

    def submitted_dir(self, student: str, assignment: str) -> Path:
        return self.workspace / "submitted" / student / assignment

    def take_tree(self, folder: Path, assignments: list) -> tuple:
        """Copy <folder>/<student>/<assignment>/ into the workspace (grader.intake.submissions: no link followed);
        return the (student, assignment) pairs and, by pair, the notes on what was left out."""
        return take_tree(folder, assignments, self.workspace / "submitted", self.config.CourseDirectory.max_file_size)

    def take_zips(self, folder: Path, assignments: list) -> tuple:
        """Put LMS zip downloads through `nbgrader zip_collect` (with grader/intake/lms_archives.py's extractor and
        collector), once per assignment they contain; then copy what it put in submitted/ again with
        grader.intake.submissions. Returns the pairs and the notes, as take_tree: a student whose uploads were all left
        out is graded as "notebook missing", with the notes saying which upload and why; uploads that name
        no valid student are listed for the instructor."""
        pairs, notes = [], {}
        zips = zips_by_assignment(folder, assignments, self.workspace / "zip_downloads")
        for assignment, archives in zips.items():
            downloaded = self.workspace / "downloaded" / assignment
            if downloaded.exists():
                shutil.rmtree(downloaded)
            (downloaded / "archive").mkdir(parents=True)
            for archive in archives:  # the grader's own copies (zips_by_assignment)
                shutil.copy(archive, downloaded / "archive" / archive.name)
            self.generate(assignment)  # zip_collect checks names against the released notebooks
            run = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--force"],
                                 cwd=self.workspace, capture_output=True, text=True)
            if run.returncode != 0:
                raise CourseError(f"nbgrader zip_collect {assignment} failed:\n{run.stderr[-2000:]}")
            submitted, max_kb = self.workspace / "submitted", self.config.CourseDirectory.max_file_size
            taken, taken_notes = take_collected(submitted, assignment, downloaded / "collected", max_kb)
            left_out = json.loads((downloaded / NOTES_FILE).read_text())
            for student, student_notes in sorted(left_out["by_student"].items()):
                if (student, assignment) not in taken_notes:
                    self.submitted_dir(student, assignment).mkdir(parents=True, exist_ok=True)
                    taken.append((student, assignment))
                taken_notes[student, assignment] = student_notes + taken_notes.get((student, assignment), [])
            for text in left_out["unattributed"]:
                print(f"Not graded ({assignment}): {text}", file=sys.stderr)
            pairs += taken
            notes.update(taken_notes)
        return pairs, notes

    def autograde(self, student: str, assignment: str, attempts: int = 5) -> Result:
        """nbgrader autograde for one submission, sandboxed and limited; retried if the gradebook is locked."""
        started = time.monotonic()
        for attempt in range(attempts):
            outcome = self.api.autograde(assignment, student, force=True, create=True)
            text = f"{outcome.get('error') or ''}{outcome.get('log') or ''}"
            if outcome["success"] or "database is locked" not in text:
                break
            time.sleep(1 + attempt)
        if not outcome["success"]:
            record_ungradable(self.db_url, student, assignment)
        result = self.read_result(student, assignment)
        result.notes += grading_notes(self.workspace / "autograded" / student / assignment)
        if not outcome["success"]:
            result.error = failure_reason(text)
            logs = sorted(p.name for p in (self.workspace / "logs").glob(f"{student}-{assignment}.*log"))
            if logs:
                result.error += f" (see logs/{', logs/'.join(logs)})"
        result.seconds = time.monotonic() - started  # for the class report
        return result

    def register_students(self, students):
        register_students(self.db_url, students)

    def feedback(self, student: str, assignment: str):
        self.api.generate_feedback(assignment, student, force=True)

    def name_mistakes(self, assignment: str):
        """Grade the named mistakes of `assignment` that are not cached yet (grader.feedback.mistakes), as the first
        feedback page would."""
        def log(message):
            print(message, file=sys.stderr)
        try:
            named_mistakes(self.config, assignment, self.db_url, log=log)
        except Exception as error:  # noqa: BLE001 (the feedback then names no mistake; grading goes on)
            log(f"named mistakes of {assignment} not graded: {type(error).__name__}: {error}"[:500])

    def read_result(self, student: str, assignment: str) -> Result:
        return read_result(self.db_url, student, assignment)

    def export(self, path: Path) -> Path:
        return export_csv(self.db_url, path)

    def prepare(self, assignments: list, students, shard: tuple = None) -> Ledger:
        """Generate the assignments into the gradebook, add every student of the class and the ledger tables,
        and with `shard` check its count against the class's, under the class lock: shards starting together
        would otherwise insert the same rows."""
        with class_lock(self.db_url):
            for assignment in assignments:
                self.generate(assignment)
            self.register_students(students)
            ledger = Ledger(self.db_url)
            ledger.create()
            if shard is not None:
                ledger.shard_count(shard[1])
        return ledger

    def feedback_path(self, student: str, assignment: str) -> Path:
        return self.workspace / "feedback" / student / assignment / f"{assignment}.html"

    # -- the whole run -----------------------------------------------------------------------
    def run(self, submissions: Path = None, assignments=(), progress: bool = True, feedback: bool = True,
            shard: tuple = None, regrade: bool = False) -> list:
        """Grade what is missing (everything with `regrade`) of the class in `submissions` (simulated students
        when None); with `shard` (K, N) only the K-th of N shares, and nothing is exported: `finish` does that
        once every shard is done. Returns a Result for every submission of the share, graded now or before."""
        chosen = check_assignments(assignments, self.source)
        with class_lock(self.db_url):  # the release copy is this workspace's; the gradebook's rows are shared
            for assignment in chosen:
                self.generate(assignment)
        if submissions is None:
            samples = self.workspace / "samples"
            if samples.exists():
                shutil.rmtree(samples)
            write_samples(self.workspace / "release", self.source, chosen, samples)
            pairs, notes, students = self.take_share(samples, chosen, shard)
        else:
            folder = Path(submissions)
            if not folder.is_dir():
                raise CourseError(f"Submissions folder {folder} does not exist")
            if not any(folder.iterdir()):
                raise CourseError(f"Submissions folder {folder} is empty: expected {TREE_LAYOUT} or {ZIP_LAYOUT}")
            if any(folder.glob("*.zip")):
                pairs, notes = self.take_zips(folder, chosen)
                students, pairs = {student for student, _ in pairs}, in_shard(pairs, shard)
            else:
                pairs, notes, students = self.take_share(folder, chosen, shard)
        results = self.grade_pairs(pairs, progress, feedback, regrade=regrade, students=students, shard=shard)
        for result in results:  # what intake left out (links, devices, files over the limits)
            result.notes = notes.get((result.student, result.assignment), []) + result.notes
        if shard is None:
            self.finish()
        return results

    def take_share(self, folder: Path, assignments: list, shard: tuple = None) -> tuple:
        """take_tree for the submissions of one shard: the others are listed (their students are registered)
        but not copied. Returns the pairs, the notes by pair and every student of the class."""
        if shard is None:
            pairs, notes = self.take_tree(folder, assignments)
            return pairs, notes, {student for student, _ in pairs}
        found = class_submissions(folder, assignments)
        if not found:  # take_tree names what it expected
            self.take_tree(folder, assignments)
        pairs, notes = in_shard(found, shard), {}
        max_kb = self.config.CourseDirectory.max_file_size
        for student, assignment in pairs:
            submitted = self.workspace / "submitted"
            notes[student, assignment] = take_submission(found[student, assignment], submitted, student,
                                                         assignment, max_kb)
        return pairs, notes, {student for student, _ in found}

    def grade_pairs(self, pairs: list, progress: bool = True, feedback: bool = True, regrade: bool = False,
                    students=None, shard: tuple = None) -> list:
        """Autograde (and write feedback for) each (student, assignment) not yet graded (all with `regrade`),
        `workers` at a time; the ones graded before keep their recorded result."""
        ledger = self.prepare([], set(students or ()) | {student for student, _ in pairs}, shard)
        digests = {pair: folder_digest(self.submitted_dir(*pair)) for pair in pairs}
        sources = {assignment: folder_digest(self.source / assignment) for _, assignment in pairs}
        if regrade:
            todo, done = list(pairs), {}
        else:
            todo, done = ledger.missing(pairs, digests, sources, feedback)
        jobs = [(student, assignment, feedback, digests[student, assignment], sources[assignment],
                 grader_id(shard)) for student, assignment in todo]
        # The feedback names typical mistakes: their catalogue is graded first, one assignment per worker,
        # rather than by a first feedback page while the other workers wait for it.
        named = sorted({assignment for _, assignment in todo}) if feedback else []
        bar = tqdm(total=len(jobs), desc="Grading", unit="notebook", disable=not progress)
        results = list(done.values())
        if self.workers <= 1 or len(jobs) <= 1:
            self.name_all_mistakes(named)
            for job in jobs:
                results.append(_grade_one(self, *job))
                bar.update()
        else:
            with self._pool() as pool:
                named = [pool.submit(_worker_name_mistakes, assignment) for assignment in named]  # queued first
                order, running = LongestFirst(jobs), {}

                def hand_out():
                    job = order.next()
                    if job is not None:
                        running[pool.submit(_worker_grade, *job)] = job
                for _ in range(self.workers):
                    hand_out()
                while running:
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        job, result = running.pop(future), future.result()
                        order.done(job[1], result.seconds)
                        results.append(result)
                        bar.update()
                        hand_out()
                for future in named:
                    future.result()
        bar.close()
        for result in results[len(done):]:
            result.graded_now = True
        return results

    def _pool(self) -> ProcessPoolExecutor:
        """`workers` processes, each with its own Grader of this workspace (see _start_worker)."""
        settings = (str(self.workspace), str(self.source), dict(self.settings, db_url=self.db_url), os.getpid())
        context = multiprocessing.get_context("spawn")  # no forked copies of zmq/SQLite handles
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker, initargs=settings)

    def name_all_mistakes(self, assignments: list):
        """name_mistakes for each of `assignments` (generated already), `workers` at a time: what an instructor
        runs once per assignment version, before the first class (`grade` does it otherwise)."""
        if self.workers <= 1 or len(assignments) <= 1:
            for assignment in assignments:
                self.name_mistakes(assignment)
            return
        with self._pool() as pool:
            list(pool.map(_worker_name_mistakes, assignments))

    def finish(self, submissions: Path = None, assignments=()) -> list:
        """The final step: grades.csv, the autograded notebooks and the feedback pages of the whole class,
        written from the gradebook's database (each file renamed into place). With `submissions`, first
        returns the submissions there that are not graded yet (a shard that has not finished), and then
        writes nothing."""
        ledger = Ledger(self.db_url)
        with class_lock(self.db_url):
            ledger.create()
        missing = []
        if submissions is not None and not any(Path(submissions).glob("*.zip")):
            chosen = check_assignments(assignments, self.source)
            rows = ledger.rows()
            missing = sorted(pair for pair in class_submissions(Path(submissions), chosen)
                             if pair not in rows or rows[pair].state != "done")
        if missing:  # a class half graded writes nothing: no grades.csv to be taken for the class's
            return missing
        ledger.export(self.workspace)
        temporary = self.export(self.workspace / ".grades.csv.tmp")
        os.replace(temporary, self.workspace / "grades.csv")
        ledger.forget_shard_count()
        return missing

    def class_results(self) -> list:
        """The recorded result of every graded submission in the gradebook (every shard's)."""
        return [result_of(row) for row in Ledger(self.db_url).rows().values() if row.state == "done"]

    def status(self) -> dict:
        """Submissions done and being graded (or that were, when their grader died), from the ledger."""
        counts = {}
        for row in Ledger(self.db_url).rows().values():
            counts[row.state] = counts.get(row.state, 0) + 1
        return counts


def class_submissions(folder: Path, assignments: list) -> dict:
    """(student, assignment) -> its folder, for every submission in a <student>/<assignment>/ tree, chosen as
    grader.intake.submissions.take_tree chooses them (a student folder that is a link stands for every assignment, and
    is never followed), without copying anything."""
    found = {}
    for student in student_folders(folder):
        if student.is_symlink():
            found.update({(student.name, assignment): Path(student.path) for assignment in assignments})
            continue
        for entry in folders(student.path):
            if entry.name in assignments:
                found[student.name, entry.name] = Path(entry.path)
    return found


def grading_notes(folder: Path) -> list:
    """What stopped the grading of a notebook early (its budget), from the autograded notebook."""
    notes = []
    for path in sorted(folder.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell_outcome.outcome(cell) == cell_outcome.BUDGET_SPENT:
                # The grader wrote this cell's only output: "not run: <why>".
                notes.append(f"grading stopped early: {cell.outputs[0].evalue.removeprefix('not run: ')}")
                return notes
    return notes


# Failures that grading again would repeat: the submission is done, with 0 and the reason.
FINAL_ERRORS = ("not a valid notebook (unreadable JSON)", "not a valid notebook", "notebook missing")


def _grade_one(grader: "Grader", student: str, assignment: str, feedback: bool, digest: str = "",
               source_digest: str = "", graded_by: str = "") -> Result:
    """Grade one submission and record it in the ledger as done, once its scores, autograded notebook and
    feedback exist (a grader killed before that leaves it missing, and the next run grades it again)."""
    ledger = Ledger(grader.db_url)
    ledger.start(student, assignment, graded_by)
    result = grader.autograde(student, assignment)
    if feedback and not result.error:
        grader.feedback(student, assignment)
    if result.error and result.error.split(" (see logs/")[0] not in FINAL_ERRORS:
        result.notes.append("not recorded as graded: the next run grades it again")
        return result
    names = [path.stem for path in (grader.workspace / "autograded" / student / assignment).glob("*.ipynb")]
    autograded = read_pages(grader.workspace / "autograded" / student / assignment, ".ipynb", names)
    pages = read_pages(grader.workspace / "feedback" / student / assignment, ".html", names)
    if not result.error and (not autograded or (feedback and len(pages) < len(names))):
        result.notes.append("its feedback could not be written; the next run grades it again")
        return result
    ledger.finish(result, digest, source_digest, autograded, pages if feedback and not result.error else None)
    return result


_worker_grader = None


def _die_with(parent: int):
    """A worker ends when the grader that started it does (PR_SET_PDEATHSIG): a grader killed by SIGKILL
    must not leave workers grading on beside the rerun that replaces it."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        return
    if os.getppid() != parent:  # the grader died before the call above
        os._exit(1)


def _start_worker(workspace: str, source: str, settings: dict, parent: int = None):
    """A worker process: its test cells (NumPy, TensorFlow) share the cores like its kernels do."""
    global _worker_grader
    if parent:
        _die_with(parent)
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, str(settings["threads"])))
    _worker_grader = Grader(Path(workspace), Path(source), workers=1, **settings)


def _worker_name_mistakes(assignment: str):
    _worker_grader.name_mistakes(assignment)


def _worker_grade(student: str, assignment: str, feedback: bool, digest: str = "", source_digest: str = "",
                  graded_by: str = "") -> Result:
    return _grade_one(_worker_grader, student, assignment, feedback, digest, source_digest, graded_by)
