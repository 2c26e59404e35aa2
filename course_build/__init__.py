"""The instructor's build tools, apart from grading: training the shipped models from the solution
notebooks' own cells (one shared training loop), running notebook cells outside Jupyter, and measuring.
Each script runs as a module from the repository root, e.g. `python -m course_build.train_transformer`.
Students never receive this package; grading (the `grader` package) never imports it."""
