"""Which earlier exercises each exercise's tests call, read from a source notebook's code.

An exercise's tests call an earlier exercise's function when its answer or its test cells name that
function, or name a function that does (the closure: `local_attention` calls `attention`, which calls
`scaled_dot_score`). Each test cell declares these with `testing(exercise, calls=(...))`
(attention_course.dependencies); tests/test_notebook_structure.py checks the declarations against
this reading, and `python -m grader.exercise_calls NN_topic` prints the lines an author pastes.

A function stands in as the source notebook's answer, run in the grader; a class (a Keras layer, built
in the student's kernel where no correct version may go) and a function called on Keras's symbolic
tensors stand in as the course's test double (attention_course.dependencies.DOUBLES), which every
name of those kinds must have.
"""
import ast
import sys

from grader.course import SOLUTIONS, nbgrader_meta
from grader.mistakes import exercise_layout

def _names(source: str) -> set:
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def _defined(source: str) -> list:
    return [node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def exercise_calls(assignment: str, source_nb) -> dict:
    """{exercise: (earlier functions its tests call, in notebook order)} for every exercise."""
    layout = exercise_layout(source_nb)
    order = list(layout)
    functions = {}  # exercise -> the earlier functions its answer cell names directly
    for exercise, (answer, _, tests) in layout.items():
        earlier = order[:order.index(exercise)]
        candidates = {name for name in earlier if name in _defined(source_nb.cells[layout[name][0]].source)}
        named = _names(source_nb.cells[answer].source)
        for index in tests:
            named |= _names(source_nb.cells[index].source)
        functions[exercise] = (named & candidates, candidates)
    found = {}
    for exercise in order:
        direct, candidates = functions[exercise]
        closure, todo = set(), list(direct)
        while todo:
            name = todo.pop()
            if name in closure:
                continue
            closure.add(name)
            todo += [n for n in _names(source_nb.cells[layout[name][0]].source) & candidates if n not in closure]
        found[exercise] = tuple(name for name in order if name in closure)
    return found


def testing_line(exercise: str, calls: tuple) -> str:
    """The first line of a test cell of `exercise`."""
    if not calls:
        return f'testing("{exercise}")'
    names = ", ".join(f'"{name}"' for name in calls)
    return f'testing("{exercise}", calls=({names}{"," if len(calls) == 1 else ""}))'


def main(argv=None):
    import nbformat
    for assignment in (argv if argv is not None else sys.argv[1:]):
        source_nb = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
        for exercise, calls in exercise_calls(assignment, source_nb).items():
            print(testing_line(exercise, calls))


if __name__ == "__main__":
    main()
