"""Does the grader run, for every notebook cell, the code the Jupyter kernel runs (or refuse the cell)?

The kernel hands each cell to IPython's TransformerManager.transform_cell before Python compiles it. These
tests put the grader's reading of a cell (autograder/grading/intake/cells.py, standard library only) beside
the real IPython's on hand-picked and generated cells: wherever the grader does not refuse, both must be the
same program, once IPython's calls that the grader reproduces (`%time S` runs S, `!cmd` and front-end magics
do nothing to the code's names) are put in the form the grader gives them.
"""

import ast
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.grading.intake.cells import (
    BODY_CELL_MAGICS,
    FOREIGN_CELL_MAGICS,
    NO_EFFECT_MAGICS,
    Refused,
    kernel_code,
)

inputtransformer2 = pytest.importorskip("IPython.core.inputtransformer2", reason="the notebooks extra is not installed")


def ipython(cell: str) -> str:
    """What the kernel compiles for cell: IPython's own transformation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IPython warns about lines it split without a line ending
        return inputtransformer2.TransformerManager().transform_cell(cell)


def _ipython_call(node: ast.stmt) -> tuple[str, list] | None:
    """('system', [args]) for a statement `get_ipython().system(...)`, and so on; None for any other statement."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)):
        return None
    inner = func.value.func
    if not (isinstance(inner, ast.Name) and inner.id == "get_ipython"):
        return None
    args = node.value.args
    if not all(isinstance(arg, ast.Constant) for arg in args):
        return None
    return func.attr, [arg.value for arg in args]


class _Reproduced(ast.NodeTransformer):
    """IPython's calls in the form the grader gives them: S for %time S, pass for a call that changes no name."""

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(item, ast.stmt) for item in value):
                body = [new for item in value for new in self._replace(item) if not isinstance(new, ast.Pass)]
                setattr(node, field, body or ([] if isinstance(node, ast.Module) else [ast.Pass()]))
            elif isinstance(value, ast.AST):
                self.visit(value)
        return node

    def _replace(self, node: ast.stmt) -> list[ast.stmt]:
        call = _ipython_call(node)
        if call is None:
            return [self.visit(node)]  # (a statement's own lists are visited in turn)
        kind, args = call
        if kind in ("system", "show_usage") or (kind == "run_line_magic" and args[0] in {*NO_EFFECT_MAGICS, "psearch"}):
            return [ast.Pass()]
        if kind == "run_line_magic" and args[0] == "time":
            return ast.parse(args[1]).body
        if kind == "run_cell_magic" and args[0] in FOREIGN_CELL_MAGICS:
            return [ast.Pass()]
        if kind == "run_cell_magic" and args[0] in BODY_CELL_MAGICS and not args[1]:
            return _reproduced(ipython(args[2])).body
        raise AssertionError(f"the grader accepted a cell IPython turns into {kind}{tuple(args)}")


def _reproduced(text: str) -> ast.Module:
    return _Reproduced().visit(ast.parse(text))


def assert_same_program(cell: str) -> None:
    """The grader refuses cell, or runs the program the kernel runs."""
    try:
        ours, _notes = kernel_code(cell, "cell 1")
    except Refused:
        return
    try:
        theirs = _program(ipython(cell))
    except SyntaxError:  # IPython itself gives up: the kernel runs nothing of the cell
        theirs = None
    mine = _program(ours)
    assert (mine is None) == (theirs is None), f"only one fails to compile: {cell!r}: grader {ours!r}"
    assert mine == theirs, f"{cell!r}: the grader runs {ours!r}, IPython {ipython(cell)!r}"


def _program(text: str) -> str | None:
    """The program text stands for (`pass` lines count for nothing), or None when Python cannot compile it."""
    try:
        return ast.dump(_reproduced(text))
    except (SyntaxError, ValueError):
        return None


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


CELLS = [
    "def winner(board):\n    return None\n",
    "# note\x1cdef winner(board): return 'X'",  # one comment to Python, two lines to str.splitlines
    "# note\x1c%time x = 1",
    "x = 1\x0cy = 2",
    "x = 1\ry = 2",
    "x = 1\r\ny = 2\r\n",
    "s = 'a\u2028b'",
    "%time winner = 3",
    "%time x = 1\nprint(x)",
    "import math\n%timeit math.sqrt(2)",
    "x = 1\n!ls\nx?\n%matplotlib inline\n??x",
    "%%time\nx = 1\n%time y = 2",
    "%%capture\nz = 3",
    "%%capture out\nz = 3",
    "%%bash\nls\n",
    "%%writefile rules.py\nx = 1",
    "%%timeit\nsum(range(3))",
    "   x = 1\n   y = 2",
    "    # a comment\nx = '''\n    kept\n'''",
    ">>> x = 1\n... ",
    "In [1]: x = 5\n   ...: y = 6",
    "x = [\n...\n]",
    "def f():\n    ...\n",
    "files = !ls",
    "b = %who_ls",
    "def f():\n    %time g()",
    "get_ipython().system('ls')",
    'T = """\n%d percent\n!important\n"""\n%load_ext autoreload',
    "x = (1,\n%2)\n%load_ext y",
    "x = 1  # why?\n%pwd",
    "x = 1 \\\n%time y",
    "/f 1",
    "\n\n\nx = 1",
    "x?  # what is it",
    'def f():\n    """\n    >>> f()\n    1\n    """\n    return 1\n',
    'x = """\n>>> a\n"""\n',
]


@pytest.mark.parametrize("cell", CELLS)
def test_the_grader_runs_what_ipython_runs(cell):
    """Is each cell refused, or the same program for the grader and for IPython?"""
    assert_same_program(cell)


FRAGMENTS = [
    "x = 1", "%time y = 2", "%timeit f()", "!ls", "x?", "??x", "%matplotlib inline", "# note", "def f():",
    "    return 1", "    %time g()", "'''", '"""', ">>> x = 1", "... ", "In [1]: z = 3", "   ...: w = 4",
    "%%time", "%%capture", "%%bash", "a = !ls", "b = %who_ls", "/f 1", "get_ipython()", "", "   ", "    x = 2",
    "s = 'a#b?'", "t = 1  # why?", "(1,", "%2)", "x = 1 \\", "...", "    ...", "    pass", "if x:",
    "\t%pwd", "%%time?", "x = %time y", "% time x", "%", "!", "?", "%%", "f'{x}'", "class C:", "'a\\",
    "%%writefile m.py", "y = [%who]", "\tx = 1", "%time -n1 x", "%time", "print(x)?", "%pwd?", "x ?",
    "  # c", "%%capture out",
]  # fmt: skip
BREAKS = ["\n"] * 8 + ["\x1c", "\x0c", "\x0b", "\r", "\r\n", "\u2028", "\x85", "\x1e"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.sampled_from(BREAKS)), max_size=8))
def test_generated_cells_run_what_ipython_runs(pieces):
    """Fuzzing: does any mix of Python, IPython syntax and odd line breaks make the two readings differ?"""
    assert_same_program("".join(fragment + brk for fragment, brk in pieces))


@pytest.mark.parametrize(
    "cell",
    ["def winner(board):\n    return None", "x = 1\n\n\ny = [\n  1,\n]\n", "s = '%d' % 3\nt = a != b", "print(x)?"],
)
def test_plain_python_is_never_refused(cell):
    """Plain Python (and a plain SyntaxError) goes through untouched: refusing is only for IPython's syntax."""
    assert kernel_code(cell, "cell 1")[0].rstrip("\n") == cell.rstrip("\n") or cell.endswith("?")


@pytest.mark.parametrize(
    "cell, complaint",
    [
        ("# note\x1c%time x", "holds the character '\\x1c', a line break for Jupyter but not for Python"),
        ("%timeit f()", "uses the IPython magic `%timeit f()`"),
        ("files = !ls", "a name given the result of a magic or shell command"),
        ("get_ipython().run_line_magic('time', 'x = 1')", "calls get_ipython()"),
        ("shell = \uff47et_ipython()", "calls get_ipython()"),  # a fullwidth g: Python reads the name in NFKC
        ("%%timeit\nf()", "starts with the cell magic `%%timeit`"),
        ("def f():\n    %time g()", "uses the IPython magic `%time g()`"),
    ],
)
def test_refusals_say_why(cell, complaint):
    with pytest.raises(Refused) as caught:
        kernel_code(cell, "cell 2")
    assert str(caught.value).startswith("cell 2 ") and complaint in str(caught.value)


def test_a_huge_cell_is_read_in_linear_time():
    """Long lines and many lines of IPython syntax cost a pass each, not a backtracking search."""
    import time

    started = time.process_time()
    kernel_code(" " * 1_000_000 + "!x", "cell 1")
    kernel_code("%pwd\n" * 100_000, "cell 1")
    kernel_code("'" * 200_000 + "\n=" + " " * 500_000 + "y\n%pwd", "cell 1")
    assert time.process_time() - started < 10
