"""Every limit on a grading kernel and its notebook, declared once with its default.

`GradingLimits` is a traitlets Configurable, so the course config (grader/nbgrader_config.py), a
workspace's nbgrader_config.py, the classroom and `python -m grader grade --memory-mb ...` all set the
same names (`c.GradingLimits.memory_mb = 4000`). The defaults are the safe ones: plain `nbgrader
autograde` with the course config is as limited and sandboxed as `grade`.
"""
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
