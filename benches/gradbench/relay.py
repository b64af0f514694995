#!/usr/bin/env python3
"""Connects one GradBench eval to one tool and records the session.

    relay.py session --checkout DIR --eval NAME --tool NAME --out FILE -- TOOL_CMD...
    relay.py table [--json OUT] FILE...

`session` starts the eval (`python python/gradbench/gradbench/evals/NAME/run.py`, from
the checkout, so it finds `tools/manual` for its reference outputs) and the tool,
forwards each eval message to the tool and each response back, and writes one JSON
object per evaluated size to FILE: the eval, the size (the message's description),
the tool, the median `evaluate` time of the primal and of the derivative function,
and whether the eval accepted both outputs.

`table` prints the derivative/primal ratio per eval, size and tool from such files,
and with `--json` writes them in the bot's ratio-report format (schema 1).
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Per eval: (primal function, derivative function).
FUNCTIONS = {
    "hello": ("square", "double"),
    "lse": ("primal", "gradient"),
    "llsq": ("primal", "gradient"),
    "det": ("primal", "gradient"),
    "ode": ("primal", "gradient"),
    "gmm": ("objective", "jacobian"),
    "kmeans": ("cost", "dir"),
    "lstm": ("objective", "jacobian"),
    "ba": ("objective", "jacobian"),
    "ht": ("objective", "jacobian"),
    # No primal function: each of the four functions (the modes of the outer and the
    # inner derivative) is a row of its own, with its time and no ratio.
    "particle": (None, None),
    "saddle": (None, None),
}


def session(args):
    checkout = Path(args.checkout).resolve()
    eval_cmd = [sys.executable, f"python/gradbench/gradbench/evals/{args.eval}/run.py"]
    eval_cmd += shlex.split(args.eval_args)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout / "python" / "gradbench")
    ev = subprocess.Popen(
        eval_cmd, cwd=checkout, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    tool = subprocess.Popen(
        args.tool_cmd, cwd=checkout, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    evaluations = {}  # id -> record
    order = []
    defined = None
    started = time.monotonic()
    try:
        for line in ev.stdout:
            message = json.loads(line)
            tool.stdin.write(line)
            tool.stdin.flush()
            if message.get("kind") == "end":
                break
            reply = tool.stdout.readline()
            if reply == "":
                print(f"{args.tool} exited while answering {line.strip()[:200]}", file=sys.stderr)
                break
            response = json.loads(reply)
            ev.stdin.write(reply)
            ev.stdin.flush()
            kind = message.get("kind")
            if kind == "define":
                defined = response.get("success", False)
                if not defined:
                    print(f"{args.tool} declined {args.eval}: {response.get('error')}", file=sys.stderr)
            elif kind == "evaluate":
                record = {
                    "function": message["function"],
                    "description": message.get("description", ""),
                    "success": response.get("success", False),
                    "error": response.get("error"),
                    "timings": [
                        t["nanoseconds"] for t in response.get("timings", []) if t["name"] == "evaluate"
                    ],
                    "valid": None,
                }
                evaluations[message["id"]] = record
                order.append(message["id"])
                if not record["success"]:
                    print(f"{args.tool} failed {args.eval} {record['function']} "
                          f"{record['description']}: {record['error']}", file=sys.stderr)
            elif kind == "analysis":
                record = evaluations.get(message["of"])
                if record is not None:
                    record["valid"] = message["valid"]
                    if not message["valid"]:
                        print(f"invalid: {args.eval} {record['function']} {record['description']} "
                              f"({args.tool}): {(message.get('error') or '')[:2000]}", file=sys.stderr)
    finally:
        for p in (tool, ev):
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass
        for p in (tool, ev):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    primal_fn, derivative_fn = FUNCTIONS[args.eval]
    sizes = {}
    calls = {}
    for i in order:
        r = evaluations[i]
        # `hello` sends no description: its calls are numbered instead.
        n = calls[r["function"]] = calls.get(r["function"], 0) + 1
        description = r["description"] or f"call {n}"
        if primal_fn is None:
            description = f"{description} {r['function']}"
        size = sizes.setdefault(description, {})
        size["primal" if r["function"] == primal_fn else "derivative"] = r
    rows = []
    for description, pair in sizes.items():
        row = {"eval": args.eval, "size": description, "tool": args.tool}
        for part in ("primal", "derivative"):
            r = pair.get(part)
            ok = bool(r and r["success"] and r["timings"])
            row[f"{part}_ns"] = statistics.median(r["timings"]) if ok else None
            row[f"{part}_runs"] = len(r["timings"]) if ok else 0
            row[f"{part}_valid"] = bool(r and r["valid"])
            if r is not None and not r["success"]:
                row[f"{part}_error"] = r["error"]
        row["has_primal"] = primal_fn is not None
        rows.append(row)
    if defined is False:
        rows.append({"eval": args.eval, "size": None, "tool": args.tool, "declined": True})
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{args.eval} on {args.tool}: {len(rows)} sizes in {time.monotonic() - started:.0f} s",
          file=sys.stderr)


def fmt_ns(ns):
    if ns is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def table(args):
    rows = []
    for path in args.files:
        with open(path) as f:
            rows += [json.loads(l) for l in f if l.strip()]
    tools = []
    for r in rows:
        if r["tool"] not in tools:
            tools.append(r["tool"])
    cases = {}
    for r in rows:
        if r.get("declined"):
            continue
        cases.setdefault((r["eval"], r["size"]), {})[r["tool"]] = r

    def ratio(r):
        if r is None or not r["primal_ns"] or r["derivative_ns"] is None:
            return None
        return r["derivative_ns"] / r["primal_ns"]

    def valid(r):
        if r is None:
            return False
        return (r["primal_valid"] or not r.get("has_primal", True)) and r["derivative_valid"]

    def failed(r):
        """`unsupported` when the tool answered the function with an error."""
        return "unsupported" if r.get("primal_error") or r.get("derivative_error") else None

    header = ["eval", "size"]
    for t in tools:
        header += [f"{t} primal", f"{t} derivative", f"{t} ratio", f"{t} valid"]
    lines = [header]
    for (ev, size), by_tool in cases.items():
        line = [ev, size]
        for t in tools:
            r = by_tool.get(t)
            q = ratio(r)
            line += [
                fmt_ns(r and r["primal_ns"]),
                fmt_ns(r and r["derivative_ns"]),
                "—" if q is None else f"{q:.3g}",
                "—" if r is None else ("yes" if valid(r) else failed(r) or "NO"),
            ]
        lines.append(line)
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(header))]
    for n, l in enumerate(lines):
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(l, widths)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    declined = sorted({(r["eval"], r["tool"]) for r in rows if r.get("declined")})
    for ev, t in declined:
        print(f"{t} declined {ev}")
    if args.json:
        report = {
            "schema_version": 1,
            "columns": tools,
            "cases": [],
            "meta": {"source": "GradBench evals via benches/gradbench/run.sh",
                     "ratio": "derivative time / primal time, each tool over its own primal"},
        }
        for (ev, size), by_tool in cases.items():
            first = by_tool.get(tools[0]) or next(iter(by_tool.values()))
            report["cases"].append({
                "label": f"{ev}/{size}",
                "primal_ns": first["primal_ns"],
                "ratios": {t: ratio(by_tool.get(t)) for t in tools},
                "times_ns": {t: (by_tool[t]["derivative_ns"] if t in by_tool else None) for t in tools},
                "primal_ns_by_tool": {t: (by_tool[t]["primal_ns"] if t in by_tool else None) for t in tools},
                "valid": {t: valid(by_tool.get(t)) for t in tools},
            })
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("session")
    s.add_argument("--checkout", required=True)
    s.add_argument("--eval", required=True, choices=sorted(FUNCTIONS))
    s.add_argument("--tool", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--eval-args", default="", help="the eval's own flags, as one string")
    s.add_argument("tool_cmd", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("--json")
    t.add_argument("files", nargs="+")
    args = parser.parse_args()
    session(args) if args.command == "session" else table(args)


if __name__ == "__main__":
    main()
