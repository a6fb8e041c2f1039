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

    known = registry()
    if args.all and args.ids:
        args.parser.error("pass experiment ids or --all, not both")
    ids = list(known) if args.all else args.ids
    if not ids:
        args.parser.error("name an experiment id (see `sparsebayes list`) or pass --all")
    unknown = [i for i in ids if i not in known]
    if unknown:  # checked before anything runs, so a typo in the last id does not cost the others' run
        args.parser.error(f"unknown experiment id(s) {', '.join(unknown)}; see `sparsebayes list`")
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


def _cmd_compare(args):
    import pandas as pd

    from .compare import compare

    report, table = compare(args.dataset, out=args.out, num_warmup=args.warmup, num_samples=args.draws,
                            num_chains=args.chains, seed=args.seed)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.round(3).to_string())
    print("diagnostics:", report["diagnostics"])
    print("held-out scores:", report["scores"])
    if "bayesian_lasso" in report:
        bl = pd.DataFrame(report["bayesian_lasso"]["table"]).set_index("coef")
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print("Bayesian Lasso (BLS type-II beside the Gibbs and NUTS posteriors):")
            print(bl.round(3).to_string())
        print("Bayesian Lasso diagnostics:", report["bayesian_lasso"]["diagnostics"])
        print("Bayesian Lasso held-out scores:", report["bayesian_lasso"]["scores"])
    print("timings (s):", {k: round(v, 3) for k, v in report["timings_s"].items()})
    extra = f", compare-{args.dataset}-bayesian-lasso.png" if "bayesian_lasso" in report else ""
    print(f"wrote {args.out}/compare-{args.dataset}.md, .json, .png{extra}")
    return 0


def _out_dir(text):
    """An argparse type: a directory that exists or can be made, and is writable (checked before
    any fit; nothing is made here)."""
    import os
    from pathlib import Path

    path = Path(text).absolute()
    first = next(p for p in (path, *path.parents) if p.exists())
    if not first.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {first} is a file, not a directory")
    if not os.access(first, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: {first} is not writable")
    return text


def _count(minimum, below=None, below_name=None):
    """An argparse type: an integer of at least ``minimum`` (and below ``below``, written
    ``below_name`` in the message), else a usage error that says so."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if below is not None and not minimum <= value < below:
            raise argparse.ArgumentTypeError(f"must be in [{minimum}, {below_name or below}), got {value}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


#: A seed NumPy and JAX both take.
_seed = _count(0, below=2**32, below_name="2**32")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sparsebayes",
        description="Sparse Bayesian learning: reproduce the papers' tables and figures.",
    )
    parser.add_argument("--no-compile-cache", action="store_true",
                        help="do not keep compiled programs on disk (by default they are kept in "
                             "$SPARSEBAYES_CACHE_DIR or ~/.cache/sparsebayes/jax, and a later run skips "
                             "compiling them again)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="list the experiment ids")
    p_list.set_defaults(func=_cmd_list)
    p_rep = sub.add_parser("reproduce", help="run a paper's experiment and write JSON + Markdown + plots")
    p_rep.add_argument("ids", nargs="*", help="experiment ids (see `sparsebayes list`)")
    p_rep.add_argument("--all", action="store_true", help="run every registered experiment")
    p_rep.add_argument("--reps", type=_count(1), default=None, help="repetitions (default: the paper's count)")
    p_rep.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p_rep.add_argument("--out", type=_out_dir, default="results", help="output directory (default ./results)")
    p_rep.set_defaults(func=_cmd_reproduce, parser=p_rep)
    from .compare import DATASETS

    p_cmp = sub.add_parser("compare", help="the sparse estimate (EM, BLS or SMLR) beside the NUTS posterior "
                                           "of the same model, one report")
    p_cmp.add_argument("dataset", choices=DATASETS,
                       help="regression (diabetes, boston: EM and BLS), binary (pima, crabs, wbc: probit EM), "
                            "multiclass (iris, glass: SMLR)")
    p_cmp.add_argument("--chains", type=_count(1), default=4, help="NUTS / Gibbs chains (default 4)")
    p_cmp.add_argument("--warmup", type=_count(0), default=1000, help="warm-up draws per chain (default 1000)")
    p_cmp.add_argument("--draws", type=_count(4), default=1000,
                       help="kept draws per chain (default 1000; at least 4, ArviZ's least for R-hat and ESS)")
    p_cmp.add_argument("--seed", type=_seed, default=0, help="random seed of the split and the samplers (default 0)")
    p_cmp.add_argument("--out", type=_out_dir, default="results", help="output directory (default ./results)")
    p_cmp.set_defaults(func=_cmd_compare)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if not args.no_compile_cache and args.command != "list":
        import sparsebayes

        try:
            sparsebayes.enable_compilation_cache()
        except OSError as err:  # e.g. a read-only home: run without the cache
            print(f"note: compiled programs are not kept on disk ({err}); set SPARSEBAYES_CACHE_DIR to a "
                  "writable directory, or pass --no-compile-cache", file=sys.stderr)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
