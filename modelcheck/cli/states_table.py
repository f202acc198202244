"""`modelcheck states`: the explorer's states and transitions per reduction configuration, as a table."""
from __future__ import annotations


def print_states(name: str, a, rows: list[dict]) -> None:
    from ..explorer import reductions
    programs = a.programs
    resources = [programs.resource_names.get(r, str(r)) for r in programs.resources()]
    print(f"explorer states - {name}: {len(programs.warps)} warp(s), {programs.size()} sync command(s), "
          f"{len(resources)} projection(s); phase A {a.stats.get('phase_a_wall_time_s', 0.0):.3f} s")
    if a.findings:
        print(f"phase A findings: {', '.join(f'{f.status} {f.kind}' for f in a.findings)}")
    print()
    print(f"{'configuration':<58} {'states':>10} {'transitions':>12} {'wall (s)':>9}  result")
    for row in rows:
        label = f"({row['config']}) {row['label']}"
        print(f"{label:<58} {row['states']:>10,} {row['transitions']:>12,} {row['wall_time_s']:>9.3f}  "
              f"{reductions.describe(row)}")
    projected = [row for row in rows if row["config"] != "d"]
    if not projected:
        return
    print()
    width = max([len("projection"), *(len(p["resource"]) for row in projected for p in row["per_projection"]),
                 *(len(r) for r in resources)])
    head = f"{'projection':<{width}}"
    for row in projected:
        head += f" | ({row['config']}) {'method':<11} {'states':>8} {'transitions':>11}"
    print(head)
    # a projected configuration may end in a whole-program search (when a schedule leaves the run's
    # generation assignment); show such extra entries after the projections
    extra = [p["resource"] for row in projected for p in row["per_projection"] if p["resource"] not in resources]
    for resource in resources + list(dict.fromkeys(extra)):
        line = f"{resource:<{width}}"
        for row in projected:
            p = next((p for p in row["per_projection"] if p["resource"] == resource), None)
            if p is None:
                line += f" | {'    not explored':<16} {'-':>8} {'-':>11}"
                continue
            method = p["method"] if p.get("status", "complete") == "complete" else f"{p['method']}!"
            line += f" | {'':4}{method:<11} {p['states']:>8,} {p['transitions']:>11,}"
        print(line)
    if any(p.get("status", "complete") != "complete" for row in projected for p in row["per_projection"]):
        print("(search! = the search of that projection stopped: at a limit, or on a finding)")
