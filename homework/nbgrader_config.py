"""nbgrader configuration of the mbcourse homework (nbgrader 0.9.6, runs offline, no Docker).

Use it from a course directory that has ``source/<assignment>/<assignment>.ipynb`` (copy
``homework/source`` and this file there; ``make homework`` does it in ``_build/homework``).
"""

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821 (defined by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "mbcourse"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".DS_Store"]

# Every cell gets 20 s, then the kernel is interrupted and grading goes on with the next
# cell (a `while True: pass` in a submission costs 20 s, not the whole run). Student
# functions are also called through mbcourse.grading.check_call, which stops them after 10 s.
c.Execute.timeout = 20
c.Execute.interrupt_on_timeout = True
c.Execute.startup_timeout = 120
c.Execute.execute_retries = 0
# Quiet kernels: no "running over TCP without encryption" warning per graded notebook.
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]

# The stub that replaces the solutions in the student release.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True
c.ClearHiddenTests.enforce_metadata = True

# Long outputs (a student printing a huge array) are cut in the graded notebooks.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 50

# The feedback HTML shows every test's failure message but not the hidden tests' code
# (nbgrader's default feedback would print it), so the hidden tests can be reused.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
