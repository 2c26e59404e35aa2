"""python -m grader mistakes [ASSIGNMENT ...]: fingerprint the named mistakes the feedback names."""
from grader.course import SOLUTIONS, named_mistakes_dir


def add_parser(commands):
    named = commands.add_parser(
        "mistakes", help="grade the typical mistakes the feedback names (course/<assignment>/answers.py), once per assignment "
                         "version; `grade` does it first otherwise")
    named.add_argument("assignments", nargs="*", help="assignment names (default: all)")
    named.add_argument("--workers", type=int, default=None, help="assignments graded at once (default: one per core)")


def run(args) -> int:
    from grader.authoring.release import name_mistakes
    from grader.course import check_assignments
    chosen = check_assignments(args.assignments, SOLUTIONS)
    name_mistakes(chosen, workers=args.workers)
    print(f"named mistakes of {', '.join(chosen)}: in {named_mistakes_dir()}")
    return 0
