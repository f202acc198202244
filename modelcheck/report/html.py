"""`--html OUT.html`: one self-contained page per command line.

Per kernel: the verdict and what was covered; each finding with its source excerpts (the
text report's evidence), the happens-before explanation and path (`hb.explain`), laid out
by Graphviz; the witness schedule as a timeline (warps as lanes, barrier generations as
ellipses) -- the finding's witness when it has one, else the run's; for `prove`, the
proof summary.  Graphs are laid out by `dot` (Graphviz); without it the page says so and
shows the hand-laid SVG timeline and the paths as lists.  No external resources: the file
opens anywhere.  A small script marks the page `data-rendered` once it has checked that the
timeline and every finding are present (the headless-Chromium test reads it).
"""
from __future__ import annotations

from html import escape

from ..common.files import write_output
from . import layout
from .text import SourceCache, finding_lines

_CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px} h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin-bottom:4px}
.verdict{display:inline-block;padding:2px 8px;border-radius:4px;color:#fff;font-weight:bold}
.v-clean,.v-proved{background:#2a7d3a}.v-error,.v-refuted{background:#b3261e}.v-incomplete{background:#a86b00}
.v-review{background:#3d5a99}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px;line-height:1.35}
.finding{border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:12px 0}
.graph{overflow-x:auto;border:1px solid #eee;margin:6px 0;max-height:700px}
.note{color:#7a5b00} table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:3px 8px;font-size:13px}
"""

_SCRIPT = """
window.addEventListener('load', function () {
  var t = document.querySelectorAll('.timeline svg, .timeline ol').length;
  var f = document.querySelectorAll('.finding').length;
  var ok = Array.prototype.every.call(document.querySelectorAll('.finding'), function (e) {
    return e.querySelector('pre') !== null && e.getBoundingClientRect().height > 0; });
  document.body.setAttribute('data-rendered', 'timelines:' + t + ' findings:' + f + ' ok:' + ok);
});
"""


def _verdict(v: str) -> str:
    return f'<span class="verdict v-{escape(v)}">{escape(v.upper())}</span>'


def _graph(dot: str, fallback: str) -> str:
    if layout.dot_available():
        try:
            return f'<div class="graph">{layout.render_svg(dot)}</div>'
        except (RuntimeError, OSError) as err:
            return f'<p class="note">Graphviz failed ({escape(str(err))}); shown without layout.</p>{fallback}'
    return fallback


def _hb_of(report):
    from .. import hb
    result = getattr(report, "result", None)
    if result is None or getattr(result, "inputs", None) is None:
        return None
    try:
        return hb.build(result.func, result.inputs)
    except Exception:   # noqa: BLE001 - a run that does not start has no graph; the page says so
        return None


def _timeline(g, title: str, highlight=(), order=None) -> str:
    from ..hb.export import to_svg
    if g is None:
        return '<div class="timeline"><p class="note">no happens-before graph: the run did not start</p></div>'
    fallback = ('<p class="note">Graphviz `dot` is not installed (apt-get install graphviz): hand-laid '
                'timeline.</p>' + to_svg(g, highlight, order=order, max_events=layout.MAX_EVENTS))
    return f'<div class="timeline">{_graph(layout.timeline_dot(g, highlight, order, title), fallback)}</div>'


def _finding(k: int, f, report, g, sources) -> str:
    from .. import hb
    lines = finding_lines(f, sources, k)
    parts = [f'<section class="finding" id="finding-{k}"><h3>{k}. [{escape(f.status.upper())}] '
             f'{escape(f.kind)}</h3><pre>{escape(chr(10).join(lines))}</pre>']
    if g is not None:
        try:
            exp = hb.explain(report, f, hb=g)
        except Exception as err:   # noqa: BLE001 - an explanation that fails must not hide the finding
            parts.append(f'<p class="note">no happens-before explanation: {escape(str(err))}</p>')
        else:
            parts.append(f"<h4>Happens-before</h4><pre>{escape(exp.format())}</pre>")
            path = list(exp.path or ())
            if path:
                items = "".join(f"<li>{escape(g.graph.nodes[n].get('label', str(n)))}</li>" for n in path
                                if n in g.graph)
                parts.append(_graph(layout.path_dot(g, path, f"finding {k}: path"), f"<ol>{items}</ol>"))
            witness = exp.data.get("witness_nodes")
            if witness:
                parts.append("<h4>Witness schedule</h4>" + _timeline(g, f"finding {k}: witness schedule", path,
                                                                      witness))
    parts.append("</section>")
    return "".join(parts)


def _checker_section(report) -> str:
    name = report.func.name
    out = [f'<h2 id="{escape(name)}">{escape(name)} {_verdict(report.verdict)}</h2>',
           f"<p>{escape(report.summary())} &mdash; {escape(str(report.func.path))}</p>"]
    coverage = report.reports[0].coverage() if hasattr(report, "reports") else report.coverage()
    out.append(f"<pre>{escape(chr(10).join(coverage))}</pre>")
    g = _hb_of(report)
    out.append("<h3>Timeline of the run</h3>" + _timeline(g, f"{name}: happens-before timeline"))
    sources = SourceCache(report.func)
    if report.findings:
        out.append(f"<h3>Findings ({len(report.findings)})</h3>")
        out.extend(_finding(k, f, report, g, sources) for k, f in enumerate(report.findings, 1))
    else:
        out.append("<p>No findings.</p>")
    return "".join(out)


def _proof_section(report) -> str:
    rows = "".join(f"<tr><td>{escape(p.family)}</td><td>{escape(p.prop)}</td><td>{_verdict(p.status)}</td>"
                   f"<td>{p.seconds:.3f} s</td><td>{escape(p.note or '')}</td></tr>" for p in report.properties)
    return (f'<h2 id="{escape(report.kernel)}">{escape(report.kernel)} {_verdict(report.verdict)}</h2>'
            f"<h3>Proof summary</h3><pre>{escape(report.format())}</pre>"
            f"<table><tr><th>family</th><th>property</th><th>status</th><th>solver</th><th>note</th></tr>{rows}"
            f"</table>")


def render(reports, command: str = "check") -> str:
    body = []
    for r in reports:
        body.append(_proof_section(r) if hasattr(r, "properties") else _checker_section(r))
    index = "".join(f'<li><a href="#{escape(getattr(r, "kernel", None) or r.func.name)}">'
                    f'{escape(getattr(r, "kernel", None) or r.func.name)}</a> {_verdict(r.verdict)}</li>'
                    for r in reports)
    graphviz = "laid out by Graphviz dot" if layout.dot_available() else \
        "Graphviz dot not found: hand-laid timelines"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>modelcheck {escape(command)}</title><style>{_CSS}</style></head><body>"
            f"<h1>modelcheck {escape(command)}</h1><p>{len(reports)} kernel(s); graphs {graphviz}.</p>"
            f"<ul>{index}</ul>{''.join(body)}<script>{_SCRIPT}</script></body></html>\n")


def write_html(path, reports, command: str = "check", protect=()) -> None:
    write_output(path, render(reports, command), protect)
