"""A whole term in the classroom, in a real browser (headless system Chromium, one browser context per person).

The instructor releases 02_three_stage_attention from the Formgrader; two students log in to the hub,
fetch it from their Assignments list, solve it (one fully, one half) and submit; the instructor collects,
autogrades each submission from the Formgrader (the course's sandboxed grading, as `python -m grader
grade`), generates and releases feedback; each student fetches the feedback and sees their own score.
A student cannot open the instructor's server, the Formgrader, or another student's files. At the end,
Ctrl-C (SIGINT to `python -m classroom`) stops the hub, every server and the proxy.

The answers are written into each student's notebook through that student's own server (the contents
API, with the student's token); typing answers into JupyterLab is what tests/browser/test_student_path.py
covers. Screenshots of every step go to test-artifacts/browser/classroom_term/.
"""
import re
import socket
import time
from contextlib import contextmanager

import nbformat
import pytest
from nbgrader.api import Gradebook

from classroom.layout import user_processes
from grader.authoring.samples import fill_answers, nbgrader_meta
from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS, INSTALL_HINT, Shots, menu, open_notebook, run_all_and_wait
from tests.classroom.hub import COURSE_ID

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.classroom]

ASSIGNMENT = "02_three_stage_attention"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"


class UserServer:
    """One person's server behind the hub, shaped like tests.browser.lab.JupyterLab for its helpers."""

    def __init__(self, hub, user):
        self.hub, self.user = hub, user
        self.base = f"{hub.url}/user/{user}"

    def url(self, path: str = "lab") -> str:
        return f"{self.base}/{path.lstrip('/')}"

    def api(self, path: str, method: str = "GET", body=None):
        return self.hub.as_user(self.user, f"api/{path}", method, body)

    def kernels_idle(self) -> bool:
        return all(k.get("execution_state") == "idle" for k in self.api("kernels"))


@contextmanager
def chromium(shots):
    """The system Chromium, headless; on a failure every open page is saved as NN_FAILED_<n>.png."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        except BaseException:
            for n, page in enumerate(p for context in browser.contexts for p in context.pages):
                shots(page, f"FAILED_{n}")
            raise
        finally:
            browser.close()


def log_in(browser, hub, user: str, shots):
    """A fresh browser context (its own cookies) that logs in on the hub's page and waits for JupyterLab."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(180_000)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.room.passwords[user])
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf".*/user/{re.escape(user)}/lab.*"), timeout=600_000)
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Nbgrader')").wait_for(timeout=300_000)
    shots(page, f"{user}_logged_in")
    return page


def nbgrader_menu_commands(page, shots, user: str) -> list:
    """The commands the Nbgrader menu shows (entries of plugins that are switched off are hidden)."""
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Nbgrader')").click()
    items = page.locator(".lm-Menu:visible li[data-command]")
    items.first.wait_for()
    shots(page, f"{user}_nbgrader_menu")
    commands = [items.nth(i).get_attribute("data-command") for i in range(items.count()) if items.nth(i).is_visible()]
    page.keyboard.press("Escape")
    return commands


# -- the instructor's Formgrader -------------------------------------------------------------------

def open_formgrader(page):
    menu(page, "Nbgrader", "nbgrader:open-formgrader")
    frame = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
    frame.locator("#main-table tr:has(td.name a)").first.wait_for(timeout=180_000)
    return frame


def formgrader_action(frame, link, what: str, done, timeout: float = 600, click_again_after: float = None):
    """Click a Formgrader action and wait for its modal, close it, fail with an error modal's text. On a loaded
    machine the Formgrader can re-render its page before the modal shows; then `done()`, the action's effect on
    disk, says it finished. It can also re-render as the click lands, which then does nothing: an action that
    may run twice (`click_again_after` seconds without a modal or an effect) is clicked once more."""
    link.click()
    modal = frame.locator("#success-modal.in, #error-modal.in").first
    started = time.monotonic()
    deadline, effect_seen = started + timeout, None
    while time.monotonic() < deadline:
        if modal.count():
            time.sleep(0.5)  # the fade-in, for the screenshot
            ok, text = modal.get_attribute("id") == "success-modal", modal.inner_text()
            assert ok, f"Formgrader: {what} failed:\n{text[:3000]}"
            frame.locator(".modal.in .modal-footer button").first.click()
            frame.locator(".modal-backdrop").wait_for(state="detached")
            return
        if effect_seen is None and done():
            effect_seen = time.monotonic()
        if effect_seen is not None and time.monotonic() - effect_seen > 45:
            return  # done on disk, and no modal in 45 s: the page was re-rendered without one
        if click_again_after is not None and effect_seen is None and time.monotonic() - started > click_again_after:
            link.click()  # a locator: found again on the page as it is now
            click_again_after = None
        time.sleep(0.5)
    raise AssertionError(f"Formgrader: {what} showed no result and had no effect within {timeout:.0f} s")


def assignment_row(frame):
    frame.locator("a:text-is('Manage Assignments')").click()
    row = frame.locator(f"#main-table tr:has(td.name a:text-is('{ASSIGNMENT}'))")
    row.wait_for(timeout=60_000)
    return row


# -- a student's Assignments list -------------------------------------------------------------------

def open_assignments(page):
    menu(page, "Nbgrader", "nbgrader:open-assignment-list")
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for()
    return panel


def click_in_list(page, panel, list_id: str, label: str, then: str, timeout: float = 180):
    """Click the `label` button of the assignment in one of the lists; wait until `then` shows it."""
    row = panel.locator(f"#{list_id} .list_item:has-text('{ASSIGNMENT}')")
    button = row.locator(f"button:text-is('{label}')")
    button.wait_for(timeout=timeout * 1000)
    button.click()
    panel.locator(f"#{then} .list_item:has-text('{ASSIGNMENT}')").first.wait_for(timeout=timeout * 1000)


def score_in_feedback(text: str):
    found = re.search(rf"{ASSIGNMENT} \(Score: ([\d.]+) / ([\d.]+)\)", text)
    assert found, f"no score in the feedback page: {text[:500]}"
    return float(found.group(1)), float(found.group(2))


PROBE = '''import os
for label, path in {targets!r}:
    try:
        found = os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(16)
        print(label, "OPENED", found)
    except OSError as error:
        print(label, "refused:", type(error).__name__)
'''


def test_a_term_release_fetch_submit_collect_grade_feedback(start_classroom, shots_term):
    shots = shots_term
    hub = start_classroom("crt-", students=2)
    room = hub.room
    instructor, (ada, bob) = room.instructor, room.students
    started = time.monotonic()
    source = nbformat.read(room.course_dir / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    total = sum(nbgrader_meta(c).get("points", 0) for c in source.cells if nbgrader_meta(c).get("grade"))
    fractions = {ada: 1.0, bob: 0.5}

    with chromium(shots) as browser:
        # The instructor logs in: the Nbgrader menu has the Formgrader; generate and release from it.
        teacher = log_in(browser, hub, instructor, shots)
        assert "nbgrader:open-formgrader" in nbgrader_menu_commands(teacher, shots, instructor)
        assert teacher.locator(".nbgrader-CreateAssignmentWidget").count() == 1, "no Create Assignment for the instructor"
        frame = open_formgrader(teacher)
        shots(teacher, "formgrader_assignments")
        row = assignment_row(frame)
        released = room.course_dir / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        formgrader_action(frame, row.locator("td.assign a"), "generate", released.is_file)
        outbound = room.exchange / COURSE_ID / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        formgrader_action(frame, row.locator("td.release a"), "release", outbound.is_file)
        row.locator("td.status:has-text('released')").wait_for()
        shots(teacher, "released")
        assert (room.exchange / COURSE_ID / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

        # Each student logs in, sees no instructor tool, fetches, solves (ada all, bob half) and submits.
        pages = {}
        for student in (ada, bob):
            page = pages[student] = log_in(browser, hub, student, shots)
            commands = nbgrader_menu_commands(page, shots, student)
            assert "nbgrader:open-assignment-list" in commands
            assert "nbgrader:open-formgrader" not in commands, f"{student} sees the Formgrader in the menu: {commands}"
            assert page.locator(".nbgrader-CreateAssignmentWidget").count() == 0, f"{student} sees Create Assignment"
            panel = open_assignments(page)
            shots(page, f"{student}_assignments_released")
            click_in_list(page, panel, "released_assignments_list", "Fetch", then="fetched_assignments_list")
            shots(page, f"{student}_fetched")
            server = UserServer(hub, student)
            fetched = nbformat.from_dict(server.api(f"contents/{NOTEBOOK}")["content"])
            solved = fill_answers(fetched, source, fractions[student])
            server.api(f"contents/{NOTEBOOK}", "PUT", {"type": "notebook", "format": "json", "content": solved})
            notebook = open_notebook(page, server, NOTEBOOK, cells=len(solved.cells))
            notebook.locator(".jp-Cell").nth(0).scroll_into_view_if_needed()
            shots(page, f"{student}_solved_notebook")
            panel = open_assignments(page)
            click_in_list(page, panel, "fetched_assignments_list", "Submit", then="submitted_assignments_list")
            shots(page, f"{student}_submitted")
        inbound = room.exchange / COURSE_ID / "inbound"
        assert hub.home(ada).owner() == ada and not [p for p in inbound.iterdir() if p.owner() not in (ada, bob)]

        # The instructor collects and autogrades each submission from the Formgrader, then writes and
        # releases the feedback.
        row = assignment_row(frame)
        formgrader_action(frame, row.locator("td.collect a"), "collect",
                          lambda: len(list((room.course_dir / "submitted").glob(f"*/{ASSIGNMENT}"))) == 2,
                          click_again_after=120)  # collecting again copies the same two submissions
        row = assignment_row(frame)
        row.locator("td.num-submissions a:text-is('2')").wait_for(timeout=60_000)
        shots(teacher, "collected")
        row.locator("td.num-submissions a").click()
        grading_started = time.monotonic()
        for student in (ada, bob):
            submission = frame.locator(f"#main-table tr:has(td.student-id:text-is('{student}'))")
            submission.wait_for(timeout=60_000)
            graded = room.course_dir / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            formgrader_action(frame, submission.locator("td.autograde a"), f"autograde {student}", graded.is_file)
        autograde_seconds = time.monotonic() - grading_started
        scores = {}
        for student in (ada, bob):
            cell = frame.locator(f"#main-table tr:has(td.student-id:text-is('{student}')) td.score")
            deadline = time.monotonic() + 60
            while "/" not in cell.inner_text() and time.monotonic() < deadline:
                time.sleep(0.5)
            scores[student] = [float(x) for x in cell.inner_text().split("/")]
        shots(teacher, "autograded")
        assert scores[ada] == [total, total], f"the solved notebook shows {scores[ada]} in the Formgrader"
        assert 0 < scores[bob][0] < total and scores[bob][1] == total, f"the half-solved one shows {scores[bob]}"
        # The Formgrader graded through the course's sandbox: its kernels' logs are in the course's logs/.
        logs = sorted(p.name for p in (room.course_dir / "logs").glob("*.log"))
        assert f"{ada}-{ASSIGNMENT}.log" in logs and f"{ada}-{ASSIGNMENT}.tests.log" in logs, logs
        with Gradebook(f"sqlite:///{room.course_dir / 'gradebook.db'}") as gradebook:
            assert {s: gradebook.find_submission(ASSIGNMENT, s).score for s in (ada, bob)} == {
                ada: total, bob: scores[bob][0]}
        row = assignment_row(frame)
        pages_written = lambda: all((room.course_dir / "feedback" / s / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()  # noqa: E731
                                    for s in (ada, bob))
        formgrader_action(frame, row.locator("td.generate-feedback a"), "generate feedback", pages_written)
        formgrader_action(frame, row.locator("td.release-feedback a"), "release feedback",
                          lambda: len(list((room.exchange / COURSE_ID / "feedback").glob("*.html"))) >= 2)
        shots(teacher, "feedback_released")

        # Each student fetches their feedback and sees their own score.
        for student in (ada, bob):
            page = pages[student]
            panel = open_assignments(page)
            row = panel.locator(f"#submitted_assignments_list .list_item:has-text('{ASSIGNMENT}')").first
            row.locator("button:text-is('Fetch Feedback')").click()
            row.locator("a:has-text('view feedback')").first.wait_for(timeout=120_000)
            shots(page, f"{student}_feedback_fetched")
            server = UserServer(hub, student)
            stamps = server.api(f"contents/{ASSIGNMENT}/feedback")["content"]
            html = f"{stamps[0]['path']}/{ASSIGNMENT}.html"
            page.goto(server.url(f"files/{html}"))
            body = page.locator("body").inner_text()
            score = score_in_feedback(body)
            shots(page, f"{student}_feedback")
            # The page opens with what to do (grader/feedback/feedback_summary.py), from the Formgrader as from `grade`.
            assert "What to do next" in body, f"{student}'s feedback page has no summary"
            assert ("Every exercise passed its tests." in body) == (student == ada), f"{student}'s summary"
            expected = (total, total) if student == ada else (scores[bob][0], total)
            assert score == expected, f"{student} sees {score} in their feedback; the Formgrader gave {expected}"

        # What a student cannot open: the instructor's server and Formgrader, another student's server,
        # and (from their own kernel) another student's or the instructor's files.
        page = pages[ada]
        for target in (f"/user/{instructor}/lab", f"/user/{instructor}/formgrader", f"/user/{bob}/lab"):
            response = page.goto(f"{hub.url}{target}")
            time.sleep(1)
            assert response.status == 403, f"{ada} opening {target}: HTTP {response.status}"
            assert page.locator("#jp-main-dock-panel").count() == 0
            shots(page, f"{ada}_refused_{target.strip('/').replace('/', '_')}")
        response = page.goto(f"{hub.url}/user/{ada}/formgrader")
        assert response.status == 404, f"{ada}'s own server serves a Formgrader: HTTP {response.status}"
        targets = [("bob_notebook", str(hub.home(bob) / NOTEBOOK)), ("bob_home", str(hub.home(bob))),
                   ("instructor_course", str(room.course_dir)),
                   ("gradebook", str(room.course_dir / "gradebook.db")),
                   ("exchange_inbound", str(room.exchange / COURSE_ID / "inbound"))]
        probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE.format(targets=targets))])
        probe.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        server = UserServer(hub, ada)
        server.api("contents/probe.ipynb", "PUT", {"type": "notebook", "format": "json", "content": probe})
        page.goto(server.url("lab"))
        notebook = open_notebook(page, server, "probe.ipynb", cells=1)
        run_all_and_wait(page, server, notebook, timeout=180)
        output = notebook.locator(".jp-OutputArea-output").all_inner_texts()
        shots(page, f"{ada}_cannot_read_others")
        text = "\n".join(output)
        for label, _ in targets:
            assert f"{label} refused: PermissionError" in text, f"{ada}'s kernel: {text}"
    print(f"the term took {time.monotonic() - started:.0f} s in the browser; Formgrader autograded 2 in "
          f"{autograde_seconds:.0f} s")

    # The hub's groups, as nbgrader names them for a course on a hub.
    groups = {g["name"]: sorted(g["users"]) for g in hub.admin("groups")}
    assert groups[f"formgrade-{COURSE_ID}"] == [instructor] and groups[f"nbgrader-{COURSE_ID}"] == [ada, bob]

    # Ctrl-C: the launcher stops the hub, which stops every server and the proxy; nothing is left running.
    report = hub.stop()
    assert report["returncode"] == 0, hub.log_tail()
    assert report["leftover_processes_killed"] == 0, f"the hub left these behind: {report['leftover_commands']}"
    assert user_processes(room.users) == []
    for port in (room.port, room.hub_port, room.proxy_api_port):
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still answers after Ctrl-C"


@pytest.fixture
def shots_term(request):
    return Shots("classroom_term")


@pytest.fixture(autouse=True)
def _needs_chromium():
    if not CHROMIUM.exists():
        pytest.skip(INSTALL_HINT)
