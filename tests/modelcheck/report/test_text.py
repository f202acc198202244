"""The text report of docs/architecture.md#reports (mirroring checker-semantics §1.3): header, findings
block, evidence lines with source excerpts, deadlock headlines and Blocked-warps groups."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import modelcheck
from modelcheck.common import findings as F
from modelcheck.report.text import SourceCache, findings_block, ranges
from tests.manifest import KERNELS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REPORT = FIXTURES / "report"
RING = FIXTURES / "explorer" / "ring.py"
BUGGY = KERNELS / "producer_overtaking.py"
FIXED = KERNELS / "producer_overtaking_fixed.py"
EXCERPT = re.compile(r"^ *(\d+) \| ")


def sync(path, **consts):
    return modelcheck.synccheck(modelcheck.load(path, **consts))


def source_line(path, n: int) -> str:
    return Path(path).read_text().split("\n")[n - 1]


def excerpt_lines(path, line: int, col: int, width: int, indent: int) -> list[str]:
    """The one-line excerpt the renderer must print: numbered line, then carets under the span."""
    pad = " " * indent
    w = len(str(line))
    return [f"{pad}{line:>{w}} | {source_line(path, line)}", f"{pad}{' ' * w} | {' ' * (col - 1)}{'^' * width}"]


# ---------------------------------------------------------------------- headers
def test_error_header_direct_execution():
    text = sync(BUGGY).format(coverage=False)
    assert text.splitlines()[0] == ("synccheck ERROR - 1 finding(s); native phase producer_overtaking, "
                                    "direct execution")


def test_clean_header_counts_verifier_states_and_transitions():
    report = sync(FIXED)
    assert report.format(coverage=False) == ("synccheck CLEAN - 0 finding(s); native phase producer_overtaking_fixed, "
                               "3 verifier states / 22 verifier transitions\n")
    assert (report.stats["verifier_states"], report.stats["verifier_transitions"]) == (3, 22)


def test_phase_b_header_has_the_verifier_counts_even_with_findings():
    report = sync(RING, STAGES=3, ROUNDS=2, EMPTY_COUNT=2, PRODUCER_START=0, CONSUMER_START=1, EMPTY_WAIT=0)
    first = report.format(coverage=False).splitlines()[0]
    m = re.fullmatch(r"synccheck ERROR - 1 finding\(s\); native phase ring, (\d+) verifier states / "
                     r"(\d+) verifier transitions", first)
    assert m, first
    assert (int(m[1]), int(m[2])) == (report.stats["verifier_states"], report.stats["verifier_transitions"])


# ---------------------------------------------------------------------- the whole text of one finding
def test_producer_overtaking_full_text():
    report = sync(BUGGY)
    (f,) = report.findings
    op = f.details["operation"]
    assert (op["warp"], op["iters"]) == (0, [1])
    path = str(BUGGY)
    call = "T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))"
    line = next(n for n, text in enumerate(Path(path).read_text().split("\n"), 1) if call in text)
    col = source_line(path, line).index(call) + 1
    expected = [
        "synccheck ERROR - 1 finding(s); native phase producer_overtaking, direct execution",
        "",
        "=== Verdict findings (1) ===",
        "  [ERROR] mbarrier_arrive_before_consumption: mbarrier.arrive on full[0] started before generation 0 "
        "was consumed",
        f"    Source: warp 0, source op #{op['site']}, loop iteration 1",
        f"      at {path}:{line}:{col}",
        *excerpt_lines(path, line, col, len(call), 8),
        "    Hint: add back-pressure: wait for the consumer's release before re-arming this barrier",
    ]
    assert report.format(coverage=False) == "\n".join(expected) + "\n"


def test_source_and_related_evidence_lines():
    path = str(REPORT / "unordered_rearm.py")
    report = sync(path)
    (f,) = report.findings
    assert f.kind == "mbarrier_prior_generation_consumption_not_happens_before"
    lines = report.format(coverage=False).splitlines()
    assert lines[3] == ("  [ERROR] mbarrier_prior_generation_consumption_not_happens_before: generation 0 "
                        "consumption does not happen before mbarrier.arrive on full[0] generation 1")
    src, (rel,) = f.details["operation"], f.details["related_operations"]
    arrive = "T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))"
    wait = "T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)"
    assert lines[4] == f"    Source: warp 0, source op #{src['site']}, loop iteration 1"
    assert lines[5] == f"      at {path}:28:29"
    assert lines[6:8] == excerpt_lines(path, 28, 29, len(arrive), 8)
    assert lines[8] == f"    Related: warp 1, source op #{rel['site']}, loop iteration 0"
    assert lines[9] == f"      at {path}:31:25"
    assert lines[10:12] == excerpt_lines(path, 31, 25, len(wait), 8)
    assert lines[12].startswith("    Hint: add back-pressure")
    assert len(lines) == 13


def test_findings_block_is_absent_when_clean():
    text = sync(FIXED).format(coverage=False)
    assert "===" not in text and text.count("\n") == 1


# ---------------------------------------------------------------------- deadlocks
@pytest.mark.parametrize("values,text", [([4, 5, 6, 7], "4-7"), ([0, 2, 3], "0, 2-3"), ([3, 1, 2, 9], "1-3, 9"),
                                         ([5], "5"), ([2, 2, 3], "2-3"), ([0, 2, 4], "0, 2, 4")])
def test_warp_ranges_are_compressed(values, text):
    assert ranges(values) == text


def _blocked_group(lines: list[str], header: str) -> list[str]:
    """The lines of one Blocked warps group: its header and the indented lines below it."""
    k = lines.index(header)
    out = [lines[k]]
    for line in lines[k + 1:]:
        if not line.startswith("      "):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("consts,warps", [({}, "0, 2-3"), ({"WARPS": 8, "WAITERS": 0xF0, "FULL_COUNT": 5}, "4-7")])
def test_deadlock_headline_and_blocked_group(consts, warps):
    path = str(REPORT / "blocked_ranges.py")
    report = sync(path, **consts)
    assert report.verdict == "error"
    (f,) = report.findings
    assert f.kind == "deadlock"
    lines = report.format(coverage=False).splitlines()
    assert lines[3] == f"  [ERROR] deadlock: execution cannot make progress; blocked warps {warps}"
    # the headline replaces the message: the next line is already evidence
    assert lines[4] == f"    Blocked warps {warps}: await mbarrier.try_wait; phase 0"
    group = _blocked_group(lines, lines[4])
    site = f.details["blocked"][0]["operation"]["site"]
    wait = "T.cuda.mbarrier_wait(full.ptr_to([0]), 0)"
    source = group.index(f"      Source: source op #{site}")        # no warp: the group names them
    assert group[source + 1] == f"        at {path}:25:21"
    assert group[source + 2:source + 4] == excerpt_lines(path, 25, 21, len(wait), 10)
    assert lines.count(lines[4]) == 1                               # one group for one wait site
    assert lines[-1].startswith("    Hint: ")


def test_deadlock_groups_per_awaited_wait():
    path = str(KERNELS / "hang_wrong_parity.py")
    report = sync(path)
    lines = report.format(coverage=False).splitlines()
    assert "  [ERROR] deadlock: execution cannot make progress; blocked warps 0-1" in lines
    g0 = _blocked_group(lines, "    Blocked warps 0: await mbarrier.try_wait; phase 1")
    g1 = _blocked_group(lines, "    Blocked warps 1: await mbarrier.try_wait; phase 0")
    for group in (g0, g1):
        sources = [line for line in group if line.lstrip().startswith("Source:")]
        assert len(sources) == 1 and sources[0].startswith("      Source: source op #")
        assert "warp" not in sources[0]
        assert any(line.startswith(f"        at {path}:") for line in group)


def test_phase_b_deadlock_names_the_blocked_warp_and_the_witness():
    path = str(RING)
    report = sync(path, STAGES=3, ROUNDS=2, EMPTY_COUNT=2, PRODUCER_START=0, CONSUMER_START=1, EMPTY_WAIT=0)
    (f,) = report.findings
    assert f.kind == "deadlock" and f.details["verification"] == "fixed_sync"
    lines = report.format(coverage=False).splitlines()
    assert lines[3] == "  [ERROR] deadlock: execution cannot make progress; blocked warps 1"
    assert lines[4] == "    Blocked warps 1: await mbarrier.try_wait; phase 1"
    group = _blocked_group(lines, lines[4])
    assert any(re.fullmatch(r"      Source: source op #\d+, loop iteration 0", line) for line in group)
    k = next(i for i, line in enumerate(lines) if line.startswith("    Witness schedule ("))
    assert lines[k] == f"    Witness schedule ({len(f.details['witness'])} transition(s)):"
    assert lines[k + 1].startswith("      warp 0: init on full[0]")
    assert lines[-1].startswith("    Hint: ")


# ---------------------------------------------------------------------- excerpts
def _finding_at(span: dict) -> F.Finding:
    op = {"warp": 2, "site": 7, "iters": [3, 1], "op": "mbarrier.wait", "source_text": "x", "span": span}
    return F.make("synccheck", "deadlock", "a message\nsecond line", {"operation": op})


def test_excerpt_is_at_most_five_lines_with_right_aligned_numbers(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 21)))
    span = {"file": str(path), "line": 8, "col": 1, "end_line": 14, "end_col": 5}
    lines = findings_block([_finding_at(span)], SourceCache())
    assert lines[1] == "  [ERROR] deadlock: a message"
    assert lines[2] == "    second line"                   # the rest of the message under its first line
    assert lines[3] == "    Source: warp 2, source op #7, loop iteration 3/1"
    assert lines[4] == f"      at {path}:8:1"
    numbered = [line for line in lines if EXCERPT.match(line)]
    assert [int(EXCERPT.match(line)[1]) for line in numbered] == [8, 9, 10, 11, 12]
    assert numbered[0] == "         8 | line_8 = 8"          # width of the widest number (12): 2
    assert numbered[-1] == "        12 | line_12 = 12"
    caret = lines[lines.index(numbered[0]) + 1]
    assert re.fullmatch(r" {8} {2} \| \^+", caret)


def test_excerpt_carets_under_the_span_columns(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("a = 1\n    foo(bar, baz)\n")
    span = {"file": str(path), "line": 2, "col": 9, "end_line": 2, "end_col": 12}
    lines = findings_block([_finding_at(span)], SourceCache())
    k = lines.index("        2 |     foo(bar, baz)")
    assert lines[k + 1] == "          |         ^^^"


def test_unreadable_source_has_no_excerpt():
    span = {"file": "<string>", "line": 2, "col": 9, "end_line": 2, "end_col": 12}
    lines = findings_block([_finding_at(span)], SourceCache())
    assert lines[4] == "      at <string>:2:9"
    assert not any(EXCERPT.match(line) for line in lines)


def test_status_is_upper_cased_and_hint_comes_last():
    f = F.make("synccheck", "uninitialized_read", "read of never-written bytes", {})
    g = F.make("synccheck", "analysis_incomplete", "missing input bindings for n",
               {"reason": "missing_input_bindings"})
    lines = findings_block(F.sort_findings([f, g]), SourceCache())
    assert lines == ["=== Verdict findings (2) ===",
                     "  [INCOMPLETE] analysis_incomplete: missing input bindings for n",
                     "    Reason: missing_input_bindings",
                     "",
                     "  [REVIEW] uninitialized_read: read of never-written bytes",
                     f"    Hint: {F.kind('uninitialized_read').hint}",
                     ""]


# ---------------------------------------------------------------------- require_clean, ordering
def test_require_clean_raises_with_counts_and_text():
    report = sync(BUGGY)
    with pytest.raises(modelcheck.CheckFailed) as err:
        report.require_clean()
    message = str(err.value)
    head, _, rest = message.partition("\n")
    assert head == "synccheck error (error=1, incomplete=0, review=0)"
    assert rest == report.format()
    assert isinstance(err.value, RuntimeError)
    sync(FIXED).require_clean()


def test_findings_sorted_by_status_kind_id():
    made = [F.make("synccheck", "uninitialized_read", "r", {"n": 1}),
            F.make("synccheck", "deadlock", "d", {"n": 2}),
            F.make("synccheck", "analysis_incomplete", "i", {"n": 3}),
            F.make("synccheck", "data_race", "a", {"n": 4}),
            F.make("synccheck", "deadlock", "d", {"n": 5}),
            F.make("synccheck", "analysis_incomplete", "i", {"n": 6})]
    got = F.sort_findings(made)
    order = {"error": 0, "incomplete": 1, "review": 2}
    assert got == sorted(made, key=lambda f: (order[f.status], f.kind, f.id))
    assert [f.status for f in got] == ["error"] * 3 + ["incomplete"] * 2 + ["review"]
    assert [f.kind for f in got][:3] == ["data_race", "deadlock", "deadlock"]
    assert got[1].id < got[2].id and got[3].id < got[4].id
    # the renderer keeps that order
    lines = findings_block(got, SourceCache())
    heads = [line.split(":")[0].strip() for line in lines if line.startswith("  [")]
    assert heads == [f"[{f.status.upper()}] {f.kind}" for f in got]
