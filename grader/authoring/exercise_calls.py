"""Which earlier exercises each exercise's tests call, read from a source notebook's code.

An exercise's tests call an earlier exercise's function when its answer or its test cells name that
function, or name a function that does (the closure: `local_attention` calls `attention`, which calls
`scaled_dot_score`). Each test cell declares these with `testing(exercise, calls=(...))`
(attention_course.dependencies); tests/test_notebook_structure.py checks the declarations against
this reading, and `python -m grader.authoring.exercise_calls NN_topic` prints the lines an author pastes.

When graded, a function stands in as the source notebook's answer, run in the grader; a class (a Keras
layer, built in the student's kernel where no correct version may go) as the course's test double
(attention_course.dependencies.DOUBLES).
"""
import ast
import sys

from grader.course import SOLUTIONS
from grader.feedback.mistakes import exercise_layout


def _names(tree) -> set:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def exercise_calls(source_nb) -> dict:
    """{exercise: (earlier functions and classes its tests call, in notebook order)} for every exercise."""
    layout = exercise_layout(source_nb)
    order = list(layout)
    answers = {exercise: ast.parse(source_nb.cells[answer].source) for exercise, (answer, _, _) in layout.items()}
    named = {exercise: _names(answers[exercise]) for exercise in order}  # what each answer cell names
    defined = {exercise: {node.name for node in answers[exercise].body
                          if isinstance(node, (ast.FunctionDef, ast.ClassDef))} for exercise in order}
    found = {}
    for position, exercise in enumerate(order):
        earlier = {name for name in order[:position] if name in defined[name]}
        direct = set(named[exercise])
        for index in layout[exercise][2]:
            direct |= _names(ast.parse(source_nb.cells[index].source))
        closure, todo = set(), list(direct & earlier)
        while todo:  # what the named functions call in turn
            name = todo.pop()
            if name not in closure:
                closure.add(name)
                todo += list(named[name] & earlier)
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
        for exercise, calls in exercise_calls(source_nb).items():
            print(testing_line(exercise, calls))


if __name__ == "__main__":
    main()
