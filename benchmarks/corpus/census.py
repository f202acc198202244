"""The census of the printed production corpus: what our front end rejects, and which ops it uses.

Construct census (`blockers`): parse a printed function with `ir.parse`; classify the first
error by the rule whose pattern matches the offending line (`census_rules.RULES`, in order);
apply that rule's stub to the whole text; parse again, until the text parses or nothing more can
be stubbed.  The result is the function's full list of blocking constructs, in the order the
parser meets them.  An error no rule matches is recorded as `other: <message>` and its statement
is blanked, so one unknown construct never hides the rest.

Op census (`census_ops.ops_of`): every `T.*` call in the text, by canonical name, with what
`ir.ops.classify` and the front end know of it.

`run` takes both over the whole cache (per-text memo, a process pool), `aggregate` counts them per
construct and op, `write` / `markdown` / `print_summary` report them.
Needs no TVM: it reads the cache that `benchmarks/corpus/build.py` wrote.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from benchmarks.corpus.census_ops import category, display_name, op_status, ops_of
from benchmarks.corpus.census_rules import RULES, RULES_VERSION, Failure, blank_statement, classify

GENERATIONS = ("pre", "lowered")
MAX_STEPS = 80
MAX_SECONDS = 180.0        # per printed function; past it the list so far is kept and marked `budget_exhausted`


# ----------------------------------------------------------------------------- parsing

def first_failure(text: str, path: str) -> Failure | None:
    """None if `ir.parse` accepts the text, else its first error."""
    import ir
    try:
        ir.parse(text, path=path)
        return None
    except ir.ParseError as err:
        span = err.span
        line = span.line if span else 0
        src = text.split("\n")[line - 1].strip() if 0 < line <= text.count("\n") + 1 else ""
        return Failure("ParseError", err.what, err.expected, line, span.col if span else 0, src)
    except RecursionError as err:
        return Failure("RecursionError", str(err)[:200], "", 0, 0, "")
    except Exception as err:   # noqa: BLE001 -- the front end's own failures are part of the census
        tb = err.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f" ({tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})" if tb else ""
        return Failure(type(err).__name__, f"{err}"[:200] + where, "", 0, 0, "")


def blockers(text: str, path: str = "<corpus>", max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS) -> dict:
    """Every construct that stops `ir.parse` on `text`, in order, by stubbing each in turn."""
    found = []
    t0 = time.perf_counter()
    for _ in range(max_steps):
        if time.perf_counter() - t0 > max_seconds:
            return {"parses_after_stubs": False, "budget_exhausted": True, "blockers": found, "steps": len(found),
                    "seconds": round(time.perf_counter() - t0, 2)}
        f = first_failure(text, path)
        if f is None:
            return {"parses_after_stubs": True, "blockers": found, "steps": len(found),
                    "seconds": round(time.perf_counter() - t0, 2)}
        rule = classify(f)
        entry = {"construct": rule.id if rule else other_id(f), "what": f.what, "line": f.line,
                 "snippet": f.text[:200], "kind": f.kind}
        found.append(entry)
        new = rule.stub(text, f) if rule else text
        if new == text and f.line:
            new = blank_statement(text, f.line)
        if new == text:
            entry["stuck"] = True
            break
        text = new
    return {"parses_after_stubs": False, "blockers": found, "steps": len(found),
            "seconds": round(time.perf_counter() - t0, 2)}


def other_id(f: Failure) -> str:
    """A stable name for an error no rule knows: the message with names and numbers abstracted."""
    what = re.sub(r"'[^']*'", "'…'", f.what)
    what = re.sub(r"\d+", "N", what)
    return f"other: {what}"



# ----------------------------------------------------------------------------- the whole corpus

def _rules_version() -> str:
    return RULES_VERSION


def _analyse(task: tuple) -> dict:
    """One printed function: blockers and ops (cached by text and rules version)."""
    module, function, gen, path, cache_dir = task
    text = Path(path).read_text()
    key = hashlib.sha256((_rules_version() + gen + text).encode()).hexdigest()[:32]
    memo = Path(cache_dir) / f"{key}.json"
    if memo.exists():
        return json.loads(memo.read_text())
    import sys
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    res = blockers(text, path)
    res.update(module=module, function=function, generation=gen, lines=text.count("\n") + 1, ops=ops_of(text))
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(json.dumps(res))
    return res


def run(index: dict, cache: Path, only=None, jobs: int = 2) -> dict:
    """The census over every printed function of the cache."""
    from multiprocessing import Pool
    names = {m["module"] for m in index["modules"]}
    tasks = []
    for m in index["modules"]:
        if only and not any(o == m["module"] if o in names else o in m["module"] for o in only):
            continue
        for f in m.get("functions", []):
            for gen in GENERATIONS:
                if f.get(gen):
                    tasks.append((m["module"], f["function"], gen, str(cache / f[gen]), str(cache / "census-memo")))
    tasks.sort(key=lambda t: -Path(t[3]).stat().st_size)    # largest first: the long ones do not trail
    t0 = time.perf_counter()
    with Pool(max(1, jobs)) as pool:
        rows = []
        for i, r in enumerate(pool.imap_unordered(_analyse, tasks), 1):
            rows.append(r)
            print(f"  census {i}/{len(tasks)} {r['module']}/{r['function']}.{r['generation']}: "
                  f"{len(r['blockers'])} blocker(s){'' if r['parses_after_stubs'] else ', not parsed after stubs'}"
                  f" ({r['seconds']} s)", flush=True)
    rows.sort(key=lambda r: (r["module"], r["function"], r["generation"]))
    return aggregate(rows, seconds=round(time.perf_counter() - t0, 1))


def aggregate(rows: list[dict], seconds: float = 0.0) -> dict:
    titles = {r.id: r.title for r in RULES}
    constructs: dict = {}
    ops: dict = {}
    for gen in GENERATIONS:
        grows = [r for r in rows if r["generation"] == gen]
        table: dict = {}
        for r in grows:
            seen = set()
            for i, b in enumerate(r["blockers"]):
                c = b["construct"]
                e = table.setdefault(c, {"construct": c, "title": titles.get(c, _op_title(c)), "functions": set(),
                                         "modules": set(), "first": 0, "occurrences": 0, "examples": []})
                e["occurrences"] += 1
                if i == 0:
                    e["first"] += 1
                if c in seen:
                    continue
                seen.add(c)
                e["functions"].add(f"{r['module']}/{r['function']}")
                e["modules"].add(r["module"])
                if len(e["examples"]) < 3 and b["snippet"] not in [x["snippet"] for x in e["examples"]]:
                    e["examples"].append({"at": f"{r['module']}/{r['function']}.{gen}.py:{b['line']}",
                                          "snippet": b["snippet"][:160], "message": b["what"][:160]})
        constructs[gen] = sorted(({**e, "functions": len(e["functions"]), "modules": len(e["modules"])}
                                  for e in table.values()), key=lambda e: (-e["modules"], -e["functions"], e["construct"]))
        otable: dict = {}
        for r in grows:
            for name, info in r.get("ops", {}).items():
                e = otable.setdefault(name, {"op": display_name(name), "key": name, "category": category(name),
                                             "functions": set(), "modules": set(), "calls": 0, "operands": set()})
                e["functions"].add(f"{r['module']}/{r['function']}")
                e["modules"].add(r["module"])
                e["calls"] += info["calls"]
                e["operands"].update(info["operands"])
        ops[gen] = sorted(({**e, "functions": len(e["functions"]), "modules": len(e["modules"]),
                            "operands": sorted(e["operands"]),
                            "known": op_status(e["key"], max(e["operands"]) if e["operands"] else 0)}
                           for e in otable.values()), key=lambda e: (-e["functions"], e["op"]))
    summary = {}
    for gen in GENERATIONS:
        grows = [r for r in rows if r["generation"] == gen]
        summary[gen] = {"functions": len(grows), "parse_today": sum(1 for r in grows if not r["blockers"]),
                        "parse_after_stubbing_all": sum(1 for r in grows if r["parses_after_stubs"]),
                        "budget_exhausted": sum(1 for r in grows if r.get("budget_exhausted")),
                        "modules": len({r["module"] for r in grows})}
    per_function = [{"module": r["module"], "function": r["function"], "generation": r["generation"],
                     "lines": r.get("lines"), "parses_after_stubs": r["parses_after_stubs"],
                     "budget_exhausted": bool(r.get("budget_exhausted")), "seconds": r.get("seconds"),
                     "blockers": [b["construct"] for b in r["blockers"]]} for r in rows]
    return {"rules_version": _rules_version(), "seconds": seconds, "summary": summary, "constructs": constructs,
            "ops": ops, "functions": per_function}


def _op_title(construct: str) -> str:
    if construct.startswith("operand-count: "):
        op = construct.split(": ", 1)[1]
        return f"`{op}` with an operand count our op registry does not take"
    return construct


def write(data: dict, results: Path) -> None:
    from benchmarks._common import machine
    results.mkdir(exist_ok=True)
    (results / "production_corpus_census.json").write_text(
        json.dumps({"machine": machine(), **data}, indent=1, sort_keys=True) + "\n")
    (results / "production_corpus_census.md").write_text(markdown(data))
    print(f"wrote {results / 'production_corpus_census.json'} and .md")


def markdown(data: dict, top: int = 60) -> str:
    out = ["# Production corpus census (issue 14)", "",
           "Generated by `python benchmarks/production_corpus.py --no-build --stage none --census` from the printed",
           "cache (apache-tvm 0.27.0.post1, tirx-kernels 0.1.2.post1).  Snippets are not kept here: they",
           "are in the JSON only as short examples with their position in the cache.", ""]
    for gen in GENERATIONS:
        s = data["summary"][gen]
        out += [f"## {gen}: {s['functions']} functions of {s['modules']} modules", "",
                f"`ir.parse` accepts {s['parse_today']} today; with every listed construct stubbed, "
                f"{s['parse_after_stubbing_all']} parse.", "",
                "| construct | modules | functions | first blocker in | what |", "|---|---:|---:|---:|---|"]
        for e in data["constructs"][gen][:top]:
            out.append(f"| `{e['construct']}` | {e['modules']} | {e['functions']} | {e['first']} | "
                       f"{e['title'].replace('|', '/')} |")
        out.append("")
    for gen in GENERATIONS:
        out += [f"## ops used, {gen} (functions using each; `known` = what ir.ops.classify says today)", "",
                "| op | category | functions | modules | calls | known |", "|---|---|---:|---:|---:|---|"]
        for e in data["ops"][gen]:
            out.append(f"| `{e['op']}` | {e['category']} | {e['functions']} | {e['modules']} | {e['calls']} | "
                       f"{e['known'].replace('|', '/')[:90]} |")
        out.append("")
    return "\n".join(out) + "\n"


def print_summary(data: dict, top: int = 40) -> None:
    for gen in GENERATIONS:
        s = data["summary"][gen]
        print(f"\n{gen}: {s['functions']} functions; parse today {s['parse_today']}; "
              f"parse with all constructs stubbed {s['parse_after_stubbing_all']}")
        print(f"  {'construct':<48} {'modules':>7} {'funcs':>6} {'first':>6}")
        for e in data["constructs"][gen][:top]:
            print(f"  {e['construct'][:48]:<48} {e['modules']:>7} {e['functions']:>6} {e['first']:>6}")
    for gen in GENERATIONS:
        unknown = [e for e in data["ops"][gen] if e["known"] == "unknown"]
        print(f"\n{gen}: {len(data['ops'][gen])} ops, {len(unknown)} unknown to the registry and front end")
