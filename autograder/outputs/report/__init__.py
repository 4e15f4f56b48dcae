"""The class report (OUT/report.html) and each student's feedback page (OUT/<folder>/feedback.html).

Each page is one self-contained file: inline CSS and SVG plots, no script, no font or stylesheet fetched,
so it opens from disk on any machine. Student names and test outputs come from submissions (an exception
message is student-controlled text); the templates escape everything they are given.

  views.py            the records the pages show, built from the results (the only reader of a results dict)
  plots.py            the SVG plots' shapes, drawn by templates/plot.svg.j2
  markdown_render.py  the results' Markdown texts as HTML, raw HTML and links off
  pages.py            the Jinja2 environment (autoescape on), rendering and writing the pages
  templates/, report.css
"""

from autograder.outputs.report.markdown_render import markdown
from autograder.outputs.report.pages import feedback_html, report_html, row_html, write_pages, write_report
from autograder.outputs.report.views import HIDDEN_NOTE, feedback_href, pass_rates

__all__ = [
    "HIDDEN_NOTE",
    "feedback_href",
    "feedback_html",
    "markdown",
    "pass_rates",
    "report_html",
    "row_html",
    "write_pages",
    "write_report",
]
