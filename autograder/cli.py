"""The `autograde` command: one subcommand per verb, each a module with main(argv) -> exit code."""

import importlib
import sys

# subcommand -> (module in this package, one line of help). Modules are imported only when their verb is used.
COMMANDS = {
    "grade": ("verbs.grade", "grade a folder of submissions into grades.csv, results.json and a gradebook"),
    "merge": ("grading.merge", "combine the outputs of `grade --shard K/N` runs into one class's outputs"),
    "grading-workflow": ("grading.github_workflow", "write the GitHub Actions workflow grading a class in shards"),
    "verify": ("authoring.verify", "grade the references, starters and known-wrong variants; fail on surprises"),
    "check": ("practice.check", "run the visible tests of your stages and show what to fix first"),
    "hint": ("practice.hint", "one more hint for a stage each time (the last is the answer); --reset"),
    "play": ("practice.play", "play tic-tac-toe against your own minimax, or watch two players"),
    "build": ("authoring.build", "regenerate the starters (and notebooks) from solutions/; --check for drift"),
    "release": ("authoring.release", "write the student copy of the course and check it leaks nothing"),
    "site": ("authoring.site", "build the course as a static web site that runs offline: stages, tests, board"),
    "tournament": ("tournament.run", "play every student's player against every other and the reference players"),
    "gradescope": ("verbs.gradescope", "build a Gradescope autograder bundle (zip)"),
    "export": ("admin.exports", "write the latest grades as a Canvas, Moodle or plain CSV import file, by the roster"),
    "stats": ("outputs.stats", "what the class got wrong, who needs help and what needs a look (from the gradebook)"),
    "doctor": ("grading.doctor", "say which isolation this machine gives to student code, and why"),
    "override": ("admin.override_cli", "add an excuse, a changed score or a regrade outcome to the overrides file"),
    "publish": ("admin.publish", "write each student's feedback and results.json to hand back, hidden tests held back"),
    "similar": ("admin.similar", "list pairs of students whose code for a stage is much alike, for a human to read"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: autograde COMMAND [options]   (autograde COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"autograde: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"autograder.{COMMANDS[name][0]}")
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
