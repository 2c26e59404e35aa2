"""python -m grader grade [SUBMISSIONS] [-a ASSIGNMENT ...]: autograde, write grades.csv, feedback and the
class report; --shard K/N and --finish for a class graded by several machines (docs/scale.md)."""
import os
import sys
from pathlib import Path

from traitlets import Integer

from grader.course import SOLUTIONS, STATE, CourseError
from grader.limits import GradingLimits
from grader.running.ledger import Ledger, parse_shard, shard_of


def add_parser(commands):
    grade = commands.add_parser(
        "grade", help="autograde submissions, write grades.csv and HTML feedback",
        description="With no SUBMISSIONS, grades three simulated students (solved, partial, blank) per assignment.")
    grade.add_argument("submissions", nargs="?", type=Path,
                       help="a folder <student>/<assignment>/..., or a folder of LMS zip downloads")
    grade.add_argument("-a", "--assignment", action="append", default=[], dest="assignments",
                       help="grade only this assignment (repeatable; default: all)")
    grade.add_argument("--workspace", type=Path, default=None,
                       help="where submissions, feedback, grades.csv and the gradebook go "
                            "(default: _grading/class, or _grading/samples for the simulated students)")
    grade.add_argument("--workers", type=int, default=None, help="notebooks graded at once (default: one per core)")
    grade.add_argument("--source", type=Path, default=SOLUTIONS,
                       help="the nbgrader source notebooks, one folder per assignment (default: solutions/)")
    limits = grade.add_argument_group("limits (grader.limits.GradingLimits; the same names in nbgrader_config.py)")
    for name, trait in GradingLimits.class_traits(config=True).items():
        if isinstance(trait, Integer):
            limits.add_argument(f"--{name.replace('_', '-')}", type=int, default=None, dest=f"limit_{name}",
                                metavar=name.rsplit("_", 1)[-1].upper(),
                                help=f"{trait.help} (default {trait.default_value})")
    grade.add_argument("--db-url", default=None,
                       help="gradebook URL, e.g. postgresql+psycopg://user@host/gradebook (default: $GRADER_DB_URL, "
                            "else SQLite in the workspace)")
    grade.add_argument("--no-progress", action="store_true", help="no progress bar")
    shards = grade.add_argument_group("a large class: shards, reruns (docs/scale.md)")
    shards.add_argument("--shard", default=None, metavar="K/N",
                        help="grade only the K-th (0 to N-1) of N disjoint shares of the class into the --db-url "
                             "gradebook; export nothing (run --finish once every shard is done)")
    shards.add_argument("--regrade", action="store_true",
                        help="grade every submission again (default: only those not graded yet, or changed)")
    shards.add_argument("--finish", action="store_true",
                        help="grade nothing: write grades.csv, the autograded notebooks and the feedback of the "
                             "whole class from the gradebook; with SUBMISSIONS, fail if any is not graded yet")
    grade.add_argument("--export", action="append", default=[], choices=["canvas", "moodle"],
                       help="also write grades_canvas.csv or grades_moodle.csv for the LMS's grade import")
    grade.add_argument("--canvas-assignment-id", action="append", default=[], metavar="NAME=ID",
                       help="the Canvas id of an assignment, so its column updates it (repeatable)")
    grade.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="grade without bubblewrap: student code runs unconfined and can change grades "
                            "(only for machines where no sandbox can be made; see docs/security.md)")


def run(args) -> int:
    from grader.outputs.lms_export import record_zip_ids
    from grader.running.grading import Grader, summary_table
    workspace = args.workspace or STATE / ("samples" if args.submissions is None else "class")
    if args.unsafe_no_sandbox:
        print("WARNING: grading WITHOUT a sandbox (--unsafe-no-sandbox): student code can read the solutions "
              "and hidden tests and change grades; use these grades only for students you trust", file=sys.stderr)
    chosen = {name[len("limit_"):]: value for name, value in vars(args).items()
              if name.startswith("limit_") and value is not None}
    if args.unsafe_no_sandbox:
        chosen["sandbox"] = False
    db_url = args.db_url or os.environ.get("GRADER_DB_URL") or None  # a Secret's value, never in `ps`
    grader = Grader(workspace, args.source, workers=args.workers, db_url=db_url, **chosen)
    if args.finish:  # the whole class, from the gradebook: what every shard graded
        missing = grader.finish(args.submissions, args.assignments)
        if missing:
            count = Ledger(grader.db_url).recorded_shard_count()
            which = (f"shards {', '.join(map(str, sorted({shard_of(*pair, count) for pair in missing})))} of "
                     f"{count}" if count else "the shards that hold them")
            print(f"error: {len(missing)} submissions are not graded yet, e.g. "
                  f"{', '.join('/'.join(pair) for pair in missing[:5])}: nothing was written; rerun {which} "
                  "(each grades only what is missing), then finish again", file=sys.stderr)
            return 1
        write_outputs(args, grader, workspace, grader.class_results())
        return 0
    shard = parse_shard(args.shard) if args.shard else None
    if shard and not db_url:
        raise CourseError("--shard needs the shared gradebook: --db-url or GRADER_DB_URL")
    if args.submissions is not None and any(Path(args.submissions).glob("*.zip")):
        record_zip_ids(args.submissions, workspace)  # the Canvas user ids, for --export canvas
    results = grader.run(args.submissions, args.assignments, progress=not args.no_progress, shard=shard,
                         regrade=args.regrade)
    print(summary_table(results))
    if shard:
        now = sum(result.graded_now for result in results)
        print(f"\nshard {args.shard}: {now} submissions graded by this run, {len(results) - now} graded before; "
              "once every shard is done, `grade --finish` writes grades.csv and the feedback of the whole class")
        return 0
    print()
    write_outputs(args, grader, workspace, results)
    return 0


def write_outputs(args, grader, workspace: Path, results) -> None:
    """Say where grades.csv and the feedback are, write the class report and the LMS files asked for."""
    from grader.outputs.class_report import write_report
    from grader.outputs.lms_export import export
    print(f"grades: {workspace / 'grades.csv'}\nfeedback: {workspace / 'feedback'}/<student>/<assignment>/\n"
          f"class report: {write_report(workspace, results, grader.source)}")
    ids = dict(item.split("=", 1) for item in args.canvas_assignment_id if "=" in item)
    for kind in args.export:
        print(f"{kind} import: {export(kind, grader.db_url, workspace, ids)}")
