"""The class report (OUT/report.html) and each student's feedback page (OUT/<folder>/feedback.html).

Each page is one self-contained file: inline CSS and SVG plots drawn here, no script, no font or
stylesheet fetched, so it opens from disk on any machine. Student names and test outputs come from
submissions (an exception message is student-controlled text), so everything is escaped on the way in.

`python -m autograder.outputs.report --screenshot OUT/report.html shot.png` renders a page in headless
Chromium (Debian's chromium and chromium-driver, through selenium) to look at it without a desktop.
"""

import argparse
import html
import re
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from autograder.course.stages import STAGE_BY_ID, STAGES, TOTAL_POINTS
from autograder.grading.submissions import output_folder
from autograder.outputs import write_atomically
from autograder.outputs.gradesheet import points

# The child did not finish, or wrote to the grader's reply channel itself: worth an instructor's look.
FLAG_OUTCOMES = ("timeout", "crashed", "output-limit", "tampered")
OUTCOME_TEXT = {
    "timeout": "timed out",
    "crashed": "crashed",
    "output-limit": "printed too much",
    "tampered": "tampered with the grader",
    "ungraded": "not graded",  # the grader failed on the submission: see the report's "Could not be graded"
}
HIDDEN_NOTE = "Details are shown after the grades are published."
GREEN, AMBER, RED, GREY, INK = "#2f9e5f", "#e3a21a", "#d64541", "#9aa3ad", "#1f2933"

CSS = """
:root { --ink: #1f2933; --muted: #5f6b7a; --line: #e3e7ec; --bg: #f6f7f9; --good: #2f9e5f; --mid: #e3a21a;
  --bad: #d64541; --goodbg: #dcf2e4; --midbg: #fcefcf; --badbg: #f9dcda; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); line-height: 1.45;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 18px 24px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 0 0 2px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
a { color: #1d5fb4; }
.muted { color: var(--muted); }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 18px; margin: 14px 0; }
.kpis { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0 0; }
.kpi { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 8px 16px; min-width: 130px; }
.kpi b { display: block; font-size: 22px; }
.kpi span { color: var(--muted); font-size: 13px; }
.warn { background: var(--badbg); border: 2px solid var(--bad); border-radius: 10px; padding: 10px 16px;
  margin: 14px 0; }
.ok { color: var(--good); font-weight: 600; }
nav { font-size: 14px; margin: 8px 0 0; }
nav a { margin-right: 14px; }
.grid2 { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 7fr); gap: 14px; }
.grid2 > .card { margin: 0; }
.multiples { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 8px 14px; }
.multiples figure { margin: 0; }
figcaption { font-size: 12px; color: var(--muted); }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: inherit; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { position: sticky; top: 0; background: #fff; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.full { background: var(--goodbg); } td.part { background: var(--midbg); } td.zero { background: var(--badbg); }
td small, .tag { display: inline-block; font-size: 11px; color: #fff; background: var(--bad); border-radius: 4px;
  padding: 0 5px; margin-left: 4px; font-weight: 600; }
.tag.hidden { background: var(--muted); }
.tag.good { background: var(--good); }
.legend span { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -1px;
  margin: 0 4px 0 12px; }
.scroll { max-height: 560px; overflow: auto; }
.strip { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0 0; }
.strip a { text-decoration: none; color: var(--ink); border-radius: 8px; padding: 6px 12px; font-size: 13px;
  border: 1px solid var(--line); }
.strip a b { display: block; font-size: 16px; }
.full { background: var(--goodbg); } .part { background: var(--midbg); } .zero { background: var(--badbg); }
.test { border-top: 1px solid var(--line); padding: 8px 0; }
.test .head { display: flex; gap: 10px; align-items: baseline; }
.test .mark { font-weight: 700; width: 1.2em; }
.test.passed .mark { color: var(--good); } .test.failed .mark { color: var(--bad); }
.test .name { flex: 1; }
.test .pts { font-variant-numeric: tabular-nums; color: var(--muted); white-space: nowrap; }
.out { margin: 6px 0 0 2.2em; }
.out p { margin: 2px 0; }
pre { background: #f0f2f5; border-radius: 6px; padding: 6px 12px; display: inline-block; margin: 4px 0;
  font: 13px/1.3 "DejaVu Sans Mono", "Liberation Mono", monospace; }
code { background: #f0f2f5; border-radius: 4px; padding: 0 4px; font-size: 90%; }
details summary { cursor: pointer; color: var(--muted); font-size: 14px; }
@media (max-width: 900px) {
  .grid2 { grid-template-columns: 1fr; }
  .multiples { grid-template-columns: repeat(2, 1fr); }
}
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def page(title: str, body: str) -> str:
    # The empty data: icon stops the browser asking for /favicon.ico (a console error from a file:// page).
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<link rel="icon" href="data:,">\n<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n'
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def feedback_href(student: str) -> str:
    """The relative link from report.html to a student's page (names may hold spaces, '#', '?', ...)."""
    return f"{quote(output_folder(student), safe='')}/feedback.html"


def fill(score: float, max_score: float) -> str:
    """The colour class of a score: full marks, some, none."""
    return "full" if max_score and score >= max_score else "zero" if score <= 0 else "part"


def heat(score: float, max_score: float) -> str:
    """A background from red (none) through amber to green (full marks): the table reads as a heat map."""
    share = max(0.0, min(score / max_score, 1.0)) if max_score else 0.0
    return f"background: hsl({share * 135:.0f}, 65%, {88 - 6 * (share == 1):.0f}%)"


def stage_entries(result: dict) -> dict[str, dict]:
    return result.get("extra_data", {}).get("stages", {})


def total_of(result: dict) -> float:
    return result.get("extra_data", {}).get("total", result.get("score", 0))


def ungraded_of(result: dict) -> str | None:
    """Why the grader could not grade this submission, or None."""
    reason = result.get("extra_data", {}).get("ungraded")
    return None if reason is None else str(reason)


# ---------------------------------------------------------------------------------------------------------------
# Markdown-ish text: fenced code blocks become <pre>, other lines paragraphs, `code` and **bold** inline.


def markdown(text: str) -> str:
    parts, code = [], None
    for line in (text or "").splitlines():
        if line.strip().startswith("```"):
            if code is None:
                code = []
            else:
                parts.append(f"<pre>{esc(chr(10).join(code))}</pre>")
                code = None
            continue
        if code is not None:
            code.append(line)
        elif line.strip():
            parts.append(f"<p>{_inline(line.strip())}</p>")
    if code is not None:  # an unclosed fence still shows its text
        parts.append(f"<pre>{esc(chr(10).join(code))}</pre>")
    return "\n".join(parts)


def _inline(line: str) -> str:
    # Escape first: the patterns below then only ever see text, never markup a submission supplied.
    escaped = esc(line)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)


# ---------------------------------------------------------------------------------------------------------------
# Plots: inline SVG with a viewBox, so they scale with the page and need nothing else to draw.


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg">\n' + "\n".join(body) + "\n</svg>"
    )


def totals_histogram(totals: list[float], max_total: float = TOTAL_POINTS, bins: int = 10) -> str:
    """Students per tenth of the total, with the median marked."""
    width, height, left, right, top, bottom = 560, 290, 12, 12, 40, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    counts = [0] * bins
    for total in totals:
        counts[min(int(total / max_total * bins), bins - 1) if max_total else 0] += 1
    tallest = max(counts, default=0) or 1
    body, step = [], plot_w / bins
    for index, count in enumerate(counts):
        x, bar_h = left + index * step, plot_h * count / tallest
        low = round(max_total * index / bins)
        high = round(max_total * (index + 1) / bins) - (0 if index == bins - 1 else 1)
        colour = GREEN if index >= bins * 0.8 else RED if index < bins * 0.5 else AMBER
        body.append(
            f'<rect x="{x + 2:.1f}" y="{top + plot_h - bar_h:.1f}" width="{step - 4:.1f}" height="{bar_h:.1f}" '
            f'rx="3" fill="{colour}"><title>{low}–{high}: {count} students</title></rect>'
        )
        if count:
            body.append(
                f'<text x="{x + step / 2:.1f}" y="{top + plot_h - bar_h - 5:.1f}" text-anchor="middle" '
                f'font-size="13" font-weight="600" fill="{INK}">{count}</text>'
            )
        body.append(
            f'<text x="{x + step / 2:.1f}" y="{top + plot_h + 17}" text-anchor="middle" font-size="12" '
            f'fill="#5f6b7a">{low}–{high}</text>'
        )
    body.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#9aa3ad"/>')
    if totals:
        median = statistics.median(totals)
        x = left + plot_w * min(median / max_total, 1) if max_total else left
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 22}" y2="{top + plot_h}" stroke="{INK}" '
            'stroke-dasharray="4 3" stroke-width="1.5"/>'
        )
        anchor = "end" if x > width * 0.8 else "start"
        offset = -4 if anchor == "end" else 4
        body.append(
            f'<text x="{x + offset:.1f}" y="{top - 26}" text-anchor="{anchor}" font-size="12" fill="{INK}">'
            f"median {esc(points(median))}</text>"
        )
    else:
        body.append(
            f'<text x="{width / 2}" y="{top + plot_h / 2}" text-anchor="middle" font-size="15" fill="#5f6b7a">'
            "no submissions graded yet</text>"
        )
    body.append(
        f'<text x="{width / 2}" y="{height - 4}" text-anchor="middle" font-size="12" fill="#5f6b7a">'
        f"total points (out of {esc(points(max_total))})</text>"
    )
    return _svg(width, height, body, "histogram of total points")


def stage_histogram(scores: list[float], max_score: int) -> str:
    """One bar per whole point from 0 to max_score: red at zero, green at full marks."""
    width, height, left, right, top, bottom = 160, 82, 4, 4, 14, 16
    plot_w, plot_h = width - left - right, height - top - bottom
    counts = [0] * (max_score + 1)
    for score in scores:
        counts[max(0, min(int(score), max_score))] += 1
    tallest = max(counts, default=0) or 1
    step, body = plot_w / len(counts), []
    for value, count in enumerate(counts):
        bar_h = plot_h * count / tallest
        colour = GREEN if value == max_score else RED if value == 0 else AMBER
        x = left + value * step
        body.append(
            f'<rect x="{x + 0.75:.2f}" y="{top + plot_h - bar_h:.2f}" width="{max(step - 1.5, 1):.2f}" '
            f'height="{bar_h:.2f}" rx="1.5" fill="{colour}"><title>{value} points: {count} students</title></rect>'
        )
        if count and value in (0, max_score):
            body.append(
                f'<text x="{x + step / 2:.1f}" y="{top + plot_h - bar_h - 3:.1f}" text-anchor="middle" '
                f'font-size="11" font-weight="600" fill="{INK}">{count}</text>'
            )
    body.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#9aa3ad"/>')
    for value in (0, max_score):
        body.append(
            f'<text x="{left + (value + 0.5) * step:.1f}" y="{height - 4}" text-anchor="middle" font-size="11" '
            f'fill="#5f6b7a">{value}</text>'
        )
    if not scores:
        body.append(
            f'<text x="{width / 2}" y="{top + plot_h / 2}" text-anchor="middle" font-size="12" fill="#5f6b7a">'
            "no data</text>"
        )
    return _svg(width, height, body, f"histogram of scores out of {max_score}")


def pass_rate_bars(rows: list[dict], students: int) -> str:
    """One horizontal bar per test, the most failed first: which mistake did most students make?"""
    row_h, label_w, bar_w, right, top = 22, 620, 430, 110, 6
    width, height = label_w + bar_w + right, top + row_h * max(len(rows), 1) + 6
    body = []
    for tick in (0, 0.5, 1):
        x = label_w + bar_w * tick
        body.append(f'<line x1="{x}" x2="{x}" y1="{top}" y2="{height - 4}" stroke="#e3e7ec"/>')
    for index, row in enumerate(rows):
        y = top + index * row_h
        rate = row["passed"] / students if students else 0
        colour = GREEN if rate >= 0.8 else AMBER if rate >= 0.5 else RED
        label = row["label"] if len(row["label"]) <= 92 else row["label"][:91] + "…"
        hidden = "" if row["visible"] else " (hidden)"
        body.append(
            f"<g><title>{esc(row['name'])}{hidden}: {row['passed']} of {students} passed</title>"
            f'<text x="{label_w - 8}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end" font-size="12" fill="{INK}">'
            f'<tspan font-weight="700">{esc(row["stage"][:2])}</tspan> {esc(label)}'
            f'<tspan fill="#9aa3ad">{hidden}</tspan></text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="{row_h - 8}" rx="3" fill="#eef0f3"/>'
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w * rate:.1f}" height="{row_h - 8}" rx="3" '
            f'fill="{colour}"/>'
            f'<text x="{label_w + bar_w + 8}" y="{y + row_h / 2 + 4:.1f}" font-size="12" fill="{INK}">'
            f'{rate:.0%} <tspan fill="#5f6b7a">({row["passed"]}/{students})</tspan></text></g>'
        )
    if not rows:
        body.append(
            f'<text x="{width / 2}" y="{top + 15}" text-anchor="middle" font-size="13" fill="#5f6b7a">'
            "no tests graded yet</text>"
        )
    return _svg(width, height, body, "pass rate of every test, most failed first")


# ---------------------------------------------------------------------------------------------------------------
# The class report


def pass_rates(results: dict[str, dict]) -> list[dict]:
    """Every test of the class with how many students passed it, the most failed first."""
    tests: dict[tuple[str, str], dict] = {}
    order = {stage.id: index for index, stage in enumerate(STAGES)}
    for result in results.values():
        for number, test in enumerate(result.get("tests", [])):
            extra = test.get("extra_data", {})
            stage = extra.get("stage", "")
            # The check id is stable across students; the same id can appear in two stages.
            key = (stage, extra.get("check") or test.get("name", ""))
            name = test.get("name", key[1])
            row = tests.setdefault(
                key,
                {
                    "stage": stage,
                    "name": name,
                    "label": name.removeprefix(f"{stage}: "),
                    "check": key[1],
                    "visible": test.get("visibility") == "visible",
                    "passed": 0,
                    "position": (order.get(stage, len(order)), number),
                },
            )
            row["passed"] += test.get("status") == "passed"
    return sorted(tests.values(), key=lambda row: (row["passed"], row["position"]))


def flagged(result: dict) -> list[tuple[str, str, str]]:
    """(stage, outcome, message) for each stage whose child timed out, crashed or printed too much."""
    found = {}
    for stage_id, entry in stage_entries(result).items():
        if entry.get("outcome") in FLAG_OUTCOMES:
            found[stage_id] = (stage_id, entry["outcome"], entry.get("message", ""))
    for test in result.get("tests", []):
        extra = test.get("extra_data", {})
        stage_id = extra.get("stage", "")
        if extra.get("outcome") in FLAG_OUTCOMES and stage_id not in found:
            first = next((line for line in (test.get("output") or "").splitlines() if line.strip()), "")
            found[stage_id] = (stage_id, extra["outcome"], first)
    return [found[key] for key in sorted(found)]


def isolation_html(results: dict[str, dict]) -> str:
    levels: dict[str, str] = {}
    for result in results.values():
        isolation = result.get("extra_data", {}).get("isolation", {})
        levels.setdefault(isolation.get("level", "unknown"), isolation.get("detail", ""))
    if not levels:
        return ""
    weak = {level: detail for level, detail in levels.items() if level != "bubblewrap"}
    if weak:
        items = "".join(f"<li><b>{esc(level)}</b>: {esc(detail)}</li>" for level, detail in sorted(weak.items()))
        return (
            '<div class="warn" id="isolation"><b>Warning: submissions were not run in the full sandbox.</b> '
            "Some or all ran without bubblewrap, so student code could read files and reach the network of "
            f"the grading machine (resource limits still applied).<ul>{items}</ul>"
            "Install Debian's <code>bubblewrap</code> and grade again with <code>--regrade</code>.</div>"
        )
    return (
        f'<p class="muted" id="isolation">Isolation: <span class="ok">bubblewrap</span> — '
        f"{esc(levels['bubblewrap'])}.</p>"
    )


def report_html(results: dict[str, dict], notes: list[str] | tuple = ()) -> str:
    """notes: about the run as a whole (entries that are not submissions, why some were regraded), one line each."""
    students = sorted(results)
    totals = [total_of(results[name]) for name in students]
    rows = pass_rates(results)
    flags = {name: flagged(results[name]) for name in students}
    flags = {name: found for name, found in flags.items() if found}
    ungraded = {name: ungraded_of(results[name]) for name in students if ungraded_of(results[name]) is not None}
    full = sum(total >= TOTAL_POINTS for total in totals)

    kpis = [
        (str(len(students)), "students"),
        (f"{points(statistics.median(totals))} / {TOTAL_POINTS}" if totals else "–", "median total"),
        (f"{statistics.mean(totals):.1f}".removesuffix(".0") if totals else "–", "mean total"),
        (str(full), "full marks"),
        (str(len(flags)), "timed out / crashed"),
        *([(str(len(ungraded)), "could not be graded")] if ungraded else []),
    ]
    kpi_html = "".join(f'<div class="kpi"><b>{esc(value)}</b><span>{esc(text)}</span></div>' for value, text in kpis)
    header = (
        "<header><h1>Class report</h1>"
        f'<div class="muted">Tic-tac-toe and minimax: {len(STAGES)} stages, {TOTAL_POINTS} points.</div>'
        f'<div class="kpis">{kpi_html}</div>'
        '<nav><a href="#distributions">Distributions</a><a href="#tests">Tests by pass rate</a>'
        '<a href="#flagged">Timed out / crashed</a><a href="#students">Students</a></nav></header>'
    )
    ungraded_section = ""
    if ungraded:
        ungraded_rows = "".join(
            f'<tr><td><a href="{esc(feedback_href(name))}">{esc(name)}</a></td><td>{esc(reason)}</td></tr>'
            for name, reason in ungraded.items()
        )
        ungraded_section = (
            f'<section class="warn" id="ungraded"><h2>Could not be graded <span class="muted">— {len(ungraded)} '
            f"of {len(students)} students</span></h2><p>The grader failed on these submissions; their zeros are not "
            "grades. Nothing of theirs is stored, so the next run tries them again.</p>"
            '<div class="scroll"><table><thead><tr><th>student</th><th>reason</th></tr></thead>'
            f"<tbody>{ungraded_rows}</tbody></table></div></section>"
        )
    notes_section = ""
    if notes:
        items = "".join(f"<li>{esc(note)}</li>" for note in notes)
        notes_section = f'<section class="card" id="notes"><h2>About this run</h2><ul>{items}</ul></section>'

    multiples = []
    for stage in STAGES:
        scores = [stage_entries(results[name]).get(stage.id, {}).get("score", 0) for name in students]
        multiples.append(
            f'<figure><h3 title="{esc(stage.title)}">{esc(stage.id[:2])} · {esc(stage.module)}</h3>'
            f"{stage_histogram(scores, stage.points)}"
            f"<figcaption>median {esc(points(statistics.median(scores))) if scores else '–'} of {stage.points}"
            "</figcaption></figure>"
        )
    distributions = (
        '<section class="grid2" id="distributions">'
        f'<div class="card"><h2>Total points</h2>{totals_histogram(totals)}</div>'
        '<div class="card"><h2>Points per stage</h2>'
        f'<div class="multiples">{"".join(multiples)}</div></div></section>'
    )

    tests = (
        '<section class="card" id="tests"><h2>Which mistakes did most students make?</h2>'
        f'<p class="muted">Every test, the most failed first: the share of the {len(students)} students who passed '
        "it. Hover a bar for the full name.</p>"
        f"{pass_rate_bars(rows, len(students))}</section>"
    )

    if flags:
        flag_rows = "".join(
            f'<tr><td><a href="{esc(feedback_href(name))}">{esc(name)}</a></td><td>{esc(stage)}</td>'
            f"<td><small>{esc(OUTCOME_TEXT.get(outcome, outcome))}</small></td><td>{esc(message)}</td></tr>"
            for name, found in flags.items()
            for stage, outcome, message in found
        )
        flag_body = (
            '<div class="scroll"><table><thead><tr><th>student</th><th>stage</th><th>outcome</th><th>what happened</th>'
            f"</tr></thead><tbody>{flag_rows}</tbody></table></div>"
        )
    else:
        flag_body = '<p class="ok">No submission timed out, crashed or printed too much.</p>'
    flagged_section = (
        f'<section class="card" id="flagged"><h2>Timed out, crashed or stopped by the sandbox '
        f'<span class="muted">— {len(flags)} of {len(students)} students</span></h2>'
        f"{flag_body}</section>"
    )

    head = "".join(
        f'<th class="num" title="{esc(stage.title)}">{esc(stage.id[:2])} {esc(stage.module)}<br>'
        f'<span class="muted">/ {stage.points}</span></th>'
        for stage in STAGES
    )
    body_rows = []
    for name, total in zip(students, totals, strict=True):
        cells = []
        for stage in STAGES:
            entry = stage_entries(results[name]).get(stage.id, {"score": 0, "max_score": stage.points})
            mark = entry.get("outcome")
            tag = f"<small>{esc(OUTCOME_TEXT[mark])}</small>" if mark in OUTCOME_TEXT else ""
            cells.append(
                f'<td class="num {fill(entry["score"], entry.get("max_score", stage.points))}" '
                f'style="{heat(entry["score"], entry.get("max_score", stage.points))}">'
                f"{esc(points(entry['score']))}{tag}</td>"
            )
        body_rows.append(
            f'<tr><td><a href="{esc(feedback_href(name))}">{esc(name)}</a></td>{"".join(cells)}'
            f'<td class="num {fill(total, TOTAL_POINTS)}" style="{heat(total, TOTAL_POINTS)}">'
            f"<b>{esc(points(total))}</b></td></tr>"
        )
    table = (
        f'<div class="scroll"><table><thead><tr><th>student</th>{head}<th class="num">total<br>'
        f'<span class="muted">/ {TOTAL_POINTS}</span></th></tr></thead>'
        f"<tbody>{''.join(body_rows)}</tbody></table></div>"
        if students
        else '<p class="muted">No submissions were graded.</p>'
    )
    legend = (
        '<p class="legend muted">Points per stage:<span style="background:hsl(0,65%,88%)"></span>none'
        '<span style="background:hsl(68,65%,88%)"></span>half<span style="background:hsl(135,65%,82%)"></span>'
        "full marks. "
        "Each name opens that student's feedback page.</p>"
    )
    student_section = f'<section class="card" id="students"><h2>Students</h2>{legend}{table}</section>'

    body = (
        header
        + isolation_html(results)
        + ungraded_section
        + notes_section
        + distributions
        + tests
        + flagged_section
        + student_section
    )
    return page("Class report", body)


# ---------------------------------------------------------------------------------------------------------------
# One student's feedback page


def feedback_html(result: dict, show_hidden: bool = False) -> str:
    extra = result.get("extra_data", {})
    student = str(extra.get("student", "student"))
    total, max_total = total_of(result), extra.get("max_total", TOTAL_POINTS)
    stages = stage_entries(result)
    by_stage: dict[str, list[dict]] = {}
    for test in result.get("tests", []):
        by_stage.setdefault(test.get("extra_data", {}).get("stage", ""), []).append(test)
    ids = [stage.id for stage in STAGES if stage.id in stages or stage.id in by_stage]
    ids += [stage_id for stage_id in stages if stage_id not in ids]

    chips = []
    for stage_id in ids:
        entry = stages.get(stage_id, {"score": 0, "max_score": 0})
        chips.append(
            f'<a class="{fill(entry["score"], entry["max_score"])}" href="#stage-{esc(stage_id)}">'
            f"{esc(stage_id)}<b>{esc(points(entry['score']))} / {esc(points(entry['max_score']))}</b></a>"
        )
    header = (
        f"<header><h1>Feedback for {esc(student)}</h1>"
        f'<div class="muted">Tic-tac-toe and minimax, all stages: <b style="color:var(--ink);font-size:18px">'
        f"{esc(points(total))} / {esc(points(max_total))}</b> points</div>"
        f'<div class="strip">{"".join(chips)}</div></header>'
    )
    notes = markdown(result.get("output", ""))
    notes_html = f'<section class="card"><h2>Notes from the grader</h2>{notes}</section>' if notes else ""

    sections = []
    for stage_id in ids:
        entry = stages.get(stage_id, {"score": 0, "max_score": 0, "outcome": "", "message": ""})
        stage = STAGE_BY_ID.get(stage_id)
        title = f"{stage_id} · {stage.title}" if stage else stage_id
        outcome = entry.get("outcome", "")
        tag = f'<span class="tag">{esc(OUTCOME_TEXT[outcome])}</span>' if outcome in OUTCOME_TEXT else ""
        if entry["max_score"] and entry["score"] >= entry["max_score"]:
            tag += '<span class="tag good">full marks</span>'
        parts = [
            f'<section class="card" id="stage-{esc(stage_id)}"><h2>{esc(title)} '
            f'<span class="muted">— {esc(points(entry["score"]))} / {esc(points(entry["max_score"]))}</span>{tag}</h2>'
        ]
        if entry.get("message"):
            parts.append(f'<div class="out" style="margin-left:0">{markdown(entry["message"])}</div>')
        for test in by_stage.get(stage_id, []):
            parts.append(test_html(test, stage_id, show_hidden, entry.get("message", "")))
        if stage and stage.hints and entry["score"] < entry["max_score"]:
            hints = "".join(f"<li>{_inline(hint)}</li>" for hint in stage.hints)
            parts.append(f"<details><summary>Hints for this stage</summary><ul>{hints}</ul></details>")
        parts.append("</section>")
        sections.append("".join(parts))
    return page(f"Feedback for {student}", header + notes_html + "".join(sections))


def test_html(test: dict, stage_id: str, show_hidden: bool, stage_message: str = "") -> str:
    passed = test.get("status") == "passed"
    hidden = test.get("visibility", "visible") != "visible"
    name = str(test.get("name", "")).removeprefix(f"{stage_id}: ")
    tag = '<span class="tag hidden">hidden test</span>' if hidden else ""
    output = test.get("output") or ""
    if stage_message and output.strip() == stage_message.strip():
        output = ""  # the stage's own message (it did not import, it crashed) is shown once above its tests
    if hidden and not show_hidden:
        body = f'<div class="out muted"><p>{esc(HIDDEN_NOTE)}</p></div>' if output else ""
    else:
        body = f'<div class="out">{markdown(output)}</div>' if output.strip() else ""
    state = "passed" if passed else "failed"
    return (
        f'<div class="test {state}"><div class="head"><span class="mark" title="{state}">{"✓" if passed else "✗"}'
        f'</span><span class="name">{esc(name)}{tag}</span><span class="pts">{esc(state)} · '
        f"{esc(points(test.get('score', 0)))} / {esc(points(test.get('max_score', 0)))}</span></div>{body}</div>"
    )


def write_report(out: Path, results: dict[str, dict], notes: list[str] | tuple = ()) -> Path:
    """OUT/report.html; returns its path."""
    report = out / "report.html"
    write_atomically(report, report_html(results, notes))
    return report


def write_pages(out: Path, results: dict[str, dict], show_hidden: bool = False, notes: list[str] | tuple = ()) -> Path:
    """OUT/report.html and OUT/<folder>/feedback.html for every student; returns the report's path."""
    for student, result in results.items():
        write_atomically(out / output_folder(student) / "feedback.html", feedback_html(result, show_hidden))
    return write_report(out, results, notes)


# ---------------------------------------------------------------------------------------------------------------
# Headless Chromium: screenshots here, and the browser tests use the same set-up.

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
INSTALL_HINT = "apt-get install chromium chromium-driver"


def browser_missing() -> str | None:
    """Why pages cannot be opened in headless Chromium here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is not installed ({INSTALL_HINT})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


@contextmanager
def chromium(profile: Path, width: int = 1366, height: int = 768) -> Iterator:
    """A selenium driver for a fresh headless Chromium with a throwaway profile; quits on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",  # Chromium's own sandbox cannot start as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()


def screenshot(page_path: Path, png: Path, width: int = 1366, height: int = 768, full_page: bool = False) -> Path:
    """A PNG of page_path as a width x height window shows it (or the whole page, as tall as it is)."""
    import tempfile

    with (
        tempfile.TemporaryDirectory(prefix="autograder-chromium-") as profile,
        chromium(Path(profile), width, height) as driver,
    ):
        driver.get(page_path.resolve().as_uri())
        if full_page:
            tall = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(width, max(height, int(tall) + 140))  # the window's chrome takes some height
        png.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(png))
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.outputs.report", description="Render a report or feedback page to a PNG."
    )
    parser.add_argument("--screenshot", nargs=2, metavar=("PAGE", "PNG"), type=Path, required=True)
    parser.add_argument("--size", default="1366x768", help="window size, WIDTHxHEIGHT (default: a laptop, 1366x768)")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not only the first screen")
    args = parser.parse_args(argv)
    page_path, png = args.screenshot
    if not page_path.is_file():
        print(f"report: {page_path} does not exist (run `autograde grade` first)", file=sys.stderr)
        return 2
    problem = browser_missing()
    if problem:
        print(f"report: cannot take a screenshot: {problem}", file=sys.stderr)
        return 2
    try:
        width, height = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        print(f"report: --size must look like 1366x768, not {args.size!r}", file=sys.stderr)
        return 2
    screenshot(page_path, png, width, height, args.full_page)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
