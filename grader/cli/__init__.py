"""The instructor's command line, `python -m grader VERB`: one module per verb (release, mistakes, grade),
each with `add_parser(commands)` and `run(args) -> exit status`."""
