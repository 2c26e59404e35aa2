"""Submissions in: copied without following a link, within their size limits, from a folder, an LMS download or nbgrader's exchange; what a student id may be."""
