"""nbgrader's exchange `collect`, copying each submission with grader.intake.submissions (no link ever followed).

Students write their inbound submissions themselves, and nbgrader's own collect copies them with
shutil.copytree as the instructor: a link there would bring the instructor's files (solutions, the
gradebook, another student's notebook) into the student's submission. They name them too: a user name
that is not a valid student id (grader/intake/student_ids.py) is not collected. Wired in grader/nbgrader_config.py
as `c.ExchangeFactory.collect`, so `nbgrader collect` and the Formgrader's Collect button both use it.
"""
import os
import stat
from fnmatch import fnmatch
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from grader.intake import student_ids
from grader.intake.submissions import copy_submission


class SafeExchangeCollect(ExchangeCollect):
    def init_src(self):
        """nbgrader's choice of each student's latest submission, less those whose user name is not a valid
        student id (grader.intake.student_ids): each is logged and not collected."""
        super().init_src()
        for record in list(self.src_records):
            problem = student_ids.problem(record["username"])
            if problem:
                self.log.warning("Not collected: %s", problem)
                self.src_records.remove(record)

    def do_copy(self, src, dest, log=None):
        """Like nbgrader's do_copy (its ignore and include globs, groupshared modes), through copy_tree:
        links, devices and FIFOs are dropped and the limits of grader.intake.submissions hold; each drop is logged."""
        source, target = Path(src), Path(dest)
        for note in copy_submission(source, target, self.coursedir.max_file_size,
                                    skip=lambda path: self.ignored(source, path)):
            self.log.warning("%s/%s: %s", target.parent.name, target.name, note)
        if self.coursedir.groupshared:  # as nbgrader does: the course's group may read and write the copy
            for folder, _, files in os.walk(target):
                os.chmod(folder, 0o2775)
                for name in files:
                    os.chmod(os.path.join(folder, name), 0o664)

    def ignored(self, source: Path, path: Path) -> bool:
        """A name matching a CourseDirectory.ignore glob is left out; a file must match an .include glob."""
        if any(fnmatch(path.name, glob) for glob in self.coursedir.ignore):
            return True
        include = self.coursedir.include
        if not include or any(fnmatch(path.name, glob) for glob in include):
            return False
        return not stat.S_ISDIR(os.lstat(source / path).st_mode)
