"""Every limit on a grading kernel and its notebook, declared once with its default.

`GradingLimits` is a traitlets Configurable, so the course config (grader/nbgrader_config.py), a
workspace's nbgrader_config.py, the classroom and `python -m grader grade --memory-mb ...` all set the
same names (`c.GradingLimits.memory_mb = 4000`). The defaults are the safe ones: plain `nbgrader
autograde` with the course config is as limited and sandboxed as `grade`.
"""
from dataclasses import dataclass

from traitlets import Bool, Integer
from traitlets.config import Configurable


class GradingLimits(Configurable):
    """What one student's notebook may use while it is graded (0 switches a numeric limit off)."""

    sandbox = Bool(True, help="Run grading kernels in a bubblewrap sandbox "
                              "(off only with grade --unsafe-no-sandbox)").tag(config=True)
    memory_mb = Integer(6_000, help="Memory of one kernel in MB: its address space (MemoryError past it) "
                                    "and, through its cgroup, all it holds, files in /tmp, /dev/shm and its "
                                    "home included. TensorFlow with a small Keras model peaks near 2,700 MB "
                                    "of address space").tag(config=True)
    cpu_seconds = Integer(900, help="CPU time of one kernel in seconds (thirty times a solved notebook's "
                                    "autograde)").tag(config=True)
    cell_seconds = Integer(300, help="Wall-clock limit of one cell in seconds, never past the notebook's budget "
                                     "(Keras cells build and load models: nbgrader's own default of 30 s is too "
                                     "short)").tag(config=True)
    notebook_seconds = Integer(1_800, help="Wall-clock budget for one notebook, kernel restarts, replays and "
                                           "test cells included; past it the rest of the notebook is not run"
                               ).tag(config=True)
    notebook_cpu_seconds = Integer(1_800, help="CPU budget for one notebook, all its kernels together "
                                               "(measured through the kernels' cgroups)").tag(config=True)
    processes = Integer(512, help="Processes and threads one kernel may have at once (its pids cgroup)"
                        ).tag(config=True)
    cpu_cores = Integer(0, help="Cores one kernel may use at once (its cpu cgroup); 0 = as many as its "
                                "threads").tag(config=True)
    threads = Integer(0, help="Threads for NumPy and TensorFlow in each kernel (0 = their default)"
                      ).tag(config=True)
    tmp_mb = Integer(512, help="Size of the kernel's /tmp and of its /dev/shm, each in MB").tag(config=True)
    home_mb = Integer(512, help="Size of the kernel's home, where the submission's files are copied, in MB"
                      ).tag(config=True)
    stderr_kb = Integer(1_024, help="What the kernel process writes to its own stdout and stderr that is "
                                    "kept in its log, in KB; the rest is read and dropped").tag(config=True)
    message_mb = Integer(64, help="Largest message the grader accepts from a kernel, in MB; a larger one is "
                                  "refused by the socket before the grader holds it").tag(config=True)
    message_json_mb = Integer(20, help="Largest JSON part of a message from a kernel (its header, metadata and "
                                       "content: what is decoded into objects; arrays travel beside it as "
                                       "bytes, except in call-backs, whose requests take up to 16 MB), in MB; "
                                       "a larger one, or one of over 500,000 items, is refused before it is "
                                       "decoded").tag(config=True)
    cell_output_kb = Integer(2_048, help="Outputs (text, figures, any type) kept per cell, in KB"
                             ).tag(config=True)
    notebook_output_kb = Integer(8_192, help="Outputs kept per notebook, all cells together, in KB (each solved "
                                             "course notebook, graded, keeps under 100)").tag(config=True)
    kernel_uid = Integer(65534, help="Host user id a kernel runs as when the grader is root (never root "
                                     "itself)").tag(config=True)


@dataclass(frozen=True)
class Fixed:
    """A limit of the grader itself, not of one kernel: set here, not per class (docs/limits.md)."""
    value: float
    unit: str
    help: str
    where: str  # the module that applies it


# The grader's own caps on what a student hands it (their files, outputs, messages and call-backs) and on
# its own work; each module reads its value from here. The wire format's two (grader/trusted/wire.py) stay
# in that file, which also runs in the student's kernel, and are listed by `all_limits`.
FIXED = {
    "notebook_bytes": Fixed(20_000_000, "bytes", "One submitted notebook, outputs and plots included; a larger one is not copied",
                   "grader/intake/submissions.py"),
    "submission_bytes": Fixed(50_000_000, "bytes", "One submission (a student's assignment folder), all its files together",
                   "grader/intake/submissions.py"),
    "submission_files": Fixed(1_000, "files", "Files in one submission",
                   "grader/intake/submissions.py"),
    "zip_bytes": Fixed(4_000_000_000, "bytes", "LMS downloads: the zip files of a whole class, together",
                   "grader/intake/submissions.py"),
    "zip_files": Fixed(1_000, "files", "LMS downloads: zip files in the folder",
                   "grader/intake/submissions.py"),
    "archive_members": Fixed(20_000, "members", "Members of one LMS zip download; nothing nested is unpacked",
                   "grader/intake/lms_archives.py"),
    "extracted_bytes": Fixed(4_000_000_000, "bytes", "What the LMS downloads unpack to, together",
                   "grader/intake/lms_archives.py"),
    "folder_depth": Fixed(64, "levels", "Nested folders of a submission copied; each level holds two descriptors open",
                   "grader/intake/safe_copy.py"),
    "note_characters": Fixed(199, "characters", "A file name as the summary names what was left out",
                   "grader/intake/safe_copy.py"),
    "link_target_characters": Fixed(80, "characters", "A link's target as the summary names it",
                   "grader/intake/safe_copy.py"),
    "student_id_characters": Fixed(64, "characters", "A student id",
                   "grader/intake/student_ids.py"),
    "figure_side": Fixed(24, "rows or columns", "A weights figure on the page is drawn only for arrays this small: a tick per row and column",
                   "grader/feedback/feedback_summary.py"),
    "figure_message_characters": Fixed(4_000, "characters", "A test message a weights figure is read from (it may be the student's own)",
                   "grader/feedback/feedback_summary.py"),
    "cached_text_characters": Fixed(200_000, "characters", "Longer texts (a student's, seen once) are not kept in the page's render cache",
                   "grader/feedback/sanitise_feedback.py"),
    "cached_texts": Fixed(4096, "texts", "Entries of each render cache: the prose and code of a few assignments",
                   "grader/feedback/sanitise_feedback.py"),
    "markup_characters": Fixed(20_000, "characters", "One markdown cell or HTML output rendered; a longer one is shown as its text (sanitising costs more than linear time: nested elements, 22 KB took 2.5 s, 88 KB 19 s)",
                   "grader/feedback/sanitise_feedback.py"),
    "markup_depth": Fixed(64, "levels", "Elements, quotes or lists nested deeper are shown as text",
                   "grader/feedback/sanitise_feedback.py"),
    "notebook_markup_characters": Fixed(250_000, "characters", "Markup rendered per notebook (the course's longest prose, 08's, is 43,367)",
                   "grader/feedback/sanitise_feedback.py"),
    "code_characters": Fixed(20_000, "characters", "One code cell shown on the page (the course's longest is 8,973); the rest cut, and the page says so",
                   "grader/feedback/sanitise_feedback.py"),
    "notebook_code_characters": Fixed(500_000, "characters", "Code shown per notebook (08's code is 78,984)",
                   "grader/feedback/sanitise_feedback.py"),
    "mistake_cell_seconds": Fixed(120, "seconds", "One cell while the named mistakes are graded (instructor code, small inputs)",
                   "grader/feedback/mistakes.py"),
    "iopub_grace_seconds": Fixed(3.0, "seconds", "After a kernel's execute_reply, how long the iopub messages of that request may still take to arrive",
                   "grader/trusted/bridge.py"),
    "callback_characters": Fixed(16 * 2 ** 20, "characters", "A call-back's request from the student's code to a test's function (the correct versions of earlier exercises take whole weight arrays: 04, 8.4 MB)",
                   "grader/trusted/bridge.py"),
    "callbacks_per_cell": Fixed(100_000, "calls", "Call-backs per test cell",
                   "grader/trusted/bridge.py"),
    "reference_message_bytes": Fixed(24 * 2 ** 20, "bytes", "A message between the grader and the reference worker (a call-back's request or answer, with its envelope)",
                   "grader/trusted/reference_worker.py"),
    "reference_start_seconds": Fixed(120, "seconds", "The reference worker's imports and a notebook's setup cell, before it answers its first call",
                   "grader/trusted/reference_worker.py"),
    "student_output_characters": Fixed(20_000, "characters", "The student's printed output kept per test cell",
                   "grader/trusted/trusted_tests.py"),
    "test_text_characters": Fixed(20_000, "characters", "Any text a test cell's outputs keep (its prints, its last expression's repr: they may show student values)",
                   "grader/trusted/trusted_tests.py"),
    "error_characters": Fixed(10_000, "characters", "The message of the error that failed a test cell",
                   "grader/trusted/trusted_tests.py"),
    "restore_seconds": Fixed(10, "seconds", "After a test cell (its deadline perhaps spent), putting the student's own functions back",
                   "grader/trusted/trusted_tests.py"),
    "message_header_bytes": Fixed(65536, "bytes", "A refused message's header read to address its stand-in; larger ones are not decoded",
                   "grader/sandbox/kernel_client.py"),
    "inbound_entries": Fixed(2_000, "entries", "Entries of one inbound exchange folder read for its arrival time",
                   "grader/running/on_submit.py"),
    "refused_records_per_hour": Fixed(30, "records", "Refused attempts recorded per student an hour (any assignment name); more are only logged",
                   "grader/running/on_submit.py"),
    "lms_error_characters": Fixed(500, "characters", "An LMS's answer kept for the instructor's page",
                   "grader/outputs/lms_outbox.py"),
    "sandbox_copy_seconds": Fixed(60, "seconds", "A new sandbox copying the submission, before a kernel is forked into it",
                   "grader/sandbox/bubblewrap.py"),
    "zygote_start_seconds": Fixed(120, "seconds", "The zygote importing NumPy, ipykernel and the assignment's libraries (once per grading process)",
                   "grader/sandbox/zygote.py"),
    "zygote_answer_seconds": Fixed(30, "seconds", "The zygote's answer to a fork, and the forked child's once told to go",
                   "grader/sandbox/zygote.py"),
    "zygote_request_bytes": Fixed(65536, "bytes", "One request to the zygote (a kernel's environment, folder and limits)",
                   "grader/sandbox/zygote.py"),
}


def all_limits() -> list:
    """(name, value, unit or '', what it limits, where it is set) of every limit: the configurable ones of one
    kernel and its notebook (GradingLimits: a class's nbgrader_config.py, `grade --NAME`, or an assignment's
    settings file), then the grader's own."""
    from grader.trusted import wire  # declared there: the file also runs in the student's kernel
    units = {"mb": "MB", "kb": "KB", "seconds": "seconds", "cores": "cores", "uid": "user id"}
    rows = [(f"GradingLimits.{name}", trait.default_value, units.get(name.rsplit("_", 1)[-1], ""),
             trait.help, "configurable") for name, trait in GradingLimits.class_traits(config=True).items()]
    rows += [(key, limit.value, limit.unit, limit.help, limit.where) for key, limit in FIXED.items()]
    rows += [("wire MAX_DEPTH", wire.MAX_DEPTH, "levels", "Nesting of one value sent across the sandbox boundary",
              "grader/trusted/wire.py"),
             ("wire MAX_ITEMS", wire.MAX_ITEMS, "items", "Items in one message's JSON, counted by its commas before "
              "it is decoded", "grader/trusted/wire.py")]
    return rows


def limits_page() -> str:
    """docs/limits.md, made from the declarations above (`python -m grader.limits > docs/limits.md`)."""
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    def number(value) -> str:
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)

    lines = ["# Every grading limit", "",
             "Made from `grader/limits.py` by `python -m grader.limits > docs/limits.md` (a test checks it is",
             "current). The first table's limits are set per class (`c.GradingLimits.memory_mb = 4000` in",
             "`nbgrader_config.py`, or `python -m grader grade --memory-mb 4000`) or per assignment",
             "(`[limits]` of its `assignment.toml`, [Writing an assignment](authoring.md)); 0 switches a",
             "numeric one off. The second table's are the grader's own caps, the same for every class.", "",
             "## Per class or assignment", "", "| limit | default | unit | what it limits |", "|---|---|---|---|"]
    rows = all_limits()
    for name, value, unit, help_, where in rows:
        if where == "configurable":
            lines.append(f"| `{name.split('.', 1)[1]}` | {number(value)} | {cell(unit)} | {cell(help_)} |")
    lines += ["", "## The grader's own", "", "| limit | value | unit | what it limits | applied in |",
              "|---|---|---|---|---|"]
    for name, value, unit, help_, where in rows:
        if where != "configurable":
            lines.append(f"| `{name}` | {number(value)} | {cell(unit)} | {cell(help_)} | `{where}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(limits_page(), end="")
