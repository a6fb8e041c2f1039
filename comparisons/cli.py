"""The ``sparsebayes`` command line: ``sparsebayes reproduce ID``, ``sparsebayes list``."""
from __future__ import annotations

import argparse
import sys


def _cmd_list(args):
    from .registry import registry

    for exp_id, exp in registry().items():
        reps = f" (default reps {exp.default_reps})" if exp.default_reps else ""
        print(f"{exp_id:32s} {exp.description}{reps}")
    return 0


def _cmd_reproduce(args):
    from .registry import registry, run_experiment, side_by_side

    ids = list(registry()) if args.all else args.ids
    if not ids:
        print("name an experiment id (see `sparsebayes list`) or pass --all", file=sys.stderr)
        return 2
    import pandas as pd

    for exp_id in ids:
        payload, result = run_experiment(exp_id, reps=args.reps, seed=args.seed, out=args.out)
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(f"\n== {exp_id}  ({payload['seconds']:.1f} s) ==")
            print(side_by_side(payload).to_string(index=False))
        for note in result.notes:
            print(f"note: {note}")
        print(f"wrote {args.out}/{exp_id}.json, {args.out}/{exp_id}.md" + "".join(f", {p}" for p in result.plots))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sparsebayes",
        description="Sparse Bayesian learning: reproduce the papers' tables and figures.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="list the experiment ids")
    p_list.set_defaults(func=_cmd_list)
    p_rep = sub.add_parser("reproduce", help="run a paper's experiment and write JSON + Markdown + plots")
    p_rep.add_argument("ids", nargs="*", help="experiment ids (see `sparsebayes list`)")
    p_rep.add_argument("--all", action="store_true", help="run every registered experiment")
    p_rep.add_argument("--reps", type=int, default=None, help="repetitions (default: the paper's count)")
    p_rep.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p_rep.add_argument("--out", default="results", help="output directory (default ./results)")
    p_rep.set_defaults(func=_cmd_reproduce)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
