"""The ``sparsebayes`` command line: ``sparsebayes reproduce ID``, ``sparsebayes list``, and
``sparsebayes compare`` on a bundled data set or on a CSV file (``--target COLUMN``)."""
from __future__ import annotations

import argparse
import sys

from .compare_any_report import REPORT_FILES, refuse_overwrite


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

    if args.n_jobs is not None and not args.no_compile_cache:  # worker processes find the compiled programs too
        import os

        import jax

        os.environ["SPARSEBAYES_COMPILATION_CACHE"] = "1"
        os.environ.setdefault("SPARSEBAYES_CACHE_DIR", jax.config.jax_compilation_cache_dir or "")
    payloads = []
    for exp_id in ids:
        payload, result = run_experiment(exp_id, reps=args.reps, seed=args.seed, out=args.out, n_jobs=args.n_jobs)
        payloads.append(payload)
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(f"\n== {exp_id}  ({payload['seconds']:.1f} s) ==")
            print(side_by_side(payload).to_string(index=False))
        for note in result.notes:
            print(f"note: {note}")
        print(f"wrote {args.out}/{exp_id}.json, {args.out}/{exp_id}.md" + "".join(f", {p}" for p in result.plots))
    if args.report:
        from .reproduce_report import write_report

        words = ["--all"] if args.all else ids
        words += [f"--{k} {v}" for k, v in (("reps", args.reps), ("seed", args.seed)) if v is not None]
        write_report(payloads, args.report, command=" ".join(["sparsebayes reproduce", *words, "--report", args.report]))
        print(f"wrote {args.report}")
    return 0


def _cmd_compare(args):
    from .compare import DATASETS

    progress = not args.no_progress and sys.stderr.isatty()
    bundled = args.dataset in DATASETS
    if bundled and args.target is not None:
        args.parser.error(f"--target apply to a CSV file, not to the bundled data set {args.dataset!r} (it has its own target)")
    from pathlib import Path

    if not bundled and not Path(args.dataset).is_file():
        args.parser.error(f"{args.dataset!r} is neither a bundled data set ({', '.join(DATASETS)}) nor a CSV file")
    if not bundled and args.target is None:
        args.parser.error(f"name the target column of {args.dataset} with --target COLUMN")

    def log(line):  # step lines unless --no-progress; notes on the data always
        if not args.no_progress or line.startswith("note:"):
            print(line, file=sys.stderr, flush=True)

    from . import compare, compare_csv

    settings = dict(estimator=args.estimator, features=args.features, out=args.out, draws=args.draws,
                    chains=args.chains, warmup=args.warmup, seed=args.seed, progress=progress, log=log,
                    surrogate_eps=args.surrogate_eps, test_fraction=args.test_fraction, overwrite=args.overwrite)
    try:
        if not args.overwrite:  # before the data are read: a refusal costs nothing
            directory = (compare.report_directory(args.dataset, args.out) if bundled
                         else compare_csv.report_directory(args.dataset, args.out))
            refuse_overwrite(directory, REPORT_FILES, "--overwrite")
        if bundled:
            cmp, directory = compare.compare(args.dataset, **settings)
        else:
            cmp, directory = compare_csv.run(args.dataset, args.target, **settings)
    except (ValueError, ArithmeticError, OSError) as err:  # the table, the model, the files: a message, not a traceback
        return _error(err)
    _print_comparison(cmp)
    print(f"wrote {directory}/: {', '.join(sorted(p.name for p in Path(directory).iterdir()))}")
    return 0


def _print_comparison(cmp):
    """The report's lead on standard output: the verdict, the selection's suggestion, the held-out
    scores where there are any, and every warning of the diagnostics."""
    import pandas as pd

    from .verdict import display_table

    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 40):
        print(display_table(cmp.verdict(), list(cmp.samples)).to_string())
        if cmp.y_test is not None:
            print("held-out predictive:")
            print(cmp.predictive().round(4).to_string())
    for diag in cmp.diagnostics().values():
        for warning in diag["warnings"]:
            print(f"warning: {warning}")


def _error(err):
    """Print ``err`` as the command's error line (it names the problem) and return the exit status 2."""
    print(f"sparsebayes compare: error: {err}", file=sys.stderr)
    return 2


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


def _parsed(text, kind):
    """``text`` read as ``kind`` (``float`` or ``int``), else the usage error that says it is not a
    number (an integer)."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def _fraction(text):
    """An argparse type: a number strictly between 0 and 1 (the held-out share of the rows)."""
    value = _parsed(text, float)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {value:g}")
    return value


def _count(minimum, below=None, below_name=None):
    """An argparse type: an integer of at least ``minimum`` (and below ``below``, written
    ``below_name`` in the message), else a usage error that says so."""

    def parse(text):
        value = _parsed(text, int)
        if below is not None and not minimum <= value < below:
            raise argparse.ArgumentTypeError(f"must be in [{minimum}, {below_name or below}), got {value}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def _n_jobs(text):
    """An argparse type: joblib's ``n_jobs``, a nonzero integer (-1: every core)."""
    value = _parsed(text, int)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive count or negative (-1: every core), not 0")
    return value


def _report_path(text):
    """An argparse type: a Markdown file whose directory is writable (:func:`_out_dir`)."""
    from pathlib import Path

    _out_dir(str(Path(text).absolute().parent))
    return text


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
    p_rep.add_argument("--n-jobs", type=_n_jobs, default=None,
                       help="parallel tasks for the repetitions, splits and CV folds (joblib's n_jobs: -1 = every "
                            "core; default: serial, or the joblib backend in effect); the figures do not depend on it")
    p_rep.add_argument("--report", type=_report_path, default=None, metavar="FILE.md",
                       help="also write one Markdown page of every experiment run: ours, the paper's, the spread "
                            "and z, the baselines, and the evidence on each figure more than 2 SE from the paper's")
    p_rep.set_defaults(func=_cmd_reproduce, parser=p_rep)
    from .compare_csv import ESTIMATORS, FEATURES

    p_cmp = sub.add_parser("compare", help="the sparse estimate beside the posterior of the same model (NUTS, "
                                           "and Gibbs where the model has it), one report")
    p_cmp.add_argument("dataset", metavar="DATASET_OR_CSV",
                       help="a bundled data set: regression (diabetes, boston), binary (pima, crabs, wbc), "
                            "multiclass (iris, glass); or a CSV file with a header row, with --target. Both take "
                            "one path and write one report into OUT/compare-<name>/: the verdict per input, the "
                            "projection selection, the diagnostics, then the tables and plots")
    p_cmp.add_argument("--target", default=None, help="CSV: the column to predict (the others are the inputs; "
                                                      "non-numeric ones are one-hot encoded)")
    p_cmp.add_argument("--estimator", choices=list(ESTIMATORS), default=None,
                       help="the model family (default: bls for a numeric target, laplace for two classes, smlr "
                            "for more): laplace / horseshoe (EM; probit for classes), "
                            "bayesian-lasso, rvm (type-II; Bernoulli RVM for classes), bls, flap (FLAP with σ² "
                            "estimated), smlr (classes); a class-label or two-valued target gets the family's "
                            "classifier (beyond two classes one-vs-all, smlr multinomial), any other target its "
                            "regressor")
    p_cmp.add_argument("--surrogate-eps", type=float, default=1e-3,
                       help="--estimator rvm: ε of the labelled proper surrogate α_i ~ Gamma(ε, ε) sampled in "
                            "place of the RVM's improper posterior (default 1e-3)")
    p_cmp.add_argument("--features", choices=list(FEATURES), default=None,
                       help="the feature map (default linear: the columns themselves; the EM and "
                            "SMLR estimators add a bias column, the type-II regressors a flat intercept)")
    p_cmp.add_argument("--test-fraction", type=_fraction, default=None,
                       help="hold out this share of the rows (drawn with --seed; stratified by class for a "
                            "classifier), fit and sample on the rest, and score the point estimate and the "
                            "posterior predictive on the held-out rows (the report's 'Held-out predictive')")
    p_cmp.add_argument("--no-progress", action="store_true",
                       help="no step lines or progress bars on stderr (bars are shown only when stderr is a terminal)")
    p_cmp.add_argument("--chains", type=_count(1), default=4, help="NUTS / Gibbs chains (default 4)")
    p_cmp.add_argument("--warmup", type=_count(0), default=1000, help="warm-up draws per chain (default 1000)")
    p_cmp.add_argument("--draws", type=_count(4), default=1000,
                       help="kept draws per chain (default 1000; at least 4, ArviZ's least for R-hat and ESS)")
    p_cmp.add_argument("--seed", type=_seed, default=0, help="random seed of the split and the samplers (default 0)")
    p_cmp.add_argument("--out", type=_out_dir, default="results", help="output directory (default ./results)")
    p_cmp.add_argument("--overwrite", action="store_true",
                       help="replace a report already in the output directory (without it, an existing report is "
                            "left as it is and the command stops with an error naming the file, before any fit)")
    p_cmp.set_defaults(func=_cmd_compare, parser=p_cmp)
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
