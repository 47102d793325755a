"""Jinja2 environment (autoescape, StrictUndefined), value formatting, safe JSON embedding, file writing.

Formatting lives here as filters so that templates format and never compute. Everything written is
deterministic: sorted keys, fixed number formats, no timestamps.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from leaderboard.analysis import best_words, robust
from leaderboard.analysis.judged_words import flip_title
from leaderboard.analysis.verdicts import pvalue_text
from leaderboard.submissions.holes import judged_name
from leaderboard.web.contexts import CLAIMED_RANKS
from leaderboard.web.provenance import BuildStamp

CLAIMED_MARK = Markup('<span class="unv" title="rests on claimed ranks: re-scored from ranks below the stored depth '
                      'that no score samples check">†</span><span class="sr"> (rests on claimed ranks)</span>')

# beside a verdict (▲ ▼ ≈, ★, a rank range) that unjudged documents within the cutoff could flip (analysis.robust)
FLIP_MARK = Markup(f'<span class="flip" title="{robust.MARK_TITLE}">{robust.MARK}</span>'
                   '<span class="sr"> (could flip: unjudged documents)</span>')


def flip_mark(holds) -> Markup:
    """FLIP_MARK where a verdict may not hold over the hole bounds (`holds` False), else nothing."""
    return Markup("") if holds is None or holds else FLIP_MARK


def group_flip(rank_holds: bool, best_holds: bool) -> Markup:
    """The ◊ beside a home group mean whose rank range or ★ could flip (analysis.group_robust), its title saying
    which; nothing when both hold. site/js/board.js writes the same markup (web.judged_data.flip_marks)."""
    if rank_holds and best_holds:
        return Markup("")
    return Markup(f' <span class="flip" title="{escape(flip_title(not rank_holds, not best_holds))}">'
                  f'{robust.MARK}</span><span class="sr"> (could flip: unjudged documents)</span>')


def judged_sub(value, metric: str = "") -> Markup:
    """Judged@k beside a main-metric value: a muted subscript (".32"), with its meaning in the title and for screen
    readers; nothing when unknown (not re-scored)."""
    if _missing(value):
        return Markup("")
    name = escape(judged_name(metric))
    shown = f"{value:.2f}"
    short = shown[1:] if shown.startswith("0.") else shown
    return Markup(f'<sub class="jd" title="{name} {shown}: the share of the top documents that is judged">'
                  f'<span aria-hidden="true">{short}</span><span class="sr"> ({name} {shown})</span></sub>')




PACKAGE_DIR = Path(__file__).resolve().parents[1]  # leaderboard/


def _asset_dir(name: str) -> Path:
    """templates/ or site/: inside the package when installed from a wheel, else at the repository's top."""
    installed = PACKAGE_DIR / name
    return installed if installed.is_dir() else PACKAGE_DIR.parent / name


TEMPLATES_DIR = _asset_dir("templates")
STATIC_DIR = _asset_dir("site")
MISSING = "–"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def format_score(value, scale: float = 100.0, digits: int = 2) -> str:
    """A metric value as shown: ×100 with two decimals for metrics in [0, 1]."""
    if type(value) is float and math.isfinite(value):  # most cells of the site; the same as below
        return f"{value * scale:.{digits}f}"
    return MISSING if _missing(value) else f"{value * scale:.{digits}f}"


def score_cells(values, scales, checks, mark: Markup, end: str = "", notes=None) -> Markup:
    """A row of score cells, `<td class="num">` with format_score and, after a value shown but not checked, `mark`
    (CLAIMED_MARK after one resting on claimed ranks, `contexts.CLAIMED_RANKS`); `end` after each cell: one filter
    call per row of a wide table instead of a template loop (at 1,000 models the site has about two million such
    cells). `notes`: per cell, the text shown instead of a missing value ("–, ranked to 100"), or ""."""
    def after(value, checked) -> str:
        if value is None or checked:
            return ""
        return CLAIMED_MARK if checked is CLAIMED_RANKS else mark

    notes = notes or ("",) * len(values)
    return Markup("".join(
        f'<td class="num">{escape(note if value is None and note else format_score(value, scale))}'
        f"{after(value, checked)}</td>{end}"
        for value, scale, checked, note in zip(values, scales, checks, notes, strict=True)))


def scale_rows(rows, unchecked_mark: Markup | str = "") -> Markup:
    """The body rows of a model page's recall-at-scale table (contexts.ScaleRow), each ending in a newline: one
    filter call instead of a template loop, which took most of a model page's rendering (180 rows at 30 datasets).
    Each predicted value of a row whose score samples were not checked ends in `unchecked_mark` (markup)."""
    def predicted(value, row) -> str:
        return f'<td class="num pred">{escape(format_score(value))}{"" if row.checked else unchecked_mark}</td>'

    def error(row) -> str:
        return f'<td class="num pred">{"" if row.error is None else "±"}{escape(format_score(row.error))}</td>'

    return Markup("".join(
        f'<tr>\n<th scope="row">{escape(row.dataset_id)}</th>\n<td class="num">R@{escape(row.k)}</td>\n'
        f'<td>{escape(row.growth)}</td>\n<td class="num">{escape(format_count(row.num_docs))}</td>\n'
        f'<td class="num">{escape(format_score(row.measured))}</td>\n{error(row)}\n'
        f'{predicted(row.at_own_size, row)}\n'
        + "".join(predicted(value, row) for value in row.values) + "</tr>\n"
        for row in rows))


def format_ci(interval, scale: float = 100.0, digits: int = 2) -> str:
    if interval is None or any(_missing(value) for value in interval):
        return MISSING
    low, high = interval
    return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def format_signed(value, scale: float = 100.0, digits: int = 2) -> str:
    if _missing(value):
        return MISSING
    text = f"{value * scale:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def format_pvalue(value, alpha: float = 0.05) -> str:
    """verdicts.pvalue_text, "–" for a missing value."""
    return MISSING if _missing(value) else pvalue_text(value, alpha)


# Integers this large cannot become floats (10**400 / 1e12 overflows); shown as a plain exponent instead.
_HUGE = 10**15


def _huge(value: int) -> str:
    return f"{Decimal(value):.3g}"


def format_parameters(value) -> str:
    if value is None:
        return "unknown"
    if value >= _HUGE * 1000:
        return _huge(value)
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return str(value)


def format_bytes(value) -> str:
    if value is None:
        return MISSING
    if value >= _HUGE * 2**30:
        return f"{_huge(value)} B"
    for limit, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if value >= limit:
            return f"{value / limit:.1f} {suffix}"
    return f"{value} B"


def format_number(value, digits: int = 1) -> str:
    return MISSING if _missing(value) else f"{value:,.{digits}f}"


def format_count(value) -> str:
    return MISSING if value is None else f"{value:,}"


def json_text(data) -> str:
    """Deterministic JSON that is safe inside <script>: <, > and & are escaped as \\u003c etc., so no text can
    close the element or open a comment; ensure_ascii writes U+2028 and U+2029 (line ends in old JavaScript) as
    escapes too."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def json_script(data) -> Markup:
    return Markup(json_text(data))


@functools.cache
def _fraction_texts(decimals: int) -> np.ndarray:
    """JSON text of every multiple of 10**-decimals in [0, 1], as Python writes the float."""
    scale = 10**decimals
    return np.array([repr(k / scale) for k in range(scale + 1)], dtype=object)


def json_rounded(values: np.ndarray, decimals: int) -> str:
    """json_text(np.round(values, decimals).tolist()), fast for values in [0, 1] (p-values, bounded scores):
    those are looked up among the texts of every multiple of 10**-decimals (the site writes millions)."""
    values = np.asarray(values, dtype=np.float64)
    if decimals <= 4:
        steps = np.rint(values * float(10**decimals))  # np.round's own steps: scale, round half to even, divide
        if np.all((steps >= 0) & (steps <= 10**decimals)) and not np.signbit(steps).any():
            return "[" + ",".join(_fraction_texts(decimals)[steps.astype(np.int64)].tolist()) + "]"
    return json_text(np.round(values, decimals).tolist())


def make_environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(templates_dir)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["stamp"] = BuildStamp()  # the footer's provenance; build.render_site sets the build's own
    env.filters.update(
        score=format_score, ci=format_ci, signed=format_signed, pvalue=format_pvalue, params=format_parameters,
        bytes=format_bytes, number=format_number, count=format_count, json_script=json_script,
        score_cells=score_cells, scale_rows=scale_rows, best_level=best_words.level, best_title=best_words.mark_title,
        best_rule=best_words.rule, judged=judged_sub, flip=flip_mark, judged_label=judged_name,
        group_flip=group_flip,
    )
    env.globals["flip_symbol"] = robust.MARK
    env.globals["flip_legend"] = robust.MARK_LEGEND
    return env


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """One CSV cell: floats with 6 decimals, missing values empty, and text that a spreadsheet would run as a
    formula prefixed with a single quote, which makes it inert text (numbers stay numbers, signs included).
    Carriage returns in text become "\\n": the writer quotes only cells holding its own line end."""
    if type(value) is float:  # most cells; the general case below gives the same
        return f"{value:.6f}" if math.isfinite(value) else ""
    if _missing(value):
        return ""
    if isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, str):
        text = "'" + value if value.startswith(_FORMULA_START) else value
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return value


def csv_text(header: list[str], rows: list[list]) -> str:
    """CSV with a header, "\\n" line ends and every cell written by csv_cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in [header, *rows]:
        writer.writerow([csv_cell(value) for value in row])
    return buffer.getvalue()


def indented_json(data) -> str:
    """The downloads' JSON: sorted keys, one space of indent per level, UTF-8 text, no NaN."""
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)


_SCALARS = (str, int, float, bool, type(None))


def table_json(meta: dict, header: list[str], rows: list[list]) -> str:
    """indented_json({**meta, "columns": header, "rows": [rounded(dict(zip(header, row))) ...]}) + "\\n", with the
    rows written by json's C encoder: with indent, json runs its pure-Python encoder, which took most of the
    time of writing the downloads. A row of plain values is one flat object, so the C encoder writes it with the
    indented form's item separator, and only its braces need their own lines."""
    records = [dict(zip(header, rounded(row), strict=True)) for row in rows]
    if not all(type(value) in _SCALARS for record in records for value in record.values()):
        return indented_json({**meta, "columns": header, "rows": records}) + "\n"
    flat = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",\n   ", ": ")).encode
    texts = ["{\n   " + text[1:-1] + "\n  }" if text != "{}" else text for text in map(flat, records)]
    document = {**meta, "columns": header, "rows": None}
    items = [f" {indented_json(key)}: "
             + (("[\n  " + ",\n  ".join(texts) + "\n ]" if texts else "[]") if key == "rows"
                else indented_json(value).replace("\n", "\n "))  # one level deeper; strings hold no raw newline
             for key, value in sorted(document.items())]
    return "{\n" + ",\n".join(items) + "\n}\n"


def rounded(value, digits: int = 6):
    """Plain data for JSON downloads: floats rounded, NaN as null, numpy scalars as Python numbers."""
    if type(value) is float:  # most values; the general case below gives the same
        return round(value, digits) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(key): rounded(item, digits) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item, digits) for item in value]
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, digits)
    return value


class SiteFiles:
    """The site: path -> bytes held in memory until written in one go, files to copy, and the paths of files that
    were written into the output folder already (by the worker process that rendered them)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.copies: dict[str, Path] = {}
        self.written: set[str] = set()

    def _claim(self, path: str) -> None:
        if path in self.files or path in self.copies or path in self.written:
            raise ValueError(f"site file {path} written twice")

    def add(self, path: str, content: str | bytes) -> None:
        self._claim(path)
        self.files[path] = content.encode("utf-8") if isinstance(content, str) else content

    def copy(self, path: str, source: Path) -> None:
        self._claim(path)
        self.copies[path] = source

    def add_written(self, path: str) -> None:
        self._claim(path)
        self.written.add(path)

    @property
    def count(self) -> int:
        return len(self.files) + len(self.copies) + len(self.written)

    def write_to(self, folder: Path) -> None:
        for path, content in sorted(self.files.items()):
            write_site_file(folder, path, content)
        for path, source in sorted(self.copies.items()):
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def write_site_file(folder: Path, path: str, content: bytes) -> None:
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


MARKER = ".irboard-build"


@contextlib.contextmanager
def staged_folder(out_dir: Path) -> Iterator[Path]:
    """A new folder next to out_dir to write the site into; swapped in for out_dir when the block ends without an
    error, removed when it raises, so out_dir is never half written."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".new", dir=out_dir.parent))
    try:
        yield staging
        (staging / MARKER).write_text("irboard static site; this folder is replaced by every build\n")
        os.chmod(staging, 0o755)
        old = None
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
            os.rmdir(old)
            os.replace(out_dir, old)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def replace_folder(files: SiteFiles, out_dir: Path) -> None:
    """Write `files` into a new folder next to out_dir, then swap it in (see staged_folder)."""
    with staged_folder(out_dir) as staging:
        files.write_to(staging)


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s/:;,'\"()]+/)+([^\s/:;,'\"()]*)")
_SYSTEM_ERROR = re.compile(r"(?:<urlopen error )?\[Errno -?\d+\][^;:>)]*>?")


def public_note(warning: str) -> str:
    """A build warning as the home page shows it: the builder's own paths (caches, checkouts) cut to their last
    part, and operating-system errors (a failed name lookup) said in words; the build's log keeps them whole."""
    text = _SYSTEM_ERROR.sub("a network or system error", warning)
    return _ABSOLUTE_PATH.sub(lambda match: "…/" + match.group(1), text)
