"""A local classroom: the course on JupyterHub with one instructor, a few students and a shared nbgrader exchange.

`python -m classroom` (what `make classroom` runs) prepares the Unix users, their homes, the exchange,
the instructor's course directory and the configuration every single-user server reads, then runs
JupyterHub with classroom/jupyterhub_config.py until Ctrl-C. See classroom/layout.py for the layout.
"""
