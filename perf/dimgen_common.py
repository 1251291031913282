"""What the parts of perf/dimension_generalisation.py share: the progress log on stderr (log) and the
noise specifications KIND:LEVEL (DEFAULT_NOISE, parse_noise, noise_label)."""
import argparse
import datetime
import sys

DEFAULT_NOISE = ["none:0", "gaussian:0.05", "gaussian:0.1", "uniform:0.05", "uniform:0.1"]


def log(msg):
    print(f"[dimgen {datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_noise(spec):
    kind, _, level = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in ("none", "gaussian", "uniform"):
        raise argparse.ArgumentTypeError(f"noise {spec!r}: KIND:LEVEL with KIND none, gaussian or uniform")
    try:
        lv = float(level) if level else 0.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"noise {spec!r}: level is not a number")
    return ("none", 0.0) if kind == "none" or lv == 0 else (kind, lv)


def noise_label(kind, level):
    return "none" if kind == "none" else f"{kind} {level:g}"
