"""Outputs: the gradebook's results, grades.csv and every CSV (quoted, formula-free), the class report, LMS files and the outbox of scores to the LMS."""
