"""One notebook code cell -> the Python source the Jupyter kernel runs for it, or a clear refusal.

Standard library only. IPython rewrites a cell before Python compiles it (TransformerManager.transform_cell):
it drops leading blank lines, removes an indentation shared by the whole cell, strips pasted `>>>` and
`In [1]:` prompts, and turns magics, shell escapes and help requests into `get_ipython()` calls. It splits
lines with str.splitlines, which also breaks at \\x0b, \\x0c, \\x1c-\\x1e, \\x85, \\u2028 and \\u2029, while Python
breaks only at \\n, \\r\\n and \\r: text that IPython reads as a `%magic` line can be a comment to Python.

So the grader copies IPython's clean-up steps exactly (they are a few regular expressions, taken from IPython
9's inputtransformer2, BSD-3-Clause), and then runs the cell as it is whenever IPython would change nothing
else: the cell parses as Python and none of IPython's lines could hold IPython syntax. Otherwise it reproduces
what it can reproduce exactly (`%time STATEMENT` and `%%time` / `%%capture` run their code; magics that only
set up the front end, shell escapes and help requests do nothing to the code's names) and refuses the rest
(`%timeit`, `%run`, `x = !ls`, `get_ipython()`, ...), since guessing would grade other code than the kernel
runs. tests/test_notebook_cells.py compares every decision with the real IPython.
"""

import ast
import re
from textwrap import dedent

from autograder.course import parsing

# Where str.splitlines (IPython) breaks a line and Python does not, or not the same way.
FOREIGN_BREAKS = frozenset("\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\r")
_FOREIGN_BREAK = re.compile("[" + "".join(sorted(FOREIGN_BREAKS)) + "]")
# Line magics that only set up the front end, the display or the environment: nothing the grader runs
# depends on them, so a line holding one does nothing in the grader.
NO_EFFECT_MAGICS = frozenset(
    "matplotlib load_ext reload_ext unload_ext autoreload aimport config pip conda mamba who whos lsmagic magic "
    "pwd ls ll history hist pprint precision xmode colors quickref pinfo pinfo2 pdoc pdef psource pfile "
    "automagic autoindent doctest_mode page".split()
)
# Cell magics whose body is not Python run in the kernel's namespace (another language, a file, a display).
FOREIGN_CELL_MAGICS = frozenset(
    "bash sh script html javascript js markdown latex svg writefile file perl ruby python python2 python3 "
    "pypy sx system".split()
)
# Cell magics whose body runs as a cell of its own, in the kernel's namespace, when they have no arguments.
BODY_CELL_MAGICS = frozenset({"time", "capture"})
MAX_NESTING = 8  # %%time inside %%capture inside ...: deeper is refused


class Refused(ValueError):
    """The grader cannot run this cell as the kernel would; the message says why and what to do."""


# --- IPython's clean-up transforms, as IPython 9 has them (inputtransformer2.py) ---------------------------


def _leading_empty_lines(lines: list[str]) -> list[str]:
    for index, line in enumerate(lines):
        if line and not line.isspace():
            return lines[index:]
    return lines


def _leading_indent(lines: list[str]) -> list[str]:
    return dedent("".join(lines)).splitlines(keepends=True) if lines else lines


class _PromptStripper:
    def __init__(self, prompt_re, initial_re=None, *, doctest=False):
        self.prompt_re = prompt_re
        self.initial_re = initial_re or prompt_re
        self.doctest = doctest
        if doctest:
            self._doctest_initial_re = re.compile(r"^\s*>>>")
            self._doctest_ps1_re = re.compile(r"^\s*>>>[ \t]?")
            self._doctest_ps2_re = re.compile(r"^\s*\.\.\.[ \t]?")
            self._triple_quote_re = re.compile(r"(?<!\\)(\"\"\"|''')")

    def _triple_quote_mask(self, lines: list[str]) -> list[bool]:
        mask: list[bool] = []
        in_triple = None
        preserve_prompt = seen_prompt = False
        string_prefix_re = re.compile(r"(?i)^[rubf]*$")
        for line in lines:
            mask.append(in_triple is not None and preserve_prompt)
            for match in self._triple_quote_re.finditer(line):
                quote = match.group(1)
                if in_triple is None:
                    in_triple = quote
                    before_quote = line[: match.start()]
                    stripped = self._doctest_ps1_re.sub("", before_quote, count=1)
                    stripped = self._doctest_ps2_re.sub("", stripped, count=1)
                    prompted_code = stripped != before_quote and seen_prompt
                    preserve_prompt = bool(not prompted_code and string_prefix_re.match(stripped.strip()))
                    mask[-1] = preserve_prompt
                elif in_triple == quote:
                    in_triple = None
                    preserve_prompt = False
            seen_prompt = seen_prompt or bool(self._doctest_initial_re.match(line))
        return mask

    def __call__(self, lines: list[str]) -> list[str]:
        if not lines:
            return lines
        if self.doctest:
            return self._doctest(lines)
        if self.initial_re.match(lines[0]) or (len(lines) > 1 and self.prompt_re.match(lines[1])):
            return [self.prompt_re.sub("", line, count=1) for line in lines]
        return lines

    def _doctest(self, lines: list[str]) -> list[str]:
        triple_mask = self._triple_quote_mask(lines)
        pairs = zip(lines, triple_mask, strict=True)
        if not any(not inside and self._doctest_initial_re.match(line) for line, inside in pairs):
            return lines
        out_lines: list[str] = []
        stripped_mask: list[bool] = []
        for line, inside in zip(lines, triple_mask, strict=True):
            if inside:
                out_lines.append(line)
                stripped_mask.append(False)
                continue
            if self._doctest_ps1_re.match(line):
                new = self._doctest_ps1_re.sub("", line, count=1)
            elif self._doctest_ps2_re.match(line):
                new = self._doctest_ps2_re.sub("", line, count=1)
            else:
                new = line
            out_lines.append(new)
            stripped_mask.append(new != line)
        dedented: list[str] = []
        start = 0
        while start < len(out_lines):
            end = start
            while end < len(out_lines) and triple_mask[end] == triple_mask[start]:
                end += 1
            segment = out_lines[start:end]
            if not triple_mask[start] and any(stripped_mask[start:end]):
                dedented.extend(dedent("".join(segment)).splitlines(keepends=True))
            else:
                dedented.extend(segment)
            start = end
        return dedented


_CLASSIC_PROMPT = _PromptStripper(re.compile(r"^(>>>|\.\.\.)( |$)"), re.compile(r"^>>>( |$)"), doctest=True)
_IPYTHON_PROMPT = _PromptStripper(
    re.compile(
        r"""
        ^(                         # Match from the beginning of a line, either:

                                   # 1. First-line prompt:
        ((\[nav\]|\[ins\])?\ )?    # Vi editing mode prompt, if it's there
        In\                        # The 'In' of the prompt, with a space
        \[\d+\]:                   # Command index, as displayed in the prompt
        \                          # With a mandatory trailing space

        |                          # ... or ...

                                   # 2. The three dots of the multiline prompt
        \s*                        # All leading whitespace characters
        \.{3,}:                    # The three (or more) dots
        \ ?                        # With an optional trailing space

        )
        """,
        re.VERBOSE,
    )
)


def _cleaned(cell: str) -> tuple[int, list[str], bool]:
    """(leading blank lines IPython drops, the lines after IPython's clean-up, whether it changed them)."""
    lines = (cell if cell.endswith("\n") else cell + "\n").splitlines(keepends=True)
    kept = before = _leading_empty_lines(lines)
    for step in (_leading_indent, _CLASSIC_PROMPT, _IPYTHON_PROMPT):
        kept = step(kept)
    return len(lines) - len(before), kept, kept != before


# --- What the kernel runs ------------------------------------------------------------------------------


def kernel_code(cell: str, where: str, depth: int = 0) -> tuple[str, list[str]]:
    """(the Python the kernel runs for this cell, notes for the student); raises Refused when it cannot tell.

    `where` names the cell in messages ("cell 3"). Leading blank lines that IPython drops stay as empty
    lines, so line numbers still match the notebook's.
    """
    dropped, lines, changed = _cleaned(cell)
    cleaned = f"{where}: ran the cell as Jupyter does, without its pasted prompts or shared indentation"
    notes = [cleaned] if changed else []
    head = "\n" * dropped
    if lines and lines[0].startswith("%%"):
        body, cell_notes = _cell_magic(lines, where, depth)
        return head + body, notes + cell_notes
    text = "".join(lines)
    foreign = _FOREIGN_BREAK.search(text) is not None
    tree = _tree_of(text)
    if tree is not None:
        if foreign and (flagged := next((line for line in text.splitlines() if _maybe_ipython(line)), None)):
            _refuse_foreign(where, text, flagged)
        _refuse_get_ipython(tree, text, where)
        return head + text, notes
    if foreign:
        if flagged := next((line for line in text.splitlines() if _maybe_ipython(line)), None):
            _refuse_foreign(where, text, flagged)
        return head + text, notes  # no IPython syntax: Python's SyntaxError is what the kernel gives too
    code, line_notes = _line_syntax(text.split("\n"), where)
    return head + code, notes + line_notes


def ast_of(text: str) -> str | None:
    """The parse of text as Python (a dump, without positions), or None when it does not parse."""
    tree = _tree_of(text)
    return ast.dump(tree) if tree is not None else None


def _tree_of(text: str) -> ast.Module | None:
    try:
        return parsing.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _cell_magic(lines: list[str], where: str, depth: int) -> tuple[str, list[str]]:
    first = lines[0].rstrip()
    name, _, arguments = first[2:].partition(" ")
    shown = _quoted(first)
    if name in BODY_CELL_MAGICS and not arguments.strip() and depth < MAX_NESTING:
        body, notes = kernel_code("".join(lines[1:]), where, depth + 1)
        note = f"{where}: ran the body of `{shown}` as plain Python, as Jupyter does (without timing or capturing)"
        return "\n" + body, [note, *notes]
    if name in FOREIGN_CELL_MAGICS:
        note = f"{where}: left out the whole cell: `{shown}` makes it something other than Python code"
        return "pass  # a cell of another language\n" + "\n" * (len(lines) - 1), [note]
    raise Refused(
        f"{where} starts with the cell magic `{shown}`, which the grader cannot run as Jupyter does; "
        "remove that line (or move the cell out of the notebook you hand in)"
    )


# One physical line's code before its comment: strings on the line are skipped (a `#` inside one is no comment).
_CODE_PART = re.compile(r"""(?:[^'"#\\]+|\\.|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")*""")
_ASSIGNED_ESCAPE = re.compile(r"=\s*[%!]")
_MAGIC_NAME = re.compile(r"%(\w*)")
# `name?`, `a.b[0]??` at the end of a line: what IPython reads as a help request (its _help_end_re). Searched
# in a line's last 1,000 characters only, so a long line costs one pass (a longer name is no help request).
_HELP_END = re.compile(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$")


def _code_part(line: str) -> str:
    match = _CODE_PART.match(line)
    return match.group() if match else line


def _maybe_ipython(line: str) -> bool:
    """Whether IPython could read this line (one of its own lines) as IPython syntax: erring on yes."""
    text = line.strip(" \t\f\v")
    if not text or text.startswith("#"):
        return False
    return text[0] in "%!?/,;" or text.endswith("?") or bool(_ASSIGNED_ESCAPE.search(text))


def _refuse_foreign(where: str, text: str, flagged: str) -> None:
    char = _FOREIGN_BREAK.search(text).group()
    raise Refused(
        f"{where} holds the character {char!a}, a line break for Jupyter but not for Python, before "
        f"`{_quoted(flagged)}`, so the grader cannot tell which code Jupyter runs; remove the character"
    )


def _refuse_get_ipython(tree: ast.Module, text: str, where: str) -> None:
    # Python reads names in NFKC form (a fullwidth ｇet_ipython is get_ipython too), so only an ASCII text without
    # the word is passed over without a look at its names.
    if text.isascii() and "get_ipython" not in text:
        return
    if any(type(node) is ast.Name and node.id == "get_ipython" for node in ast.walk(tree)):
        raise Refused(f"{where} calls get_ipython(), which only Jupyter has; remove the call")


def _line_syntax(lines: list[str], where: str) -> tuple[str, list[str]]:
    """Rewrite a cell (only \\n line breaks) that does not parse: IPython's own syntax, line by line."""
    inside = string_interiors("\n".join(lines))
    notes: list[str] = []
    depth = 0
    continued = False
    for index, line in enumerate(lines):
        if index in inside:
            continued = False
            continue
        code = _code_part(line)
        text = line.lstrip(" \t")
        indent = line[: len(line) - len(text)]
        at_start = depth == 0 and not continued
        if "get_ipython" in code:
            raise Refused(f"{where} calls get_ipython(), which only Jupyter has; remove the call")
        kind = _ipython_kind(text, code.lstrip(" \t"))
        if kind is None or not at_start:  # Python code (a line inside brackets is never IPython's)
            depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
            continued = line[len(code) :] == "\\"  # a backslash that joins the next line (not one in a comment)
        if kind is None:
            continue
        shown = _quoted(text)
        if not at_start or line.endswith("\\"):
            raise Refused(f"{where} continues a line into `{shown}`, IPython syntax the grader cannot place; rewrite")
        replacement, note = _replacement(kind, text, indent, where)
        lines[index] = replacement
        notes.append(note)
    return "\n".join(lines), notes


def _ipython_kind(text: str, code: str) -> str | None:
    if not code:
        return None
    if code[0] == "%":
        return "magic"
    if code[0] == "!":
        return "shell"
    if code[0] == "?" or (code == text.rstrip() and code.endswith("?") and _HELP_END.search(code[-1000:])):
        return "help"
    if code[0] in "/,;":
        return "autocall"
    if _ASSIGNED_ESCAPE.search(code):
        return "assignment"
    return None


def _replacement(kind: str, text: str, indent: str, where: str) -> tuple[str, str]:
    shown = _quoted(text)
    if kind == "shell":
        return f"{indent}pass  # shell escape", f"{where}: left out the shell escape `{shown}` (a shell command)"
    if kind == "help":
        return f"{indent}pass  # help request", f"{where}: left out the help request `{shown}`"
    if kind == "magic":
        name = _MAGIC_NAME.match(text).group(1)
        if name in NO_EFFECT_MAGICS:
            return f"{indent}pass  # IPython magic", f"{where}: left out the IPython magic `{shown}`"
        statement = text[len("%time") :].strip()
        timed = name == "time" and not indent and statement and not statement.startswith("-")
        if timed and _tree_of(statement) is not None:
            return statement, f"{where}: ran `{shown}` as `{_quoted(statement)}`, as Jupyter does (without timing)"
        raise Refused(
            f"{where} uses the IPython magic `{shown}`, which the grader cannot run as Jupyter does; "
            "remove that line from the notebook you hand in"
        )
    what = "an IPython autocall" if kind == "autocall" else "a name given the result of a magic or shell command"
    raise Refused(f"{where} has {what}, `{shown}`, which only Jupyter can run; rewrite it as Python")


_QUOTE_OR_COMMENT = re.compile(r"[#'\"]")
# Inside a string: an escaped character (a backslash-newline too), the closing quotes, or (for one quote) a newline.
_STRING_STEP = {
    quote: re.compile(r"\\.|" + re.escape(quote) + ("" if len(quote) == 3 else r"|\n"), re.DOTALL)
    for quote in ("'", '"', "'" * 3, '"' * 3)
}


def string_interiors(source: str) -> set[int]:
    """Indexes of the lines that lie inside a multi-line string (a docstring line may start with `%`).

    One pass over quotes, comments and backslashes, linear in the source's length (the tokenize module
    takes minutes on one line of a few thousand spaces before a `!`). A string left open at the end
    gives no lines: the lines after its quote are judged one by one.
    """
    inside: set[int] = set()
    pos = counted = line = 0
    while match := _QUOTE_OR_COMMENT.search(source, pos):
        line += source.count("\n", counted, match.start())
        counted = pos = match.end()
        if match.group() == "#":
            pos = source.find("\n", pos)
            if pos < 0:
                break
            continue
        quote = match.group() * 3 if source.startswith(match.group() * 2, pos) else match.group()
        pos += len(quote) - 1
        step, first = _STRING_STEP[quote], line
        while (found := step.search(source, pos)) is not None and found.group()[0] == "\\":
            pos = found.end()
        if found is None:
            break
        pos = found.end()
        if found.group() == "\n":  # a one-quote string ends with its line (unfinished): nothing inside
            pos -= 1
            continue
        line += source.count("\n", counted, pos)
        counted = pos
        inside.update(range(first + 1, line + 1))
    return inside


def _quoted(text: str) -> str:
    from autograder.grading.intake.text import printable

    text = text.strip()
    return printable(text if len(text) <= 60 else text[:57] + "...", 80)
