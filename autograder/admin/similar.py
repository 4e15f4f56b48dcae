"""`autograde similar SUBMISSIONS --out OUT`: pairs of students whose code for a stage is much alike, for a human.

Each stage's code is compared across the class with copydetect (the winnowing fingerprints of MOSS): the code is
tokenized by Pygments, never run, and every name becomes one letter, so renaming variables hides nothing. The
starter every student was given (authoring/build.py) is boilerplate: its fingerprints count for no one. A pair
is listed when the code one of them shares with the other is at least --threshold of their own code (beyond the
starter). The page, OUT/similar.html, shows each pair side by side with the shared code marked; it is a lead for
a human to read, not a verdict: short exercises, a hint followed closely or a common tutorial make honest code
alike. The class report links it.

Submissions are read with the grader's reader (grading/submissions.py: no links followed, sizes capped, zips and
notebooks), so a stage is compared exactly as it would be graded.
"""

from __future__ import annotations

import argparse
import functools
import io
import itertools
import logging
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring import build
from autograder.course.stages import STAGES, Stage
from autograder.grading.submissions import ClassError, Submission, find_class, read_student
from autograder.outputs import clean_line, write_atomically
from autograder.outputs.command_line import fail
from autograder.outputs.folders import REPORT, blocked_output

PAGE = "similar.html"
DEFAULT_THRESHOLD = 0.8
# copydetect's defaults: fingerprints of 25 tokens, and (window 1) every one of them kept, not a winnowed
# sample: the same pairs and figures on every run, whatever Python's string hashing seed.
NOISE_TOKENS = 25
WINDOW = 1
MAX_PAIRS = 200  # pairs shown on the page, the most alike first; the page says how many more there were


@dataclass(frozen=True)
class Segment:
    text: str
    shared: bool  # part of the code the other student's file has too


@dataclass(frozen=True)
class Side:
    student: str
    file: str  # as the student named it
    share: float  # of this student's own code (beyond the starter), the part found in the other's
    segments: list[Segment]


@dataclass(frozen=True)
class Pair:
    stage: Stage
    left: Side
    right: Side

    @property
    def share(self) -> float:
        return max(self.left.share, self.right.share)


@dataclass(frozen=True)
class StageSummary:
    stage: Stage
    compared: int  # students with code of their own for the stage
    pairs: int  # above the threshold


@dataclass(frozen=True)
class SimilarPage:
    threshold: float
    noise_tokens: int
    students: int
    stages: list[StageSummary]
    pairs: list[Pair]  # at most MAX_PAIRS, the most alike first
    more: int  # pairs above the threshold not shown


def _copydetect():
    """copydetect, imported only by this verb (it brings numpy and matplotlib), its warnings kept quiet."""
    try:
        import copydetect
    except ImportError as error:
        raise ClassError(
            "comparing submissions needs copydetect: pip install 'tictactoe-minimax-course[similar]'"
        ) from error
    logging.getLogger().addHandler(logging.NullHandler())  # it logs files it cannot tokenize; ours are Python
    return copydetect


@functools.cache
def _boilerplate(stage: Stage):
    """The fingerprints of the stage's starter, which count for no one."""
    import numpy

    copydetect = _copydetect()
    starter = copydetect.CodeFingerprint(stage.filename, NOISE_TOKENS, 1, fp=io.StringIO(build.starter(stage)))
    return numpy.unique(numpy.array(sorted(starter.hashes), dtype=numpy.int64))


def _segments(text: str, slices) -> list[Segment]:
    """text cut into the shared and the unshared parts, from copydetect's (starts, ends) character slices."""
    spans = sorted((int(start), int(end)) for start, end in zip(slices[0], slices[1], strict=True))
    segments, position = [], 0
    for start, end in spans:
        start, end = max(start, position), min(end, len(text))
        if start >= end:
            continue
        if start > position:
            segments.append(Segment(text[position:start], False))
        segments.append(Segment(text[start:end], True))
        position = end
    if position < len(text):
        segments.append(Segment(text[position:], False))
    return segments


def similar_pairs(submissions: list[Submission], threshold: float) -> tuple[list[Pair], list[StageSummary]]:
    """Every pair of students whose code for a stage is at least threshold alike, the most alike first."""
    copydetect = _copydetect()
    pairs: list[Pair] = []
    summaries = []
    for stage in STAGES:
        boilerplate = _boilerplate(stage)
        prints = {}
        for submission in submissions:
            source = submission.sources.get(stage.id)
            if source is None:
                continue
            fingerprint = copydetect.CodeFingerprint(
                stage.filename, NOISE_TOKENS, WINDOW, boilerplate=boilerplate, fp=io.StringIO(source.text)
            )
            if fingerprint.token_coverage > 0:  # not just the starter: something of their own to compare
                prints[submission.student] = (source, fingerprint)
        found = 0
        for one, other in itertools.combinations(sorted(prints), 2):
            (source_a, print_a), (source_b, print_b) = prints[one], prints[other]
            _, (share_a, share_b), (slices_a, slices_b) = copydetect.compare_files(print_a, print_b)
            share_a, share_b = min(float(share_a), 1.0), min(float(share_b), 1.0)
            if max(share_a, share_b) < threshold:
                continue
            found += 1
            pairs.append(
                Pair(
                    stage,
                    Side(one, source_a.name, share_a, _segments(source_a.text, slices_a)),
                    Side(other, source_b.name, share_b, _segments(source_b.text, slices_b)),
                )
            )
        summaries.append(StageSummary(stage, len(prints), found))
    order = {stage.id: index for index, stage in enumerate(STAGES)}
    pairs.sort(key=lambda pair: (-round(pair.share, 6), order[pair.stage.id], pair.left.student, pair.right.student))
    return pairs, summaries


def similar_page(submissions: list[Submission], threshold: float) -> SimilarPage:
    pairs, summaries = similar_pairs(submissions, threshold)
    return SimilarPage(
        threshold, NOISE_TOKENS, len(submissions), summaries, pairs[:MAX_PAIRS], max(0, len(pairs) - MAX_PAIRS)
    )


def page_html(page: SimilarPage) -> str:
    from autograder.outputs.report.pages import environment

    return environment().get_template("similar.html.j2").render(page=page)


def threshold_problem(text: str) -> tuple[float | None, str | None]:
    try:
        value = float(text)
    except ValueError:
        return None, f"--threshold must be a number between 0 and 1, not {text!r}"
    if not math.isfinite(value) or not 0 < value <= 1:
        return None, f"--threshold must be more than 0 and at most 1 (a share of the code), not {text}"
    return value, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde similar", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder with one folder or .zip per student")
    parser.add_argument("--out", type=Path, required=True, help=f"where to write {PAGE} (grade's OUT links it)")
    parser.add_argument(
        "--threshold",
        default=str(DEFAULT_THRESHOLD),
        help="list a pair when at least this share of one student's own code is in the other's (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    threshold, problem = threshold_problem(args.threshold)
    if problem:
        return fail("autograde similar", f"{problem}")
    try:
        students = find_class(args.submissions, args.out).students
        _copydetect()
        if args.out.exists() and not args.out.is_dir():
            raise ClassError(f"cannot write to {args.out}: it is not a folder")
        if blocked := blocked_output(args.out, PAGE):
            raise ClassError(blocked)
    except (ClassError, OSError) as error:
        return fail("autograde similar", str(error))
    submissions = [read_student(name, path) for name, path in students]
    page = similar_page(submissions, threshold)
    path = args.out / PAGE
    try:
        write_atomically(path, page_html(page))
    except OSError as error:
        return fail("autograde similar", f"cannot write {path}: {clean_line(error.strerror or error)}")
    shown = len(page.pairs) + page.more
    print(f"Wrote {path}: {shown} pair(s) at least {threshold:.0%} alike among {len(submissions)} students.")
    if (args.out / REPORT).exists():
        print("The class report links it from the next `autograde grade --out` into the same folder.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
