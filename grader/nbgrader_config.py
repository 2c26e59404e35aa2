# nbgrader configuration for the course. Instructor commands run from the repo root with this
# folder on the Jupyter config path: `python -m grader ...` and the Makefile set
# JUPYTER_CONFIG_PATH=grader for you (nbgrader has no --config option).
# Loading it changes nothing on disk and imports only the course's installed `grader` package.
import os

import nbgrader
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, GetGrades,
                                    IgnorePattern, LimitOutput, OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from grader.feedback.feedback_summary import FeedbackSummary
from grader.outputs.grades_export import QuotedCsvExportPlugin
from grader.intake.lms_archives import COLLECTOR_REGEXP, BoundedZipExtractor, LmsFileNameCollector
from grader.preprocessors import (GuardAgainstTampering, HideHiddenTests, LimitOutputSize, PassingTestsKeepStderr,
                                  RestoreCellFlags, SandboxedExecute)
from grader.feedback.sanitise_feedback import CheckedHTMLExporter, SanitiseFeedback

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
state = os.path.join(repo, "_grading")  # git-ignored but for .gitkeep: submissions, feedback, gradebook (hidden tests!)

c.CourseDirectory.course_id = "attention"
c.CourseDirectory.root = repo
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = os.path.join(state, "submitted")
c.CourseDirectory.autograded_directory = os.path.join(state, "autograded")
c.CourseDirectory.feedback_directory = os.path.join(state, "feedback")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(state, "gradebook.db")
c.Exchange.root = os.path.join(state, "exchange")
c.ZipCollectApp.downloaded_directory = os.path.join(state, "downloaded")
# Files above 5 MB in a submission are not copied for grading (a student's stray dataset, a core dump).
c.CourseDirectory.max_file_size = 5_000
# Nor are pages a browser would run: nbgrader copies a submission's other files into its feedback folder.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.html", "*.htm", "*.xhtml",
                            "*.shtml", "*.svg", "*.xml", "*.js", "*.mjs"]

# A cell's time limit is GradingLimits.cell_seconds (grader/limits.py), not Execute.timeout.
# TensorFlow writes start-up notices to stderr, and a test cell with stderr output scores 0.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = (
    r"(^|\n)([IWE]\d{4} |WARNING: All log messages before absl|.*(cuda|oneDNN|TensorFlow binary"
    r"|tensorflow/core|cpu_feature_guard|rebuild TensorFlow))"
)
# A student who deletes a test cell gets it back, and graded.
c.OverwriteCells.add_missing_cells = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# nbgrader's pipelines plus what a real class needs (see grader/preprocessors/).
c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreCellFlags, OverwriteCells,
                                      CheckCellMetadata, GuardAgainstTampering]
c.Autograde.autograde_preprocessors = [SandboxedExecute, IgnorePattern, PassingTestsKeepStderr,
                                       ClearMetadataPreprocessor, LimitOutput, LimitOutputSize, SaveAutoGrades,
                                       AssignLatePenalties, CheckCellMetadata]
# Student HTML reaches no page raw (grader/feedback/sanitise_feedback.py). The Formgrader's submission view is a
# plain HTMLExporter, so every HTMLExporter sanitises first; feedback sanitises again after GetGrades (which
# adds the gradebook's comments); its exporter replaces a page still carrying a foreign script or handler.
c.HTMLExporter.preprocessors = [SanitiseFeedback]
# FeedbackSummary puts what to do next first (grader/feedback/feedback_summary.py), before the sanitiser sees it.
c.GenerateFeedback.preprocessors = [HideHiddenTests, GetGrades, FeedbackSummary, CSSHTMLHeaderPreprocessor,
                                    SanitiseFeedback]
c.GenerateFeedback.exporter_class = CheckedHTMLExporter
# The page opens with that summary; nbgrader's list of graded cells moves under it (grader/feedback/templates/).
formgrader = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader")
c.CheckedHTMLExporter.template_name = "course_feedback"
c.CheckedHTMLExporter.extra_template_basedirs = [os.path.join(formgrader, "templates"),
                                                 os.path.join(os.path.dirname(__file__), "feedback", "templates")]
# Where its `extends 'feedback/index.html.j2'` and nbgrader's bootstrap.min.css are found.
c.CheckedHTMLExporter.extra_template_paths = [
    os.path.join(formgrader, "templates"),
    os.path.join(formgrader, "static", "node_modules", "bootstrap", "dist", "css")]

# zip_collect: LMS downloads named like Canvas's "<student>_<late_><user id>_<file id>_<notebook>.ipynb",
# read by the course's own extractor and collector (grader/intake/lms_archives.py): nothing nested is unpacked, no
# member's mode or path applies, the student is the LMS's name for them, and a bad upload is that student's.
c.ZipCollectApp.extractor_plugin = BoundedZipExtractor
c.ZipCollectApp.collector_plugin = LmsFileNameCollector
c.FileNameCollectorPlugin.named_regexp = COLLECTOR_REGEXP
c.ZipCollectApp.strict = True
# nbgrader export writes grades.csv with every cell quoted where needed and no formula (grader/outputs/grades_export.py).
c.ExportApp.plugin_class = QuotedCsvExportPlugin

# collect copies each student's inbound submission without following its links (grader/intake/exchange_collect.py).
c.ExchangeFactory.collect = "grader.intake.exchange_collect.SafeExchangeCollect"
