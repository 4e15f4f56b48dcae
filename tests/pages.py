"""Reading the report and the feedback pages as a reader does: a section by its id, its tables as rows of cells
(text, classes, tooltip), and its text as a browser shows it (tags gone, entities decoded, spaces collapsed)."""

import re
from dataclasses import dataclass
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str
    classes: set[str]
    title: str
    header: bool


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[Cell]] = []
        self.cell: Cell | None = None
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = Cell(
                "", set((attributes.get("class") or "").split()), attributes.get("title") or "", tag == "th"
            )
            self.parts = []
        elif tag in ("small", "br") and self.cell is not None:
            self.parts.append(" ")  # a word under the score reads as one more word

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.cell.text = " ".join("".join(self.parts).split())
            self.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.parts.append(data)


def rows(html: str) -> list[list[Cell]]:
    """Every table row in html, header rows included, each a list of its cells."""
    parser = _Tables()
    parser.feed(html)
    parser.close()
    return parser.rows


def table(html: str) -> dict[str, list[Cell]]:
    """The rows of the (first) table in html under their first cell's text, the header row left out."""
    return {row[0].text: row for row in rows(html) if row and not row[0].header}


INLINE = {"a", "b", "i", "span", "code", "strong", "em"}  # no break around them: "<b>0</b> of 85" reads "0 of 85"


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("style", "svg", "title")
        if tag not in INLINE:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        self.hidden -= tag in ("style", "svg", "title")
        if tag not in INLINE:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def text(html: str) -> str:
    """The words html shows, one space between them."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


def section(page: str, anchor: str) -> str:
    """The HTML of the element with id anchor, its opening tag included, to the end of its section."""
    start = page.rindex("<", 0, page.index(f'id="{anchor}"'))
    end = page.find("</section>", start)
    return page[start : end if end >= 0 else len(page)]


def has_section(page: str, anchor: str) -> bool:
    return re.search(f'id="{re.escape(anchor)}"', page) is not None
