"""The report's plots as shapes: where each bar, line and label goes. templates/plot.svg.j2 draws them.

The geometry is worked out here in Python and the SVG markup lives in the template, so every label (a test's
name comes from the results) is escaped by Jinja like the rest of the page. Each plot is an inline SVG with a
viewBox, so it scales with the page and needs nothing else to draw.
"""

import statistics
from dataclasses import dataclass, field
from typing import ClassVar

from autograder.course.stages import TOTAL_POINTS
from autograder.outputs.gradesheet import points
from autograder.outputs.report.views import PassRate
from autograder.outputs.stats import number

GREEN, AMBER, RED = "#2f9e5f", "#e3a21a", "#d64541"  # full marks, some, none
INK, MUTED, GREY, TRACK, GRID = "#1f2933", "#5f6b7a", "#9aa3ad", "#eef0f3", "#e3e7ec"
LABEL_CHARACTERS = 36  # a longer test name is cut with "…" (the bar's tooltip has it whole)
LABEL_SIZE = 14  # the pass-rate chart's labels, in its own units


@dataclass(frozen=True)
class Span:
    """A run of a label's text, in its own colour or weight (an SVG tspan when it has either)."""

    text: str
    fill: str | None = None
    bold: bool = False


@dataclass(frozen=True)
class Text:
    kind: ClassVar[str] = "text"
    x: float
    y: float
    spans: tuple[Span, ...]
    size: int
    fill: str = INK
    anchor: str = "middle"
    bold: bool = False


@dataclass(frozen=True)
class Rect:
    kind: ClassVar[str] = "rect"
    x: float
    y: float
    width: float
    height: float
    fill: str
    rx: float = 0
    title: str = ""  # the tooltip


@dataclass(frozen=True)
class Line:
    kind: ClassVar[str] = "line"
    x1: float
    x2: float
    y1: float
    y2: float
    stroke: str
    dash: str = ""
    width: float = 0  # 0: the default stroke width


@dataclass(frozen=True)
class Group:
    """Shapes under one tooltip."""

    kind: ClassVar[str] = "group"
    title: str
    shapes: tuple


@dataclass
class Plot:
    width: int
    height: int
    label: str  # what a screen reader says
    shapes: list = field(default_factory=list)


def text(x: float, y: float, content: str, size: int, fill: str = INK, **style) -> Text:
    return Text(round(x, 1), round(y, 1), (Span(content),), size, fill, **style)


def grades_histogram(totals: list[float], max_total: float = TOTAL_POINTS, bins: int = 10) -> Plot:
    """Students per tenth of the possible points, with the median marked: the final grades (record.FinalGrade),
    extra credit above the possible points in the top tenth."""
    # 420 units wide: on a phone (about 360 px for the chart) a 12-unit label is still over 10 px high.
    width, height, left, right, top, bottom = 420, 250, 14, 14, 40, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    counts = [0] * bins
    for total in totals:
        counts[min(int(total / max_total * bins), bins - 1) if max_total else 0] += 1
    tallest = max(counts, default=0) or 1
    plot, step = Plot(width, height, "histogram of final grades"), plot_w / bins
    for index, count in enumerate(counts):
        x, bar_h = left + index * step, plot_h * count / tallest
        low = round(max_total * index / bins)
        high = round(max_total * (index + 1) / bins) - (0 if index == bins - 1 else 1)
        colour = GREEN if index >= bins * 0.8 else RED if index < bins * 0.5 else AMBER
        bar_y = top + plot_h - bar_h
        tooltip = f"{low}–{high}: {count} students"
        plot.shapes.append(
            Rect(round(x + 2, 1), round(bar_y, 1), round(step - 4, 1), round(bar_h, 1), colour, 3, tooltip)
        )
        if count:
            plot.shapes.append(text(x + step / 2, bar_y - 5, str(count), 13, bold=True))
        plot.shapes.append(text(x, top + plot_h + 17, points(low), 12, MUTED))  # an axis: each bin's low end
    plot.shapes.append(text(width - right, top + plot_h + 17, points(max_total), 12, MUTED))
    plot.shapes.append(Line(left, width - right, top + plot_h, top + plot_h, GREY))
    if totals:
        median = statistics.median(totals)
        x = round(left + plot_w * min(median / max_total, 1) if max_total else left, 1)
        plot.shapes.append(Line(x, x, top - 22, top + plot_h, INK, dash="4 3", width=1.5))
        anchor = "end" if x > width * 0.8 else "start"
        label_x = x - 4 if anchor == "end" else x + 4
        plot.shapes.append(text(label_x, top - 26, f"median {number(median)}", 12, anchor=anchor))
    else:
        plot.shapes.append(text(width / 2, top + plot_h / 2, "no submissions graded yet", 15, MUTED))
    plot.shapes.append(text(width / 2, height - 4, f"final grade (out of {points(max_total)})", 12, MUTED))
    return plot


def stage_histogram(scores: list[float], max_score: int) -> Plot:
    """One bar per whole point from 0 to max_score: red at zero, green at full marks."""
    width, height, left, right, top, bottom = 160, 82, 4, 4, 14, 16
    plot_w, plot_h = width - left - right, height - top - bottom
    counts = [0] * (max_score + 1)
    for score in scores:
        counts[max(0, min(int(score), max_score))] += 1
    tallest = max(counts, default=0) or 1
    step = plot_w / len(counts)
    plot = Plot(width, height, f"histogram of scores out of {max_score}")
    for value, count in enumerate(counts):
        bar_h = plot_h * count / tallest
        colour = GREEN if value == max_score else RED if value == 0 else AMBER
        x, bar_y = left + value * step, top + plot_h - bar_h
        tooltip = f"{value} points: {count} students"
        bar_w = round(max(step - 1.5, 1), 2)
        plot.shapes.append(Rect(round(x + 0.75, 2), round(bar_y, 2), bar_w, round(bar_h, 2), colour, 1.5, tooltip))
        if count and value in (0, max_score):
            plot.shapes.append(text(x + step / 2, bar_y - 3, str(count), 11, bold=True))
    plot.shapes.append(Line(left, width - right, top + plot_h, top + plot_h, GREY))
    for value in (0, max_score):
        plot.shapes.append(text(left + (value + 0.5) * step, height - 4, str(value), 11, MUTED))
    if not scores:
        plot.shapes.append(text(width / 2, top + plot_h / 2, "no data", 12, MUTED))
    return plot


# The pass-rate bars' colours by rate, with the words of the chart's key: only a test every module passed is green.
RATE_KEY = ((1.0, GREEN, "all passed"), (0.5, AMBER, "half or more"), (0.0, RED, "under half"))


def rate_colour(rate: float) -> str:
    return next(colour for least, colour, _ in RATE_KEY if rate >= least)


def short_labels(labels: list[str]) -> list[str]:
    """Each label cut to LABEL_CHARACTERS with "…"; two different labels that would read the same are cut in the
    middle instead, so their ends (where tests of one function differ) still tell them apart."""

    def cut(label: str) -> str:
        return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "…"

    def middle(label: str) -> str:
        if len(label) <= LABEL_CHARACTERS:
            return label
        half = (LABEL_CHARACTERS - 1) // 2
        return label[:half] + "…" + label[-(LABEL_CHARACTERS - 1 - half) :]

    first = [cut(label) for label in labels]
    whole: dict[str, set[str]] = {}
    for label, short in zip(labels, first, strict=True):
        whole.setdefault(short, set()).add(label)
    clash = {short for short, found in whole.items() if len(found) > 1}
    return [middle(label) if short in clash else short for label, short in zip(labels, first, strict=True)]


def pass_rate_bars(rows: list[PassRate]) -> Plot:
    """One horizontal bar per test, the lowest pass rate (over the working modules of its stage) first, coloured
    by its rate (RATE_KEY, drawn as the chart's key above the bars).

    Drawn 730 units wide with 14-unit labels; on a phone report.css keeps the chart at least 560 px wide (in a
    box of its own that scrolls sideways), so a label is never under 11 px high. The right margin holds
    "100% (999/999)" whole.
    """
    row_h, label_w, bar_w, right, key_h = 26, 400, 200, 130, 24
    top = key_h + 6
    width, height = label_w + bar_w + right, top + row_h * max(len(rows), 1) + 6
    plot = Plot(width, height, "pass rate of every test, most failed first")
    x = label_w
    for _, colour, words in RATE_KEY:
        plot.shapes += [Rect(x, 6, 14, 14, colour, rx=3), text(x + 20, 18, words, 13, MUTED, anchor="start")]
        x += 30 + 8 * len(words)
    for tick in (0, 0.5, 1):
        x = label_w + bar_w * tick
        plot.shapes.append(Line(x, x, top, height - 4, GRID))
    labels = short_labels([row.label for row in rows])
    for index, (row, label) in enumerate(zip(rows, labels, strict=True)):
        y = top + index * row_h
        baseline = round(y + row_h / 2 + 4, 1)
        rate, students = row.rate, row.working
        if not students:
            rate = 0.0
        colour = rate_colour(rate)
        hidden = "" if row.visible else " (hidden)"
        name = (Span(row.stage[:2], bold=True), Span(f" {label}"), Span(hidden, GREY))
        share = (Span(f"{rate:.0%} "), Span(f"({row.passed}/{students})", MUTED))
        shapes = (
            Text(label_w - 8, baseline, name, LABEL_SIZE, anchor="end"),
            Rect(label_w, y + 4, bar_w, row_h - 8, TRACK, rx=3),
            Rect(label_w, y + 4, round(bar_w * rate, 1), row_h - 8, colour, rx=3),
            Text(label_w + bar_w + 8, baseline, share, LABEL_SIZE, anchor="start"),
        )
        plot.shapes.append(Group(f"{row.name}{hidden}: {row.passed} of {students} passed", shapes))
    if not rows:
        plot.shapes.append(text(width / 2, top + 15, "no tests graded yet", 13, MUTED))
    return plot
