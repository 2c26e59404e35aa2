"""python -m grader release [ASSIGNMENT ...]: regenerate notebooks/ from solutions/."""


def add_parser(commands):
    release = commands.add_parser("release", help="regenerate notebooks/ from solutions/")
    release.add_argument("assignments", nargs="*", help="assignment names (default: all)")


def run(args) -> int:
    from grader.authoring.release import release
    for name in release(args.assignments):
        print(f"released notebooks/{name}/")
    return 0
