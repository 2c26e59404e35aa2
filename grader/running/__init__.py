"""Running a class: the grading run on nbgrader's apps, its order (longest first), the ledger of what is graded (reruns, shards), grading on submit and the LMS registration it answers to."""
