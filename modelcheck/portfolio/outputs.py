"""What a batch leaves besides its results file: the summary table, one SARIF log of every
finding, and a self-contained HTML index of every point.

All three read records (plan order) and, for SARIF and HTML, each record's details (text
report and SARIF runs, from the journal).  SARIF: one run per checker (synccheck, racecheck,
prove) with the union of the rules and every result once per point, tagged with the point
(kernel, constants, inputs, task key) in its properties and fingerprints, so the same
finding at two sizes stays two results.  HTML: one table of points; a point that is not
clean links to its section with the reason and the text report.
"""
from __future__ import annotations

import html
import json

from ..common.verdict import Verdict

# the columns of the summary table, in this order
VERDICTS = (Verdict.CLEAN, Verdict.REVIEW, Verdict.ERROR, Verdict.INCOMPLETE)


def worst(verdicts) -> Verdict:
    return Verdict.worst(verdicts)


def point_label(rec: dict, with_check: bool = True) -> str:
    consts = " ".join(f"{k}={v}" for k, v in rec.get("constants", {}).items())
    inputs = rec.get("inputs") or {}
    seed = f" seed={inputs['seed']}" if inputs.get("seed") is not None else ""
    head = f"{rec['check']} " if with_check else ""
    return (head + (consts or "(defaults)") + seed).strip()


def _what(rec: dict) -> str:
    if rec["verdict"] == Verdict.ERROR:
        kinds = list(dict.fromkeys(f["kind"] for f in rec.get("findings", []) if f.get("status") == Verdict.ERROR))
        return ", ".join(kinds[:2]) + (" ..." if len(kinds) > 2 else "")
    reason = rec.get("reason") or "incomplete"
    return reason if len(reason) <= 70 else reason[:67] + "..."


def summary_table(records: list) -> str:
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in VERDICTS}
    lines = [f"modelcheck batch: {len(records)} task(s) - " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS)]
    by_kernel: dict = {}
    for r in records:
        by_kernel.setdefault(r["kernel"], []).append(r)
    if not by_kernel:
        return lines[0] + "\n"
    width = max(len("kernel"), *(len(k) for k in by_kernel))
    lines.append("")
    lines.append(f"{'kernel':<{width}}  {'tasks':>5}  {'clean':>5}  {'review':>6}  {'error':>5}  {'incomplete':>10}  "
                 f"first failing")
    for kernel in sorted(by_kernel):
        rows = by_kernel[kernel]
        c: dict[str, int] = {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}
        first = next((r for r in rows if r["verdict"] == Verdict.ERROR), None) or \
            next((r for r in rows if r["verdict"] == Verdict.INCOMPLETE), None)
        failing = "-" if first is None else f"{point_label(first)} ({first['verdict']}: {_what(first)})"
        lines.append(f"{kernel:<{width}}  {len(rows):>5}  {c['clean']:>5}  {c['review']:>6}  {c['error']:>5}  "
                     f"{c['incomplete']:>10}  {failing}")
    return "\n".join(lines) + "\n"


_CHECKER_OF = {"sync": "synccheck", "race": "racecheck", "prove": "prove"}


def merged_sarif(records: list, details_of) -> dict:
    runs: dict = {}
    for rec in records:
        d = details_of(rec["key"]) or {}
        for run in d.get("sarif_runs", []):
            checker = (run.get("properties") or {}).get("checker") or _CHECKER_OF[rec["check"]]
            merged = runs.get(checker)
            if merged is None:
                driver = dict(run["tool"]["driver"])
                driver["rules"] = []
                # one category per checker: code scanning takes several runs of one tool in a file only
                # when their automationDetails ids differ
                merged = runs[checker] = {"tool": {"driver": driver},
                                          "automationDetails": {"id": f"modelcheck/batch-{checker}/"},
                                          "results": [],
                                          "properties": {"checker": checker, "points": 0, "verdicts": {}}}
                if "originalUriBaseIds" in run:
                    merged["originalUriBaseIds"] = run["originalUriBaseIds"]
            rules = merged["tool"]["driver"]["rules"]
            known = {r["id"] for r in rules}
            rules.extend(r for r in run["tool"]["driver"].get("rules", []) if r["id"] not in known)
            props = merged["properties"]
            props["points"] += 1
            props["verdicts"][rec["verdict"]] = props["verdicts"].get(rec["verdict"], 0) + 1
            for res in run.get("results", []):
                res = dict(res)
                res["properties"] = {**res.get("properties", {}), "kernel": rec["kernel"],
                                     "constants": rec.get("constants", {}), "inputs": rec.get("inputs", {}),
                                     "check": rec["check"], "task": rec["key"]}
                res["partialFingerprints"] = {**res.get("partialFingerprints", {}), "modelcheckTask": rec["key"]}
                merged["results"].append(res)
    order = ["synccheck", "racecheck", "prove"]
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [runs[c] for c in sorted(runs, key=lambda c: order.index(c) if c in order else len(order))]}


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.v-clean { background: #e6f4e6; } .v-review { background: #fff8d8; }
.v-error { background: #fbe0e0; } .v-incomplete { background: #eee4f6; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; }
section { margin-top: 2em; }
code { font-size: 13px; }
"""


def html_index(records: list, details_of, title: str) -> str:
    e = html.escape
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in VERDICTS}
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>modelcheck batch - {e(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>modelcheck batch - {e(title)}</h1>",
           "<p>" + ", ".join(f"<span class=\"v-{v}\">{counts[v]} {v}</span>" for v in VERDICTS)
           + f" of {len(records)} task(s).</p>"]
    by_kernel: dict = {}
    for r in records:
        by_kernel.setdefault(r["kernel"], []).append(r)
    out.append("<h2>By kernel</h2><table><tr><th>kernel</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS)
               + "<th>first failing</th></tr>")
    for kernel in sorted(by_kernel):
        rows = by_kernel[kernel]
        first = next((r for r in rows if r["verdict"] == Verdict.ERROR), None) or \
            next((r for r in rows if r["verdict"] == Verdict.INCOMPLETE), None)
        cells = "".join(f"<td class=\"num\">{sum(1 for r in rows if r['verdict'] == v)}</td>" for v in VERDICTS)
        link = "-" if first is None else \
            f"<a href=\"#t-{first['key'][:16]}\">{e(point_label(first))}</a> ({e(first['verdict'])})"
        out.append(f"<tr><td><code>{e(kernel)}</code></td>{cells}<td>{link}</td></tr>")
    out.append("</table>")
    out.append("<h2>Points</h2><table><tr><th>#</th><th>kernel</th><th>check</th><th>constants</th><th>inputs</th>"
               "<th>verdict</th><th>findings</th><th>time (s)</th><th>peak MB</th><th>attempts</th></tr>")
    for n, r in enumerate(records, 1):
        consts = ", ".join(f"{k}={v}" for k, v in r.get("constants", {}).items()) or "(defaults)"
        inputs = r.get("inputs") or {}
        inp = [inputs["builder"]] if inputs.get("builder") else []
        inp += [f"{k}={v}" for k, v in (inputs.get("specs") or {}).items()]
        if inputs.get("seed") is not None:
            inp.append(f"seed={inputs['seed']}")
        verdict = e(r["verdict"])
        if r["verdict"] != Verdict.CLEAN:
            verdict = f"<a href=\"#t-{r['key'][:16]}\">{verdict}</a>"
        kinds = ", ".join(dict.fromkeys(f["kind"] for f in r.get("findings", [])))
        peak = r.get("peak_rss_mb")
        out.append(f"<tr class=\"v-{e(r['verdict'])}\"><td class=\"num\">{n}</td><td><code>{e(r['kernel'])}</code></td>"
                   f"<td>{e(r['check'])}</td><td>{e(consts)}</td><td>{e(', '.join(inp) or 'zeros')}</td>"
                   f"<td>{verdict}</td><td>{e(kinds)}</td><td class=\"num\">{r.get('seconds', 0):.2f}</td>"
                   f"<td class=\"num\">{'' if peak is None else f'{peak:.0f}'}</td>"
                   f"<td class=\"num\">{r.get('attempts', 1)}</td></tr>")
    out.append("</table>")
    failing = [r for r in records if r["verdict"] != Verdict.CLEAN]
    if failing:
        out.append("<h2>Details</h2>")
    for r in failing:
        d = details_of(r["key"])
        text = d.get("text") if d else None
        out.append(f"<section id=\"t-{r['key'][:16]}\"><h3><code>{e(r['kernel'])}</code> - {e(point_label(r))}: "
                   f"<span class=\"v-{e(r['verdict'])}\">{e(r['verdict'])}</span></h3>")
        if r.get("reason"):
            out.append(f"<p>{e(r['reason'])}</p>")
        if r.get("retries"):
            out.append("<p>retried after: " + e("; ".join(r["retries"])) + "</p>")
        out.append(f"<p>task key <code>{e(r['key'])}</code>, {r.get('seconds', 0):.2f} s, worker "
                   f"{e(str(r.get('worker', '')))}</p>")
        out.append(f"<pre>{e(text)}</pre>" if text else "<p>(no text report: the task did not finish)</p>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_all(records: list, details_of, out_dir, title: str) -> dict:
    """summary.txt, findings.sarif and index.html in `out_dir`; returns their paths."""
    from pathlib import Path
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"summary": out_dir / "summary.txt", "sarif": out_dir / "findings.sarif", "html": out_dir / "index.html"}
    paths["summary"].write_text(summary_table(records))
    paths["sarif"].write_text(json.dumps(merged_sarif(records, details_of), indent=1))
    paths["html"].write_text(html_index(records, details_of, title))
    return paths
