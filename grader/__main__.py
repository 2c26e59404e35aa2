"""python -m grader release [ASSIGNMENT ...] | mistakes [ASSIGNMENT ...]
   | grade [SUBMISSIONS] [-a ASSIGNMENT ...] [--workspace DIR]"""
import argparse
import sys

from grader.cli import grade, mistakes, release
from grader.course import CourseError

VERBS = {"release": release, "mistakes": mistakes, "grade": grade}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__.split("|")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for verb in VERBS.values():
        verb.add_parser(commands)
    args = parser.parse_args(argv)
    try:
        return VERBS[args.command].run(args)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
