"""What the parts of perf/dimension_benchmark.py share: the repository root, paths relative to it (rel)
and the progress log on stderr (log)."""
import datetime
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rel(path):
    """path relative to the repository root when inside it, else absolute."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def log(msg):
    print(f"[dimbench {datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
