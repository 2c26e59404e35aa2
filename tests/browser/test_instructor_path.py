"""The instructor's path in a real browser: Nbgrader > Formgrader in JupyterLab lists every assignment
in solutions/, and generating the student version and autograding one submission from the UI
updates the submission's score.

Everything happens in a temporary grading workspace (grader.course.write_workspace_config): a copy
of solutions/ as the source, and its own release/, submitted/, autograded/ and gradebook.
"""
import shutil
import time

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.course import SOLUTIONS, assignments, prepare_environment, write_workspace_config
from grader.authoring.samples import fill_answers, nbgrader_meta
from tests.browser.lab import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Graded through the UI: the fastest notebooks first (no training).
GRADE_PREFERENCE = ["02_three_stage_attention", "04_self_attention"]
STUDENT = "ada"


def formgrader_modal(frame, timeout: float):
    """Wait for Formgrader's success or error modal; return (is_success, text)."""
    modal = frame.locator("#success-modal.in, #error-modal.in").first
    modal.wait_for(timeout=timeout * 1000)
    time.sleep(0.5)  # let the fade-in finish, for the screenshot
    return modal.get_attribute("id") == "success-modal", modal.inner_text()


def close_modal(frame):
    frame.locator(".modal.in .modal-footer button").first.click()  # OK
    frame.locator(".modal-backdrop").wait_for(state="detached")
    frame.locator(".modal").wait_for(state="detached")


def max_points(notebook) -> float:
    return sum(nbgrader_meta(c).get("points", 0) for c in notebook.cells if nbgrader_meta(c).get("grade"))


def test_formgrader_lists_assignments_and_autogrades_a_submission(tmp_path, start_lab, browser_page, shots):
    page = browser_page
    expected = assignments(SOLUTIONS)
    if not expected:
        pytest.skip("no assignments in solutions/")
    chosen = next((name for name in GRADE_PREFERENCE if name in expected), expected[0])
    workspace = tmp_path / "course"
    source = workspace / "source"
    for name in expected:
        shutil.copytree(SOLUTIONS / name, source / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    write_workspace_config(workspace, source)
    exchange = workspace / "exchange"  # so Formgrader shows no "exchange missing" warning
    exchange.mkdir()
    exchange.chmod(0o777)
    prepare_environment()  # the gradebook runs alembic from the environment's bin folder
    with Gradebook(f"sqlite:///{workspace / 'gradebook.db'}") as gradebook:  # the class roster
        gradebook.add_student(STUDENT, first_name="Ada", last_name="Lovelace")
    lab = start_lab(workspace, config_dir=workspace, cwd=workspace)

    # Nbgrader > Formgrader opens the Formgrader in a JupyterLab tab.
    page.goto(lab.url("lab"))
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Nbgrader')").click(timeout=180_000)
    page.locator("#jp-mainmenu-nbgrader li[data-command='nbgrader:open-formgrader']").click()
    page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel:text-is('Formgrader')").wait_for()
    frame = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
    rows = frame.locator("#main-table tr:has(td.name a)")
    rows.first.wait_for(timeout=120_000)
    shots(page, "formgrader_assignments")
    listed = sorted(rows.locator("td.name a").all_inner_texts())
    assert listed == expected, f"Formgrader lists {listed}; solutions/ holds {expected}"

    # Generate the student version from the UI.
    row = frame.locator(f"#main-table tr:has(td.name a:text-is('{chosen}'))")
    row.locator("td.assign a").click()
    ok, text = formgrader_modal(frame, timeout=300)
    shots(page, "generated")
    assert ok, f"Generating {chosen} failed in Formgrader:\n{text[:3000]}"
    close_modal(frame)
    released = workspace / "release" / chosen / f"{chosen}.ipynb"
    assert released.is_file(), f"Formgrader's generate did not write {released}"

    # A student hands in the solved notebook (the test plays the student and the collect step).
    source_nb = nbformat.read(source / chosen / f"{chosen}.ipynb", as_version=4)
    submitted = workspace / "submitted" / STUDENT / chosen
    submitted.mkdir(parents=True)
    nbformat.write(fill_answers(nbformat.read(released, as_version=4), source_nb), submitted / f"{chosen}.ipynb")
    (submitted / "timestamp.txt").write_text("2026-11-30 01:00:00.000000 UTC")

    # Manage Assignments shows one submission; its page lists it as waiting for autograding.
    frame.locator("a:text-is('Manage Assignments')").click()
    count = frame.locator(f"#main-table tr:has(td.name a:text-is('{chosen}')) td.num-submissions a")
    count.wait_for(timeout=60_000)
    assert count.inner_text().strip() == "1"
    count.click()
    submission = frame.locator(f"#main-table tr:has(td.student-id:text-is('{STUDENT}'))")
    submission.wait_for(timeout=60_000)
    assert "needs autograding" in submission.locator("td.status").inner_text()
    assert submission.locator("td.score").inner_text().strip() == ""
    shots(page, "submission_before_autograde")

    # Autograde from the UI; the row's score updates.
    started = time.monotonic()
    submission.locator("td.autograde a").click()
    ok, text = formgrader_modal(frame, timeout=600)
    autograde_seconds = time.monotonic() - started
    shots(page, "autograded")
    assert ok, f"Autograding {STUDENT}/{chosen} failed in Formgrader:\n{text[:3000]}"
    close_modal(frame)
    score_cell = submission.locator("td.score")
    deadline = time.monotonic() + 60
    while "/" not in score_cell.inner_text() and time.monotonic() < deadline:
        time.sleep(0.5)
    shots(page, "score_updated")
    total = max_points(source_nb)
    shown = [float(part) for part in score_cell.inner_text().split("/")]
    assert shown == [total, total], f"Formgrader shows {score_cell.inner_text()!r} for a solved notebook; expected {total:g} / {total:g}"
    assert "graded" in submission.locator("td.status").inner_text()
    with Gradebook(f"sqlite:///{workspace / 'gradebook.db'}") as gradebook:
        record = gradebook.find_submission(chosen, STUDENT)
        assert (record.score, record.max_score) == (total, total)
    print(f"Formgrader autograded {chosen} in {autograde_seconds:.0f} s")
    assert not (REPO / "_grading" / "submitted" / STUDENT).exists()
