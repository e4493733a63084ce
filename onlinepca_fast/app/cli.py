"""Command line: ``onlinepca-fast`` / ``python -m onlinepca_fast``.

Sub-commands::

    demo                 WK Fig. 4 on the built-in stream (the default)
    experiment NAME      a paper's experiment: wk-fig4, wk-fig6, yl-fig1, kw-cone,
                         or digits (real data); tables, CSV, JSON and a PNG
    bench                per-trial times of the compiled learners vs the reference
    selfcheck            the compiled kernels and learners against the NumPy reference
    sweep CONFIG         a grid of learners x parameters x seeds x datasets (TOML/JSON)

Run ``onlinepca-fast COMMAND --help`` for the options.
"""

import argparse
import inspect
import os
import sys
import time

from .._validation import ALPHA, ETA, NONNEGATIVE_INT, POSITIVE_INT, argparse_type
from ._output import Interrupted, OutputFiles, WriteError, _outcome, check_output

_PROG = "onlinepca-fast"


# --- argument types: argparse turns their ValueError into a usage error -----------

_positive_int = argparse_type(POSITIVE_INT, "positive integer", int)
_nonnegative_int = argparse_type(NONNEGATIVE_INT, "non-negative integer", int)
_alpha = argparse_type(ALPHA, "number in [0, 1)")
_eta = argparse_type(ETA, '"auto", "adahedge" or a positive number',
                     lambda text: text if text in ETA.words else float(text))

# option dest -> (flags, argparse keywords) of the experiment functions' parameters
_OPTIONS = {
    "n_features": (["--n-features"], dict(type=_positive_int, metavar="N", help="dimension n")),
    "n_components": (["--n-components"], dict(
        type=_positive_int, metavar="K", help="k, the rank of the projection (1 <= k < n)")),
    "eta": (["--eta"], dict(type=_eta, help='learning rate: "auto", "adahedge" or a number > 0')),
    "alpha": (["--alpha"], dict(
        type=_alpha, help="mixing / fixed-share rate of the adaptive learner, in [0, 1)")),
    "segment_length": (["--segment-length"], dict(
        type=_positive_int, metavar="M",
        help="points per segment (digits: at most M images per class)")),
    "n_samples": (["--n-samples"], dict(type=_positive_int, metavar="T",
                                         help="number of points (kw-cone)")),
    "embedding": (["--embedding"], dict(
        choices=["padded", "full"],
        help="kw-cone: KW's 3-d cone padded with zeros (default), or the cone spanning "
             "all n dimensions")),
    "seeds": (["--seeds"], dict(
        type=_positive_int, metavar="S",
        help="number of seeds of the learners' randomisation (default 10)")),
    "data_seed": (["--data-seed"], dict(type=_nonnegative_int, metavar="SEED",
                                         help="seed of the data stream (default 0)")),
}
_PARAMS = tuple(_OPTIONS)


def _add_run_options(p, params, default_output):
    """The options of the experiment parameters `params`, output and progress."""
    g = p.add_argument_group("experiment parameters (defaults: the paper's)")
    for name in params:
        flags, kwargs = _OPTIONS[name]
        g.add_argument(*flags, **kwargs)
    o = p.add_argument_group("output")
    o.add_argument("--output", metavar="DIR",
                   help=f"directory for the files written, made if missing (default: "
                        f"{default_output})")
    o.add_argument("--no-plot", action="store_true", help="do not write a PNG")
    _add_quiet(o)


def _add_quiet(group):
    group.add_argument("--quiet", "-q", action="store_true",
                       help="no progress bar (it is drawn on a terminal only, on stderr)")


def _parser():
    from .._version import __version__
    from .bench import _BUDGET, MAX_BUDGET
    from .experiments import EXPERIMENTS

    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Randomized online PCA (Warmuth & Kuzmin; Yuan & Lamperski) with a "
                    "compiled core. Without a command, runs the demo.",
        epilog=f"Run '{_PROG} COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"onlinepca_fast {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo", help="WK Fig. 4: online PCA on a shifting stream (the default command)",
        description="The WK Sec. 8 / Fig. 4 experiment on the built-in synthetic stream "
                    "(n=20, k=2, three segments of 500, eta=1): OnlinePCA, the uncentered "
                    "version of WK Alg. 6, OnlineAdaptivePCA (alpha=1e-5), Follow the Leader "
                    "and the best fixed subspace in hindsight, over several seeds; prints "
                    "the totals and writes demo/demo.png (the cumulative losses; --output "
                    "for another folder) if matplotlib is installed.")
    from .experiments import wk_fig4
    _add_run_options(demo, [p for p in _PARAMS if p in inspect.signature(wk_fig4).parameters],
                     "./demo")

    exp = sub.add_parser(
        "experiment", help="run one of the papers' experiments (tables, CSV, JSON, PNG)",
        description="Run an experiment and write NAME.csv (curves per trial, averaged over "
                    "the seeds), NAME.json (parameters and totals) and NAME.png (if "
                    "matplotlib is installed) to --output. Experiments: wk-fig4 (WK Fig. 4), "
                    "wk-fig6 (WK Fig. 6, long-term memory: mixing the past, regret against "
                    "the best partition), yl-fig1 (YL Fig. 1), kw-cone (KW Figs. 2-3, needs "
                    "OnlineKernelPCA), digits (scikit-learn's handwritten digits, class by "
                    "class).")
    exp.add_argument("name", metavar="NAME", choices=sorted(EXPERIMENTS),
                     help="one of: " + ", ".join(sorted(EXPERIMENTS)))
    _add_run_options(exp, _PARAMS, "a folder named after the experiment, ./NAME")

    bench = sub.add_parser(
        "bench", help="per-trial times of the compiled learners against the reference",
        description="Per-trial times of OnlinePCA and CenteredOnlinePCA (n=20, k=2 and "
                    "n=100, k=10) against the NumPy reference, on this machine.")
    bench.add_argument("--budget", type=argparse_type(_BUDGET, f"number of seconds in (0, "
                                                           f"{MAX_BUDGET:g}]"),
                       default=1.0, metavar="SECONDS",
                       help=f"seconds per measurement (default 1.0, at most {MAX_BUDGET:g}; "
                            "8 measurements)")
    _add_quiet(bench)

    sub.add_parser("selfcheck", help="check the compiled kernels and one run of every "
                                     "learner against the NumPy reference")
    sweep_parser = _add_sweep_parser(sub)
    return parser, {"demo": demo, "experiment": exp, "bench": bench, "sweep": sweep_parser}


class _Progress:
    """Progress lines on stderr once a run has lasted ``quiet`` seconds (short runs: none)."""

    def __init__(self, quiet=1.0):
        self.start, self.quiet = time.perf_counter(), quiet

    def __call__(self, message):
        if time.perf_counter() - self.start >= self.quiet:
            print(message, file=sys.stderr, flush=True)


class _ProgressBar:
    """A tqdm bar of trials on stderr, for ``progress(done, total)``.

    Drawn on a terminal only (tqdm's ``disable=None``), after half a second
    (short runs: none), never with ``--quiet``; removed when done.
    """

    def __init__(self, desc, quiet):
        self.desc, self.quiet, self.bar = desc, quiet, None

    def __call__(self, done, total):
        if self.bar is None:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, desc=self.desc, unit=" trials", unit_scale=True,
                            file=sys.stderr, disable=True if self.quiet else None,
                            delay=0.5, leave=False, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _run_experiment(name, args, subparser, files_prefix, write_data):
    """Run experiment ``name`` with the options given; print the table; write
    files into ``args.output`` (default: the folder ``./files_prefix``)."""
    from . import experiments, plotting

    function = experiments.EXPERIMENTS[name]
    accepted = inspect.signature(function).parameters
    kwargs = {}
    for param in _PARAMS:
        value = getattr(args, param, None)
        if value is None:
            continue
        if param not in accepted:
            subparser.error(f"--{param.replace('_', '-')} does not apply to the {name} "
                            "experiment")
        kwargs[param] = value
    # checked before computing: the output directory and the memory the
    # dimension needs (one-line errors, exit status 2)
    output = args.output if args.output is not None else files_prefix
    files = [files_prefix + ext for ext in ((".csv", ".png", ".json") if write_data
                                            else (".png",))]
    problem = check_output(output, files) or _check_memory(kwargs.get("n_features"),
                                                            kwargs.get("n_samples"))
    if problem:
        print(f"{_PROG} {subparser.prog.split()[-1]}: error: {problem}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    bar = _ProgressBar(name, args.quiet)
    try:
        result = function(progress=bar, **kwargs)
    except (ValueError, TypeError) as exc:  # parameter combinations, e.g. k >= n
        subparser.error(str(exc))
    finally:
        bar.close()
    elapsed = time.perf_counter() - start

    print(experiments.format_table(result))
    print(f"\nran in {elapsed:.1f} s")
    plot = not args.no_plot and plotting.matplotlib_available()
    if not args.no_plot and not plot:
        print(_NO_MATPLOTLIB)
    names = [files_prefix + ext for ext, wanted in ((".csv", write_data), (".png", plot),
                                                    (".json", write_data)) if wanted]
    with OutputFiles(output) as out:  # all or none of the files, earlier ones kept whole
        if write_data:
            experiments.save_csv(result, out.path(files_prefix + ".csv"))
        if plot:
            plotting.plot_result(result, path=out.path(files_prefix + ".png"))
        if write_data:
            experiments.save_json(result, out.path(files_prefix + ".json"),
                                  elapsed_seconds=elapsed, files=names)
        written = out.commit()
    _report(written)
    return 0


_NO_MATPLOTLIB = ('matplotlib is not installed, so no plot was written '
                  '(pip install "onlinepca_fast[plot]")')


def _report(written):
    for path in written:
        print(f"wrote {os.path.abspath(path)}")


#: The eigen-learners hold a few n x n matrices each, and an experiment runs
#: several learners side by side: about this many n x n doubles in all.
_MATRICES_PER_RUN = 12


#: kw-cone's offline comparator (KW Alg. 2) holds a few T x T doubles (the
#: kernel matrix, its eigenvectors and their products).
_MATRICES_PER_SAMPLE_PAIR = 4


def _check_memory(n_features, n_samples=None):
    """None if the experiment's matrices fit in the physical memory, else why
    not: about 12 n^2 doubles, and 4 T^2 for kw-cone's T samples."""
    if n_features is None and n_samples is None:
        return None
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: no check
        return None
    for option, size, count in (("--n-features", n_features, _MATRICES_PER_RUN),
                                ("--n-samples", n_samples, _MATRICES_PER_SAMPLE_PAIR)):
        if size is None:
            continue
        need = 8.0 * count * float(size) ** 2
        if need > have:
            return (f"{option} {size} needs about {need / 2 ** 30:.3g} GiB "
                    f"({count} matrices of {size} x {size} doubles), more than this "
                    f"machine's {have / 2 ** 30:.3g} GiB")
    return None


# --- the sweep (onlinepca_fast.app.sweep) ---------------------------------------------

def _add_sweep_parser(subparsers):
    """Add the ``sweep`` command to the command line's sub-parsers; return its parser."""
    p = subparsers.add_parser(
        "sweep", help="run a grid of learners x parameters x seeds x datasets (TOML/JSON)",
        description="Run every learner of CONFIG (a .toml or .json file; see "
                    "examples/sweep.toml) with every combination of its listed parameter "
                    "values and every seed on every data set, in order, on threads (--jobs) "
                    "or on a Dask cluster (--scheduler); write one table (CSV, and Parquet "
                    "if pyarrow is installed) of total losses, regret against the best "
                    "fixed subspace and time per trial, and a PNG of the regrets.")
    p.add_argument("config", metavar="CONFIG", help="the sweep's .toml or .json file")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_positive_int, metavar="N",
                       help="run on N threads (the learners release the GIL)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on the Dask cluster at ADDRESS, e.g. tcp://scheduler-host:8786 "
                            "(needs onlinepca_fast[dask]; the workers need onlinepca_fast)")
    p.add_argument("--output", metavar="DIR",
                   help="directory for the files (default: a folder named after CONFIG, "
                        "in the current directory)")
    p.add_argument("--no-plot", action="store_true", help="do not write a PNG")
    _add_quiet(p)
    return p


def _run_sweep(args):
    """Run the ``sweep`` command; return the exit status."""
    from . import plotting
    from .sweep import (ConfigError, _run, _table_writers, expand, format_summary, load_config,
                        plot_sweep)

    def fail(message):  # one line on stderr, exit status 2, nothing computed or written
        print(f"{_PROG} sweep: error: {message}", file=sys.stderr)
        return 2

    stem = os.path.splitext(os.path.basename(args.config))[0]
    try:
        config = load_config(args.config)
    except OSError as exc:
        return fail(f"cannot read {args.config}: {exc.strerror or exc}")
    except ConfigError as exc:
        return fail(str(exc))
    try:  # the data sets are made and every learner tried on them before anything runs
        param_names, data, runs = expand(config)
    except ConfigError as exc:
        return fail(f"{args.config}: {exc}")
    out = args.output if args.output is not None else stem
    # checked before computing, and nothing made yet: an interrupted or
    # failed run leaves nothing behind (the folder is made when writing)
    problem = check_output(out, [stem + ext for ext in (".csv", ".parquet", ".png")])
    if problem:
        return fail(problem)

    client = None
    if args.scheduler is not None:
        try:
            from distributed import Client
        except ImportError:
            print(f'{_PROG}: --scheduler needs dask.distributed: pip install '
                  f'"onlinepca_fast[dask]"', file=sys.stderr)
            return 1
        try:
            client = Client(args.scheduler, timeout=30)
        except OSError as exc:
            print(f"{_PROG}: cannot reach the Dask scheduler at {args.scheduler}: {exc}",
                  file=sys.stderr)
            return 1
    backend = (f"the Dask cluster at {args.scheduler}" if client is not None else
               f"{args.jobs} threads" if args.jobs else "this thread")
    print(f"{args.config}: {len(runs)} fits on {len(data)} data set(s), on {backend}")
    start = time.perf_counter()
    from tqdm.auto import tqdm
    bar = tqdm(total=len(runs), desc="sweep", unit=" fits", file=sys.stderr,
               disable=True if args.quiet else None, delay=0.5, leave=False,
               dynamic_ncols=True)
    try:
        columns, rows = _run((param_names, data, runs), n_jobs=args.jobs, client=client,
                             progress=lambda: bar.update(1))
    finally:
        bar.close()
        if client is not None:
            client.close()
    print(f"ran in {time.perf_counter() - start:.1f} s")
    print(format_summary(columns, rows))

    plot = not args.no_plot and plotting.matplotlib_available()
    if not args.no_plot and not plot:
        print(_NO_MATPLOTLIB)
    with OutputFiles(out) as files:  # all or none of the files, earlier ones kept whole
        for ext, write in _table_writers(columns, rows):
            write(files.path(stem + ext))
        if plot:
            plot_sweep(columns, rows, files.path(stem + ".png"))
        written = files.commit()
    _report(written)
    return 0


def main(argv=None):
    """Entry point of the ``onlinepca-fast`` console script; returns the exit status.

    Ctrl-C stops with one line and status 130.  The files of a run are
    written after the computation, each to a temporary file beside it, and
    renamed onto their names together at the end: an interrupted run, or
    one whose writing fails (a full disk: one line, status 1), leaves the
    files of an earlier run as they were and no partial file.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt as exc:
        written = exc.written if isinstance(exc, Interrupted) else []
        print(f"{_PROG}: interrupted; " + ("no files were written for the interrupted run"
                                           if not written else _outcome(written)),
              file=sys.stderr)
        return 130


def _main(argv):
    parser, subparsers = _parser()
    args = parser.parse_args(argv)
    command = args.command or "demo"
    if args.command is None:  # the default command, with its default options
        args = subparsers["demo"].parse_args([])
    try:
        return _command(command, args, subparsers)
    except WriteError as exc:  # e.g. a full disk: the cause is in the message
        print(f"{_PROG} {command}: error: {exc}", file=sys.stderr)
        return 1


def _command(command, args, subparsers):
    if command == "sweep":
        return _run_sweep(args)
    if command == "selfcheck":
        from .._version import __version__
        print(f"onlinepca_fast {__version__}")
        print("self-check of the compiled kernels (n=1000, d=100) and learners against "
              "onlinepca_fast.reference:")
        from .selfcheck import selfcheck
        return 0 if selfcheck() else 1
    if command == "bench":
        from . import bench
        print("per-trial time of partial_fit, compiled learners against "
              "onlinepca_fast.reference (WK Sec. 8 stream):")
        rows = bench.benchmark(budget=args.budget,
                               progress=None if args.quiet else _Progress(0.0))
        print(bench.format_benchmark(rows))
        return 0
    if command == "demo":
        status = _run_experiment("wk-fig4", args, subparsers["demo"], "demo",
                                 write_data=False)
        if status == 0:
            print(f"\nFor CSV/JSON and the other experiments: {_PROG} experiment --help")
        return status
    return _run_experiment(args.name, args, subparsers["experiment"], args.name,
                           write_data=True)


if __name__ == "__main__":
    sys.exit(main())
