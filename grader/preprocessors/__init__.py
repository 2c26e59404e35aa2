"""What nbgrader lacks for grading a real class, as nbgrader preprocessors, one per module (wired in
grader/nbgrader_config.py):

- SandboxedExecute: the student's cells run in a sandboxed, limited kernel (grader/sandbox/bubblewrap.py); test
  cells run in the grader (grader/trusted/trusted_tests.py); a kernel that dies fails the cell it was running, is
  restarted, the earlier cells replayed, and grading goes on, all within a budget per notebook.
- GuardAgainstTampering: after an answer cell that patches what the tests rely on (library functions,
  builtins, the course's check helpers), a note in the feedback names the line; it changes no score.
- PassingTestsKeepStderr: stderr printed by a test cell that raised nothing is kept as text but no
  longer fails the cell (nbgrader's default fails it, which punishes correct answers that log).
- LimitOutputSize: each cell's printed text capped in characters.
- HideHiddenTests: feedback shows hidden tests' results and messages, never their code.
- RestoreCellFlags: a test cell whose grade flag or points a student edited gets them back from the
  gradebook.
"""
from grader.preprocessors.hide_hidden_tests import HideHiddenTests
from grader.preprocessors.keep_stderr import PassingTestsKeepStderr
from grader.preprocessors.limit_output_size import LimitOutputSize
from grader.preprocessors.restore_cell_flags import RestoreCellFlags
from grader.preprocessors.sandboxed_execute import SETUP_CELL, SandboxedExecute, trusted_sources
from grader.preprocessors.tamper_guard import (FORBIDDEN_MODULES, GuardAgainstTampering, find_tampering,
                                               tampering_problems)

__all__ = ["FORBIDDEN_MODULES", "SETUP_CELL", "GuardAgainstTampering", "HideHiddenTests",
           "LimitOutputSize", "PassingTestsKeepStderr", "RestoreCellFlags", "SandboxedExecute",
           "find_tampering", "tampering_problems", "trusted_sources"]
