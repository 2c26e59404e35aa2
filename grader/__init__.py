"""Instructor tools: release assignments and grade submissions through nbgrader (`python -m grader`)."""
