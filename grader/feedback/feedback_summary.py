"""The top of every feedback page: what to do next, exercise by exercise (GenerateFeedback preprocessor).

Everything is read from the autograded notebook itself (its test cells' outputs, nbgrader's metadata
and scores), so `grade` and the Formgrader's Generate Feedback give the same page:
- one row per exercise: its title as the notebook gives it, points, passed / failed / not run / error;
- for each failed test, the check's own message (what was checked, expected, got, the hint); for a
  hidden test the expected part is left out, here and in the notebook below;
- errors raised by the student's code with their traceback cut to the student's own lines;
- "this looks like: <named mistake>" when the exercise's tests answered exactly as one of the named
  typical mistakes of course/<assignment>/answers.py did (grader.feedback.mistakes);
- for a failed visible check of attention weights, the student's weights beside the expected ones
  (attention_course.heatmaps.plot_attention), drawn from the numbers the message carries.
It is one markdown cell of plain HTML (tables, text, embedded PNG) placed first, before
SanitiseFeedback, which passes it through the same allow-list as everything else.
"""
import ast
import base64
import html
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Enum, Unicode, default

from attention_course import dependencies
from grader.limits import FIXED
from grader.feedback import mistakes
from grader.trusted import cell_outcome
from grader.course import named_mistakes_dir, nbgrader_meta
from grader.feedback.sanitise_feedback import GRADER_SUMMARY

HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "# (hidden tests: their code is not shown)")
# attention_course.checks' failures: "<what>: expected <expected>, got <got>. Hint: <hint>"
CHECK = re.compile(r"^(?P<what>.*?): expected (?P<expected>.*), got (?P<got>.*?)\.(?P<hint> Hint: .*)?$",
                   re.S)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STUDENT_FILE = re.compile(r'File "(/tmp/ipykernel_[^"]*|<ipython-input[^"]*)"|^Cell In\[', re.M)
EXERCISE_HEADING = re.compile(r"^\s*#{0,6}\s*(Exercise\b.*)$", re.M)
HIDDEN_NOTE = "the expected value of a hidden test is not shown"


@dataclass
class Failure:
    test: str  # grade_id of the test cell
    hidden: bool
    message: str  # what the student may see
    traceback: str = ""  # the student's own lines, if their code raised
    figure: str = ""  # base64 PNG: the student's weights beside the expected ones (visible tests only)


@dataclass
class Exercise:
    grade_id: str
    title: str
    points: float = 0.0
    score: float = 0.0
    status: str = "passed"  # passed, failed, not run, error
    reason: str = ""
    failures: list = field(default_factory=list)
    tests: list = field(default_factory=list)  # grade_ids of its test cells
    fingerprint: str = ""  # grader.feedback.mistakes.fingerprint of its test cells ('' when all passed)
    code: str = ""  # the student's answer
    mistakes: list = field(default_factory=list)  # names of the typical mistakes it behaves like


def is_hidden(cell) -> bool:
    return any(marker in cell.source for marker in HIDDEN_MARKERS)


def cell_score(cell) -> float:
    """nbgrader's score of a test cell: its points unless it has an error output or wrote to stderr."""
    meta = nbgrader_meta(cell)
    if isinstance(meta.get("score"), (int, float)):
        return float(meta["score"])
    outputs = cell.get("outputs", [])
    failed = any(o.get("output_type") == "error"
                 or (o.get("output_type") == "stream" and o.get("name") == "stderr") for o in outputs)
    return 0.0 if failed else float(meta.get("points", 0))


def student_lines(text: str) -> str:
    """A traceback cut to the frames in the student's own cells, and the exception line(s) at its end."""
    text = ANSI.sub("", text).strip()
    if not text:
        return ""
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith(("  File ", "File ", "Cell In[")) and current:
            blocks.append(current)
            current = []
        current.append(line)
    blocks.append(current)
    *frames, last = blocks
    kept = [block for block in frames if STUDENT_FILE.search(block[0])]
    tail = [line for line in last if not line.startswith("Traceback (most recent call last)")]
    if tail and tail[0].startswith(("  File ", "File ", "Cell In[")) and not STUDENT_FILE.search(tail[0]):
        tail = [line for line in tail[1:] if not line.startswith("    ")]  # a library's frame: only its end
    lines = [line for block in kept for line in block if line.strip() != "^" * len(line.strip())] + tail
    return "\n".join(line for line in lines if line.strip())[-3000:]


def shown_message(ename: str, evalue: str, hidden: bool, stopped: bool = False) -> tuple:
    """(the message the student may see, their traceback) of one failed test cell; `stopped` when the grader
    stopped or skipped the cell (grader.trusted.cell_outcome), whose message is the grader's own."""
    message, _, trace = str(evalue).partition(mistakes._RAISED_IN)
    message = message.strip()
    if not hidden or stopped:
        return f"{ename}: {message}" if ename != "AssertionError" else message, student_lines(trace)
    check = CHECK.match(message)
    if ename == "AssertionError" and check:
        shown = f"{check['what']}: expected ({HIDDEN_NOTE}), got {check['got']}.{check['hint'] or ''}"
    elif ename == "AssertionError" and " raised " in message.split(":")[0] and trace:
        shown = message  # check_call: the student's exception, in their words
    elif ename == "AssertionError" and message.startswith("ran ") and "checks" in message:
        shown = message  # grader.trusted.check_coverage: how many checks ran
    elif ename != "AssertionError" and trace:
        shown = f"{ename}: {message}"  # raised by the student's code
    else:
        shown = f"{ename} in a hidden check (its message is not shown: it may hold the expected values)"
    return shown, student_lines(trace)


def _title(nb, answer_index: int, grade_id: str) -> str:
    for cell in reversed(nb.cells[:answer_index]):
        if cell.cell_type == "markdown":  # markdown, or HTML already (c.HTMLExporter.preprocessors)
            found = EXERCISE_HEADING.search(html.unescape(re.sub(r"<[^>]+>", "", cell.source)))
            if found:
                return found.group(1).replace("`", "").strip()
    return grade_id


def exercise_reports(nb, figures: bool = True) -> list:
    """One Exercise per answer cell of an autograded notebook (see the module's docstring); `figures`: draw
    the weights of failed checks (the page shows them, the class report does not)."""
    reports = []
    for grade_id, (answer, _, tests) in mistakes.exercise_layout(nb).items():
        answer_cell = nb.cells[answer]
        report = Exercise(grade_id, _title(nb, answer, grade_id), code=answer_cell.source)
        test_cells = [nb.cells[i] for i in tests]
        report.tests = [nbgrader_meta(c)["grade_id"] for c in test_cells]
        report.points = sum(float(nbgrader_meta(c).get("points", 0)) for c in test_cells)
        report.score = sum(cell_score(c) for c in test_cells)
        report.fingerprint = mistakes.fingerprint(test_cells)
        answer_errors = [o for o in answer_cell.get("outputs", []) if o.get("output_type") == "error"]
        enames, outcomes = set(), {cell_outcome.outcome(c) for c in test_cells}
        for cell in test_cells:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if not errors and cell_score(cell) >= float(nbgrader_meta(cell).get("points", 0)):
                continue
            error = errors[0] if errors else {"ename": "Error", "evalue": "the test wrote to stderr"}
            enames.add(error.get("ename", ""))
            message, trace = shown_message(error.get("ename", ""), error.get("evalue", ""), is_hidden(cell),
                                           stopped=bool(cell_outcome.outcome(cell)))
            failure = Failure(nbgrader_meta(cell)["grade_id"], is_hidden(cell), message, trace)
            if figures and not failure.hidden:
                failure.figure = weights_figure(message)
            report.failures.append(failure)
        raised = " ".join(f.message for f in report.failures)
        if not report.failures:
            report.status = "passed"
        elif outcomes & cell_outcome.STOPPED_EARLY:
            report.status = "not run"
            report.reason = "the notebook's grading budget ran out, or its kernel kept dying"
        elif mistakes.NOT_ANSWERED in raised or any(mistakes.NOT_ANSWERED in str(o.get("ename"))
                                                    for o in answer_errors):
            report.status = "not run"
            report.reason = "not answered yet: the answer still raises NotImplementedError"
        elif answer_errors:
            error = answer_errors[0]
            report.status = "error"
            report.reason = student_lines("\n".join(error.get("traceback") or [])) or \
                f"{error.get('ename')}: {error.get('evalue')}"
        elif enames - {"AssertionError"} or any(f.traceback for f in report.failures):
            report.status = "error"
        else:
            report.status = "failed"
        reports.append(report)
    return reports


# -- pictures --------------------------------------------------------------------------------------
_ARRAY_GAP = re.compile(r"(?<=[0-9.\]nf])\s+(?=[-+0-9.\[ni])")
# A weights figure is drawn for small arrays only: a tick per row and column, so its cost grows with them,
# and the message it is read from may be the student's own.
MAX_FIGURE_SIDE = FIXED["figure_side"].value
MAX_FIGURE_MESSAGE = FIXED["figure_message_characters"].value


def parse_array(text: str):
    """An array printed by NumPy (np.array2string) back into numbers, or None."""
    text = text.strip()
    if not text.startswith("["):
        return None
    listed = _ARRAY_GAP.sub(", ", text.replace("\n", " "))
    listed = re.sub(r"\bnan\b", "None", re.sub(r"-?\binf\b", "None", listed))
    try:
        value = ast.literal_eval(listed)
        array = np.array(value, dtype=float)
    except (ValueError, SyntaxError, TypeError):
        return None
    return array


def weights_figure(message: str) -> str:
    """A PNG (base64) of the student's attention weights beside the expected ones, when `message` is a
    failed check of weights that prints both as small arrays; '' otherwise."""
    check = CHECK.match(message) if len(message) <= MAX_FIGURE_MESSAGE else None
    if not check or "weight" not in check["what"].lower():
        return ""
    expected, got = parse_array(check["expected"]), parse_array(check["got"])
    if expected is None or got is None or expected.shape != got.shape:
        return ""
    while expected.ndim > 2 and expected.shape[0] == 1:
        expected, got = expected[0], got[0]
    if expected.ndim == 1:
        expected, got = expected[None], got[None]
    if expected.ndim != 2 or max(expected.shape) > MAX_FIGURE_SIDE or np.isnan(expected).any():
        return ""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attention_course.heatmaps import plot_attention
    rows, cols = expected.shape
    figure, axes = plt.subplots(1, 2, figsize=(min(2.6 + 0.8 * cols, 6.5) * 2, min(1.8 + 0.6 * rows, 6)))
    queries, keys = [f"q{i}" for i in range(rows)], [f"k{j}" for j in range(cols)]
    plot_attention(np.nan_to_num(got, nan=0.0), queries, keys, ax=axes[0], title="your weights")
    plot_attention(expected, queries, keys, ax=axes[1], title="expected weights")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=70)  # at most 910 pixels wide
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


# -- the page ------------------------------------------------------------------------------------
STATUS = {"passed": "✔ passed", "failed": "✘ failed", "not run": "– not run", "error": "⚠ error"}


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def summary_html(reports: list, score: float = None, max_score: float = None, withheld: bool = False) -> str:
    """The summary as one line of plain HTML (see the module's docstring); `withheld`: hidden tests' results
    are not on the page yet (withhold_hidden_results)."""
    e = html.escape
    parts = ["<h2>What to do next</h2>"]
    todo = [r for r in reports if r.status != "passed"]
    if withheld:
        parts.append(f"<p><strong>Visible tests: {score:g} / {max_score:g} points.</strong> {HIDDEN_LATER} "
                     + (f"{len(todo)} of {len(reports)} exercises fail a visible test; each is explained below."
                        if todo else "Every exercise passes its visible tests.") + "</p>")
    elif score is not None and max_score is not None:
        parts.append(f"<p><strong>Score: {score:g} / {max_score:g}</strong>. "
                     + (f"{len(todo)} of {len(reports)} exercises need work; each is explained below."
                        if todo else "Every exercise passed its tests.") + "</p>")
    rows = "".join(
        f"<tr><td>{e(r.title)}</td><td>{r.score:g} / {r.points:g}</td><td>{STATUS[r.status]}</td></tr>"
        for r in reports)
    gap = "&nbsp;" * 3  # no styles pass the sanitiser: spaces keep the columns apart
    rows = rows.replace("</td><td>", f"{gap}</td><td>")
    parts.append(f"<table><thead><tr><th>exercise{gap}</th><th>points{gap}</th><th>result</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
    for report in todo:
        parts.append(f"<h3>{e(report.title)}: {STATUS[report.status]}</h3>")
        if report.reason:
            parts.append(_pre(report.reason) if "\n" in report.reason or "Error" in report.reason
                         else f"<p>{e(report.reason)}</p>")
        if report.mistakes:
            names = [mistakes.describe(name) for name in report.mistakes]
            looks = " or ".join(names)  # mistakes that behave alike on every test
            parts.append(f"<p><strong>This looks like: {e(looks)}</strong> (a typical mistake: your answer "
                         "gives the same results as it on this exercise's tests).</p>")
        if report.status == "not run":
            continue
        items = []
        for failure in report.failures:
            kind = "hidden test" if failure.hidden else "visible test"
            item = (f"<li><a href=\"#{e(failure.test)}\">{kind} <code>{e(failure.test)}</code></a>: "
                    f"{e(failure.message)}")
            if failure.traceback:
                item += "<br>Raised in your code:" + _pre(failure.traceback)
            if failure.figure:
                item += (f"<br><img src=\"data:image/png;base64,{failure.figure}\" "
                         f"alt=\"your attention weights beside the expected ones\">")
            items.append(item + "</li>")
        parts.append(f"<ul>{''.join(items)}</ul>")
    parts.append("<hr>")
    return "".join(parts).replace("\n", "&#10;")


HIDDEN_LATER = ("Hidden tests ran too; their results and your score are shown after the deadline, on the page "
                "of the attempt that counts.")
VISIBLE_TEST = re.compile(r"""\btesting\(\s*["'](?P<exercise>\w+)["']""")


def withhold_hidden_results(nb, reports: list) -> tuple:
    """Feedback before the deadline (the on-submit service's "visible" policy): the page keeps what the
    student's own kernel tells them and nothing that depends on a hidden test. Each exercise keeps its
    visible tests' results; its hidden test cells lose their outputs, points and score; a named mistake is
    one a failing visible test names in the student's kernel (attention_course.dependencies.mistake_note),
    never one matched on hidden results. Returns the visible score and points."""
    hidden_ids = set()
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution") and is_hidden(cell):
            hidden_ids.add(meta.get("grade_id"))
            cell.source = "# Hidden tests: their results are shown after the deadline."
            cell.outputs = []
            cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True,
                                         "grade_id": meta.get("grade_id")}
    visible_cells = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells
                     if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")}
    score = points = 0.0
    for report in reports:
        report.failures = [failure for failure in report.failures if not failure.hidden]
        report.tests = [test for test in report.tests if test not in hidden_ids]
        cells = [visible_cells[test] for test in report.tests if test in visible_cells]
        report.points = sum(float(nbgrader_meta(c).get("points", 0)) for c in cells)
        report.score = sum(cell_score(c) for c in cells)
        report.fingerprint = ""
        report.mistakes = _visible_names(cells)
        if report.status in ("failed", "error") and not report.failures and not report.reason:
            report.status = "passed"
        score, points = score + report.score, points + report.points
    return score, points


def _visible_names(cells) -> list:
    """The names the student's kernel gives the failures of these visible test cells."""
    names = []
    for cell in cells:
        found = VISIBLE_TEST.search(cell.source)
        for output in cell.get("outputs", []) if found else []:
            if output.get("output_type") == "error":
                error = type(str(output.get("ename") or "Error"), (Exception,), {})(str(output.get("evalue", "")))
                note = dependencies.mistake_note(found["exercise"], error)
                names += [name for name in note.removeprefix("This looks like: ").rstrip(".").split(" or ")
                          if note and name not in names]
    return names


def named_mistakes(config, assignment: str, db_url: str = None, log=print) -> "mistakes.Catalogue":
    """The named mistakes of `assignment` under the course `config`, fingerprinting the ones not cached yet."""
    course = CourseDirectory(config=config)
    root = Path(course.root)
    cache = Path(FeedbackSummary(config=config).mistakes_dir)  # shipped with the course, current after a release
    if not os.access(cache if cache.exists() else cache.parent, os.W_OK):  # e.g. the course image, read-only
        source_nb = nbformat.read(root / course.source_directory / assignment / f"{assignment}.ipynb", as_version=4)
        if mistakes.Catalogue(assignment, source_nb, cache).missing():  # stale for this notebook: graded elsewhere
            cache = root / "named_mistakes"  # the instructor's course directory (the classroom)
    found = mistakes.fingerprint_mistakes(config, db_url or course.db_url, assignment, root / course.source_directory,
                                          root / course.release_directory, cache, log=log)
    if not found.mistakes and not found.current and found.path.is_file():  # no answers here to rebuild it from
        log(f"{found.path} was made for another version of {assignment}'s notebook, so the feedback names no "
            f"mistakes; rebuild it where the answers are (python -m grader mistakes {assignment}) and ship it")
    return found


class FeedbackSummary(NbGraderPreprocessor):
    """Puts the summary first and leaves hidden tests' expected values out of the page (run after GetGrades,
    before SanitiseFeedback)."""

    mistakes_dir = Unicode(help="Where grader.feedback.mistakes keeps the fingerprints of named mistakes "
                                "(default: course/named_mistakes)").tag(config=True)
    hidden_results = Enum(["shown", "withheld"], "shown", help="withheld: the page shows the visible tests' "
                          "results only (the on-submit service before the deadline, grader/running/on_submit.py)"
                          ).tag(config=True)

    @default("mistakes_dir")
    def _shipped_mistakes(self):
        return str(named_mistakes_dir())

    def preprocess(self, nb, resources):
        reports = exercise_reports(nb)
        catalogue = self._catalogue(resources)
        for report in reports:
            if catalogue is not None and report.status in ("failed", "error"):
                report.mistakes = catalogue.names_for(report.grade_id, report.fingerprint)
        self._tidy_outputs(nb)
        info = resources.get("nbgrader", {})
        score, max_score = info.get("score"), info.get("max_score")
        withheld = self.hidden_results == "withheld"
        if withheld:
            score, max_score = withhold_hidden_results(nb, reports)
            info.update(score=score, max_score=max_score, hidden_withheld=True)  # the page's header
        numbers = all(isinstance(v, (int, float)) for v in (score, max_score))
        cell = nbformat.v4.new_markdown_cell(summary_html(reports, *((score, max_score) if numbers else ()),
                                                          withheld=withheld))
        nb.cells.insert(0, cell)
        resources[GRADER_SUMMARY] = cell.source  # the sanitiser's allowance is for student content
        return nb, resources

    def _catalogue(self, resources):
        """The assignment's named mistakes; graded by the first feedback that needs them unless `grade` graded
        them before the class (Grader.name_mistakes), then cached."""
        info = resources.get("nbgrader", {})
        assignment = info.get("assignment")
        try:
            return named_mistakes(self.config, assignment, info.get("db_url"), log=self.log.info)
        except (OSError, TypeError, ValueError) as error:
            self.log.warning("No named mistakes for %s: %s", assignment, error)
            return None

    @staticmethod
    def _tidy_outputs(nb):
        """In the notebook below the summary too: hidden tests' expected values left out, and the student's
        traceback in a test's failure cut to their own lines."""
        for cell in nb.cells:
            meta = nbgrader_meta(cell)
            if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
                continue
            hidden = is_hidden(cell)
            for output in cell.get("outputs", []):
                if output.get("output_type") != "error":
                    continue
                ename, evalue = output.get("ename", ""), str(output.get("evalue", ""))
                message, _, trace = evalue.partition(mistakes._RAISED_IN)
                if hidden:
                    message, trace = shown_message(ename, evalue, True, stopped=bool(cell_outcome.outcome(cell)))
                    message = message[len(ename) + 2:] if message.startswith(f"{ename}: ") else message
                else:
                    trace = student_lines(trace)
                output.evalue = message.strip() + (f"\n{mistakes._RAISED_IN}\n{trace}" if trace else "")
                frames = [] if hidden else list(output.get("traceback") or [])[:-1]
                output.traceback = frames + [f"{ename}: {output.evalue}"]
