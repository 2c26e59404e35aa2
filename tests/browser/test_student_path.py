"""The student's path in a real browser: open a notebook in JupyterLab 4, fill the exercises, Run All,
see no errors and rendered figures, and press nbgrader's Validate button.

The notebooks are copied to a temporary course folder first (the repo stays untouched). The kernel
runs without NBGRADER_EXECUTION, as on a student's machine, so the Keras notebook's short training
run happens in the browser; Validate then runs the notebook the way nbgrader does (training skipped).
"""
import json
import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from grader.course import NOTEBOOKS, REPO, SOLUTIONS, nbgrader_meta, write_workspace_config
from grader.authoring.samples import answers
from tests.browser.lab import (click_validate, close_dialog, open_notebook, run_all_and_wait,
                               save, set_cell_source)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# 04 is NumPy with a little Keras. Of the Keras notebooks whose Run All trains, 01 is the fastest
# (its Run All took ~55 s in the browser on 2 busy cores, 03's ~105 s); BROWSER_KERAS_NOTEBOOK=03_date_translation
# (or 06_transformer, 08_real_translation) runs the student path on that notebook instead.
NUMPY_NOTEBOOK = "04_self_attention"
KERAS_NOTEBOOK = os.environ.get("BROWSER_KERAS_NOTEBOOK", "01_encoder_decoder")
RUN_ALL_TIMEOUT = {NUMPY_NOTEBOOK: 300, KERAS_NOTEBOOK: 900}


def student_copy(assignment: str, course: Path, folder: str) -> Path:
    """The released student notebook notebooks/<assignment>/ copied to course/<folder>/<assignment>/."""
    released = NOTEBOOKS / assignment / f"{assignment}.ipynb"
    if not released.is_file():
        pytest.skip(f"{released.relative_to(REPO)} is missing: run `make release` first")
    target = course / folder / assignment
    shutil.copytree(released.parent, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return target / f"{assignment}.ipynb"


def make_course(tmp_path: Path, assignment: str) -> Path:
    """A temporary course root with the student notebook twice (to solve / untouched)."""
    course = tmp_path / "course"
    student_copy(assignment, course, "notebooks")
    student_copy(assignment, course, "untouched")
    return course


def nbgrader_config_dir(tmp_path: Path) -> Path:
    """The course's nbgrader config (what Validate uses), with any grading state kept in tmp_path."""
    folder = tmp_path / "nbgrader"
    write_workspace_config(folder)
    return folder


def output_report(notebook_file: Path):
    """(error outputs, number of PNG figures, stderr texts) from a saved notebook."""
    nb = json.loads(notebook_file.read_text())
    errors, figures, stderr = [], 0, []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                errors.append(f"cell {index}: {output['ename']}: {output['evalue']}")
            elif output["output_type"] == "stream" and output["name"] == "stderr":
                stderr.append("".join(output["text"])[:300])
            elif "image/png" in output.get("data", {}):
                figures += 1
    return errors, figures, stderr


def heatmap_cells(source_cells) -> list:
    """Indices of the code cells that draw heatmaps: attention weights (plot_attention) first, then plot_matrix."""
    code = [(i, cell.source) for i, cell in enumerate(source_cells) if cell.cell_type == "code"]
    return ([i for i, source in code if "plot_attention(" in source]
            + [i for i, source in code if "plot_matrix(" in source and "plot_attention(" not in source])


@pytest.mark.parametrize("assignment", [NUMPY_NOTEBOOK, KERAS_NOTEBOOK])
def test_student_solves_runs_all_and_validates(assignment, tmp_path, start_lab, browser_page, shots):
    page, timings = browser_page, {}
    course = make_course(tmp_path, assignment)
    relative = f"notebooks/{assignment}/{assignment}.ipynb"
    student_file = course / relative
    student_nb = nbformat.read(student_file, as_version=4)
    solutions = answers(nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4))
    answer_cells = [(i, nbgrader_meta(c)["grade_id"]) for i, c in enumerate(student_nb.cells)
                    if nbgrader_meta(c).get("solution")]
    assert answer_cells, f"{relative} has no answer cells"

    started = time.monotonic()
    lab = start_lab(course, config_dir=nbgrader_config_dir(tmp_path))
    timings["server start"] = time.monotonic() - started
    notebook = open_notebook(page, lab, relative, cells=len(student_nb.cells))
    shots(page, "opened")

    # Fill every exercise in the browser, as a student pasting the answer into the cell.
    for index, grade_id in answer_cells:
        set_cell_source(page, notebook, index, solutions[grade_id])
    notebook.locator(".jp-Cell").nth(answer_cells[0][0]).scroll_into_view_if_needed()
    shots(page, "answers_filled")
    save(page)
    saved = nbformat.read(student_file, as_version=4)
    for index, grade_id in answer_cells:
        assert saved.cells[index].source.strip() == solutions[grade_id].strip(), (
            f"After typing, answer cell {grade_id} does not hold the solution:\n{saved.cells[index].source[:500]}")

    # Run All and wait for the kernel to go idle.
    timings["run all"] = run_all_and_wait(page, lab, notebook, timeout=RUN_ALL_TIMEOUT[assignment])
    save(page)
    shots(page, "after_run_all")
    errors, figures, stderr = output_report(student_file)
    assert not errors, f"Run All in JupyterLab left error outputs: {errors}"
    tracebacks = [t[:300] for t in notebook.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
        if "Traceback" in t or "Error:" in t]
    assert not tracebacks, f"Cells show errors in JupyterLab: {tracebacks}"
    prompts = [t.strip() for t in notebook.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()]
    code_cells = [c for c in saved.cells if c.cell_type == "code" and c.source.strip()]
    executed = [p for p in prompts if p.startswith("[") and p[1:-2].isdigit()]
    assert len(executed) >= len(code_cells), f"Only {len(executed)} of {len(code_cells)} code cells ran: {prompts}"

    # The figures rendered as images in the page, and the attention heatmaps are among them.
    images = notebook.locator(".jp-RenderedImage img")
    assert figures > 0, f"{relative} produced no figures"
    assert images.count() == figures, f"The page shows {images.count()} images, the notebook has {figures} figures"
    broken = images.evaluate_all(
        "imgs => imgs.filter(img => !(img.complete && img.naturalWidth > 100 && img.naturalHeight > 100)).length")
    assert broken == 0, f"{broken} of {figures} figures did not render"
    heatmaps = [i for i in heatmap_cells(saved.cells) if notebook.locator(".jp-Cell").nth(i).locator(
        ".jp-RenderedImage img").count()]
    assert heatmaps, "No attention heatmap (plot_attention / plot_matrix) rendered"
    for number, index in enumerate(heatmaps[:3], start=1):
        cell = notebook.locator(".jp-Cell").nth(index)
        cell.scroll_into_view_if_needed()
        shots(cell, f"heatmap_{number}")
    notebook.locator(".jp-Cell").nth(heatmaps[0]).scroll_into_view_if_needed()
    shots(page, "heatmap_in_notebook")
    last_figure = notebook.locator(".jp-Cell:has(.jp-RenderedImage img)").last
    last_figure.scroll_into_view_if_needed()
    shots(last_figure, "last_figure")

    # nbgrader's Validate button: success for the solved notebook.
    started = time.monotonic()
    dialog = click_validate(page)
    timings["validate solved"] = time.monotonic() - started
    shots(page, "validate_solved")
    verdict = dialog.inner_text()
    assert "nbgrader-SuccessDialog" in (dialog.get_attribute("class") or ""), f"Validate did not succeed:\n{verdict[:3000]}"
    assert "Success! Your notebook passes all the tests." in verdict, verdict[:3000]
    close_dialog(page)

    # ... and failures listed for the untouched notebook.
    untouched_relative = f"untouched/{assignment}/{assignment}.ipynb"
    open_notebook(page, lab, untouched_relative, cells=len(student_nb.cells))
    started = time.monotonic()
    dialog = click_validate(page)
    timings["validate untouched"] = time.monotonic() - started
    shots(page, "validate_untouched")
    verdict = dialog.inner_text()
    assert "nbgrader-ErrorDialog" in (dialog.get_attribute("class") or ""), f"Validate passed an untouched notebook:\n{verdict[:2000]}"
    assert dialog.locator(".validation-failed").count() == 1, f"No list of failed cells:\n{verdict[:2000]}"
    assert verdict.count("The following cell failed:") >= 1, verdict[:2000]
    missing = [grade_id for _, grade_id in answer_cells if grade_id not in verdict]
    assert not missing, f"Validate's failure list does not mention the exercises {missing}:\n{verdict[:3000]}"
    close_dialog(page)
    print(f"{assignment}: " + ", ".join(f"{step} {seconds:.0f} s" for step, seconds in timings.items()))
    if stderr:
        print(f"{assignment}: stderr output (not errors): {stderr[:3]}")
