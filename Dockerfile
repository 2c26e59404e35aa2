# The course's single-user image for a JupyterHub on Kubernetes (docs/deploy.md), also used for the grading Job.
# Built from this repository's pinned requirements; it holds no solutions/, no tests/, no answers (.dockerignore) and no gradebook:
# the instructor's course (source notebooks, gradebook settings) lives on the instructor's own volume.
#
#   docker build -t registry.example.org/attention-course:$(git rev-parse --short HEAD) .
#
# (Not built on the machines this course is developed on: they have no container engine. See docs/deploy.md.)
FROM python:3.11-slim-bookworm

# bubblewrap: the grading sandbox (grader/sandbox/bubblewrap.py), libseccomp2 its system-call filter (grader/sandbox/seccomp.py);
# tini reaps the kernels' children.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap libseccomp2 tini fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*

# The user Zero to JupyterHub expects (uid 1000, home /home/jovyan).
RUN useradd --create-home --uid 1000 --shell /bin/bash jovyan

WORKDIR /opt/course
COPY requirements.txt pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.txt
COPY attention_course/ attention_course/
COPY grader/ grader/
COPY classroom/*.py classroom/
COPY datasets/ datasets/
COPY notebooks/ notebooks/
# The assignment folders as grading reads them: settings and the named mistakes' fingerprints and names
# (.dockerignore leaves out each folder's answers, which include correct ones).
COPY course/ course/
# A regular (not editable) install puts attention_course and grader in site-packages, away from datasets/
# and course/; they read those from ATTENTION_COURSE_DATA and ATTENTION_COURSE_ASSIGNMENTS instead
# (tests/test_installed_grader.py grades from such an install).
RUN pip install --no-cache-dir --no-deps . \
 && python -c "import attention_course, grader.preprocessors"
ENV ATTENTION_COURSE_DATA=/opt/course/datasets \
    ATTENTION_COURSE_ASSIGNMENTS=/opt/course/course \
    MPLBACKEND=module://matplotlib_inline.backend_inline

# The students' and the instructor's Jupyter configuration (docs/deploy.md selects one per person).
COPY deploy/jupyter/ /etc/jupyter/classroom/

USER jovyan
WORKDIR /home/jovyan
ENTRYPOINT ["tini", "--"]
CMD ["jupyterhub-singleuser"]
