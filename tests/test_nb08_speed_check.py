"""Notebook 08's visible test of alignment_posteriors tells a student whose answer is correct but copies the whole
translation table on every call (EM makes thousands of calls) what to change; a fast answer passes. The check runs
in the student's own runs only (not while graded), so it is tested here, outside grading."""
import pytest

from tests.course_files import nbgrader_meta, source_notebook

SLOW = '''
def alignment_posteriors(t, source_ids, target_ids):
    table = np.asarray(t, dtype=np.float64)  # the whole table, copied on every call
    scores = table[np.ix_(np.asarray(source_ids), np.asarray(target_ids))].T
    return scores / scores.sum(axis=1, keepdims=True)
'''


@pytest.fixture(scope="module")
def cells():
    notebook = source_notebook("08_real_translation")
    by_id = {nbgrader_meta(c).get("grade_id"): c.source for c in notebook.cells}
    return by_id["setup"], by_id["alignment_posteriors"], by_id["test_alignment_posteriors_visible"]


def run_visible_test(cells, answer: str):
    setup, _, visible = cells
    namespace = {"__name__": "__main__"}
    exec(compile(setup, "<setup>", "exec"), namespace)
    namespace["GRADING"] = False  # the student's own run
    exec(compile(answer, "<answer>", "exec"), namespace)
    exec(compile(visible, "<visible test>", "exec"), namespace)


def test_a_fast_answer_passes_the_speed_check(cells):
    run_visible_test(cells, cells[1])


def test_an_answer_that_copies_the_whole_table_hears_what_to_change(cells):
    with pytest.raises(AssertionError, match=r"index t first.*copying the whole table"):
        run_visible_test(cells, SLOW)
