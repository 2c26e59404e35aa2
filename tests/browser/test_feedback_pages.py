"""One student's feedback page and the class report, opened from disk in headless Chromium (offline).

The class of tests/feedback_class.py is graded with `python -m grader grade`; the browser must show bob's
summary first (his failing exercise, its message, the named mistake) with his attention weights beside
the expected ones, and the report with its score histogram; every figure must have decoded. Screenshots:
test-artifacts/browser/test_feedback_page_and_class_report_render/ (the manual shows copies, docs/img/).
"""
import pytest

from tests.feedback_class import ASSIGNMENT, grade_class

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The decoded width of every image the selector finds (0 for one that did not decode).
DECODED_IMAGES = "(s) => [...document.querySelectorAll(s)].map(i => i.complete && i.naturalWidth)"


def test_feedback_page_and_class_report_render(tmp_path, browser_page, shots):
    page = browser_page
    workspace, _ = grade_class(tmp_path)
    page.set_viewport_size({"width": 1200, "height": 1500})
    feedback = workspace / "feedback" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    page.goto(feedback.as_uri(), wait_until="load")
    heading = page.get_by_text("What to do next")
    heading.wait_for(timeout=30_000)
    assert page.get_by_text("This looks like: softmax over queries").is_visible()
    assert page.get_by_text("Assemble attention (4 points): ✘ failed").first.is_visible()
    widths = page.evaluate(DECODED_IMAGES, "img[alt^='your attention weights']")
    assert widths and all(width and width > 100 for width in widths), widths
    # The notebook's formulas are MathML the grader rendered: laid out by the browser, no LaTeX left as text.
    heights = page.evaluate("() => [...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
    assert sum(height > 5 for height in heights) > 20, heights[:20]
    assert "\\sqrt{" not in page.inner_text("body") and "$$" not in page.inner_text("body")
    heading.scroll_into_view_if_needed()
    shots(page, "student_feedback")
    page.goto((workspace / "report.html").as_uri(), wait_until="load")
    page.get_by_text("Named mistakes, most frequent first").first.wait_for(timeout=30_000)
    widths = page.evaluate(DECODED_IMAGES, "img")
    assert widths and all(width and width > 100 for width in widths), widths
    assert page.get_by_text("divide by d_k not its root").first.is_visible()
    shots(page, "class_report")
