"""Feedback: the named typical mistakes (their fingerprints, and the digests the student's kernel matches), the page's summary, its sanitising, and nbgrader's feedback template."""
