"""The instructor's class report: where the class is stuck (report.html and report_*.csv in the workspace).

Read from what grading left behind (each autograded notebook's test cells, through
grader.feedback.feedback_summary.exercise_reports, and the results of the run), so it is the same whichever
gradebook (SQLite, PostgreSQL) holds the scores:
- per assignment, the score distribution (a histogram);
- per exercise, the mean and the share of students at full marks; per test, the failure rate;
- the named typical mistakes (grader.feedback.mistakes) ranked by how many students made them;
- groups of students whose wrong answer gave the same results on an exercise's tests (and whether their
  code is the same too): shared work, or a shared misconception worth a word in class;
- notebooks that timed out, crashed or could not be read; the grading time of each notebook goes to
  report_times.csv beside the page (the clock's, so the page is the same when the class is graded again).
One HTML page with its figures embedded as PNG, no scripts: it opens offline in any browser.
"""
import base64
import hashlib
import html
import io
import re
import statistics
from collections import defaultdict
from pathlib import Path

import nbformat

from grader.feedback import mistakes
from grader.trusted import cell_outcome
from grader.course import named_mistakes_dir
from grader.outputs.csv_cells import write_rows
from grader.feedback.feedback_summary import exercise_reports

CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}th{background:#f0f0f0}td.n{text-align:right}
h2{border-bottom:2px solid #444;padding-top:1em}img{max-width:100%}"""
# The report's word for each of the grader's outcomes of a cell.
PROBLEMS = {cell_outcome.TIMED_OUT: "timed out", cell_outcome.BUDGET_SPENT: "timed out",
            cell_outcome.CRASHED: "crashed", cell_outcome.NOT_RUN: "crashed"}


def _code_key(code: str) -> str:
    """A digest of an answer's code without comments and blank lines, to tell copied code from a shared
    mistake (a digest: the report keeps 64 characters per answer, whatever the size of the code)."""
    lines = [re.sub(r"#.*", "", line).rstrip() for line in code.splitlines()]
    return hashlib.sha256("\n".join(line for line in lines if line.strip()).encode()).hexdigest()


def notebook_problems(nb) -> list:
    """What stopped cells of a graded notebook: timeouts and budgets, kernel deaths (the grader's own record of
    each cell, grader.trusted.cell_outcome)."""
    found = []
    for cell in nb.cells:
        problem = PROBLEMS.get(cell_outcome.outcome(cell))
        if problem and problem not in found:
            found.append(problem)
    return found


def _histogram(scores: list, max_score: float, title: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 2.8))
    bins = max(1, min(20, int(max_score) or 1))
    axis.hist(scores, bins=bins, range=(0, max_score or 1), color="#3b6ea8", edgecolor="white")
    axis.set_xlabel("score")
    axis.set_ylabel("students")
    axis.set_title(title)
    axis.yaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def collect(workspace: Path, results: list, source: Path, mistakes_dir: Path = None) -> dict:
    """The report's tables, by assignment, from the results and the autograded notebooks."""
    by_assignment = defaultdict(list)
    for result in results:
        by_assignment[result.assignment].append(result)
    tables = {"assignments": {}, "notebooks": []}
    for assignment, graded in sorted(by_assignment.items()):
        source_nb = nbformat.read(Path(source) / assignment / f"{assignment}.ipynb", as_version=4)
        catalogue = mistakes.Catalogue(assignment, source_nb, mistakes_dir)
        titles = {r.grade_id: r.title for r in exercise_reports(source_nb, figures=False)}
        exercises, named, groups = {}, defaultdict(list), defaultdict(list)
        tests = defaultdict(lambda: [0, 0])  # (exercise, test) -> [graded, failed]
        for result in sorted(graded, key=lambda r: r.student):
            path = workspace / "autograded" / result.student / assignment / f"{assignment}.ipynb"
            problems = [result.error] if result.error else []
            if not result.error and path.is_file():
                nb = nbformat.read(path, as_version=4)
                problems += notebook_problems(nb)
                for report in exercise_reports(nb, figures=False):
                    row = exercises.setdefault(report.grade_id, {
                        "title": titles.get(report.grade_id, report.title), "points": report.points,
                        "scores": [], "status": defaultdict(int)})
                    row["scores"].append(report.score)
                    row["status"][report.status] += 1
                    failed = {f.test for f in report.failures}
                    for test in report.tests:
                        tests[(report.grade_id, test)][0] += 1
                        tests[(report.grade_id, test)][1] += test in failed
                    if report.status in ("failed", "error") and report.fingerprint:
                        names = catalogue.names_for(report.grade_id, report.fingerprint)
                        if names:  # mistakes that behave alike on every test are one row: "a or b"
                            named[(report.grade_id, tuple(names))].append(result.student)
                        groups[(report.grade_id, report.fingerprint)].append(
                            (result.student, _code_key(report.code), names))
            elif not result.error:
                problems.append("no autograded notebook")
            tables["notebooks"].append({
                "student": result.student, "assignment": assignment, "score": result.score,
                "max_score": result.max_score, "problems": "; ".join(problems),
                "seconds": round(getattr(result, "seconds", 0.0) or 0.0, 1)})
        tables["assignments"][assignment] = {
            "scores": [r.score for r in graded], "max_score": max((r.max_score for r in graded), default=0),
            "exercises": exercises,
            "tests": {key: value for key, value in tests.items()},
            "mistakes": sorted(((len(students), exercise, name, students)
                                for (exercise, name), students in named.items()),
                               key=lambda found: (-found[0], found[1], found[2])),
            "groups": [(exercise, members) for (exercise, _), members in groups.items() if len(members) > 1],
            "titles": titles,
        }
    return tables


def _table(header: list, rows: list, numeric=()) -> str:
    e = html.escape
    head = "".join(f"<th>{e(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f"<td class=n>{e(str(cell))}</td>" if i in numeric else f"<td>{e(str(cell))}</td>"
        for i, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" if rows else "<p>None.</p>"


def _rows(tables: dict) -> dict:
    """The report's tables as rows (the same rows go to the page and to the CSV files)."""
    rows = {"exercises": [], "tests": [], "mistakes": [], "groups": [], "notebooks": [], "times": []}
    for assignment, data in tables["assignments"].items():
        for grade_id, row in data["exercises"].items():
            scores = row["scores"]
            full = sum(score >= row["points"] for score in scores)
            share = f"{100 * full / len(scores):.0f}%"
            rows["exercises"].append([assignment, row["title"], row["points"],
                                      round(statistics.mean(scores), 2), share, len(scores),
                                      ", ".join(f"{k} {v}" for k, v in sorted(row["status"].items()))])
        for (exercise, test), (graded, failed) in data["tests"].items():
            rate = f"{100 * failed / graded:.0f}%"
            rows["tests"].append([assignment, exercise, test, graded, failed, rate])
        for count, exercise, name, students in data["mistakes"]:
            title = data["titles"].get(exercise, exercise)
            described = " or ".join(mistakes.describe(one) for one in name)
            rows["mistakes"].append([assignment, title, described, count, " ".join(students)])
        for exercise, members in data["groups"]:
            students = [m[0] for m in members]
            same_code = len({m[1] for m in members}) == 1
            names = sorted({mistakes.describe(n) for m in members for n in m[2]})
            rows["groups"].append([assignment, data["titles"].get(exercise, exercise), len(students),
                                   " ".join(students), "yes" if same_code else "no",
                                   "; ".join(names) or "(no named mistake)"])
    for row in sorted(tables["notebooks"], key=lambda r: (r["student"], r["assignment"])):
        score = f"{row['score']:g} / {row['max_score']:g}"
        rows["notebooks"].append([row["student"], row["assignment"], score, row["problems"] or "-"])
    rows["times"] = [[row["student"], row["assignment"], row["seconds"]]
                     for row in sorted(tables["notebooks"], key=lambda r: -r["seconds"])]
    return rows


HEADERS = {
    "exercises": ["assignment", "exercise", "points", "mean score", "at full marks", "students", "results"],
    "tests": ["assignment", "exercise", "test", "graded", "failed", "failure rate"],
    "mistakes": ["assignment", "exercise", "named mistake", "students", "who"],
    "groups": ["assignment", "exercise", "students", "who", "same code", "looks like"],
    "notebooks": ["student", "assignment", "score", "problems"],
    "times": ["student", "assignment", "grading seconds"],  # the clock's: beside the page, not on it
}


def write_report(workspace: Path, results: list, source: Path, mistakes_dir: Path = None) -> Path:
    """Write report.html and report_<table>.csv into `workspace`; return the page's path."""
    workspace = Path(workspace)
    tables = collect(workspace, results, source, mistakes_dir or named_mistakes_dir())
    rows = _rows(tables)
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Class report</title>"
             f"<style>{CSS}</style></head><body><h1>Class report</h1>"
             f"<p>{len(results)} notebooks graded. Each table is also in a CSV file beside this page "
             "(report_&lt;table&gt;.csv).</p>"]
    for assignment, data in tables["assignments"].items():
        scores = data["scores"]
        mean, median = statistics.mean(scores), statistics.median(scores)
        parts.append(f"<h2>{e(assignment)}</h2><p>{len(scores)} students, mean {mean:.2f} / "
                     f"{data['max_score']:g}, median {median:g}.</p>")
        image = _histogram(scores, data["max_score"], f"{assignment}: scores")
        parts.append(f"<img src=\"data:image/png;base64,{image}\" "
                     f"alt=\"score distribution of {e(assignment)}\">")
        for table, title, numeric in (("exercises", "Exercises", {2, 3, 5}), ("tests", "Tests", {3, 4, 5}),
                                      ("mistakes", "Named mistakes, most frequent first", {3}),
                                      ("groups", "Students whose wrong answers gave the same results", {2})):
            chosen = [row[1:] for row in rows[table] if row[0] == assignment]
            parts.append(f"<h3>{title}</h3>" + _table(HEADERS[table][1:], chosen, {i - 1 for i in numeric}))
    troubled = [row for row in rows["notebooks"] if row[3] != "-"]
    parts.append("<h2>Notebooks that timed out, crashed or could not be read</h2>"
                 + _table(HEADERS["notebooks"], troubled))
    parts.append("<h2>Grading time per notebook</h2><p>In report_times.csv beside this page, longest first: it "
                 "changes from run to run, so this page leaves it out and the same class graded again gives "
                 "the same page.</p>")
    parts.append("</body></html>")
    page = workspace / "report.html"
    page.write_text("".join(parts), encoding="utf-8")
    for table, table_rows in rows.items():
        write_rows(workspace / f"report_{table}.csv", [HEADERS[table], *table_rows])
    return page


def results_from_gradebook(db_url: str) -> list:
    """A Result for every submission in the gradebook (a class graded from the Formgrader, or by shards)."""
    from nbgrader.api import Gradebook

    from grader.outputs.gradebook import read_result
    with Gradebook(db_url) as gradebook:
        pairs = [(submission.student.id, assignment.name) for assignment in gradebook.assignments
                 for submission in gradebook.assignment_submissions(assignment.name)]
    return [read_result(db_url, student, assignment) for student, assignment in pairs]


def main(argv=None) -> int:
    """python -m grader.outputs.class_report [COURSE_DIR]: the report of a course directory graded with the
    Formgrader (autograded/ and the gradebook there), or of a `grade` workspace."""
    import argparse

    from grader.course import SOLUTIONS
    parser = argparse.ArgumentParser(prog="python -m grader.outputs.class_report",
                                     description=main.__doc__.split(": ", 1)[1])
    parser.add_argument("course", nargs="?", type=Path, default=Path.cwd(),
                        help="the course directory (default: here)")
    parser.add_argument("--db-url", default=None, help="the gradebook (default: COURSE/gradebook.db)")
    parser.add_argument("--source", type=Path, default=None,
                        help="the source notebooks (default: COURSE/source if it exists, else solutions/)")
    args = parser.parse_args(argv)
    db_url = args.db_url or f"sqlite:///{(args.course / 'gradebook.db').resolve()}"
    source = args.source or (args.course / "source" if (args.course / "source").is_dir() else SOLUTIONS)
    print(f"class report: {write_report(args.course, results_from_gradebook(db_url), source)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
