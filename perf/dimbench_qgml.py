"""Running qgml for perf/dimension_benchmark.py: one call with retries while the binary is being relinked
(run_qgml), what the binary is (qgml_info, git_revision) and one `qgml train DATA.csv` with every default,
read back from the run's dimension_summary.json and files (run_qgml_train)."""
import datetime
import hashlib
import json
import os
import subprocess
import time

from dimbench_common import log, rel

RETRIES = 3          # qgml calls that fail because the binary is being relinked are retried
RETRY_WAIT_S = 5.0


def filter_stderr(text):
    """qgml's stderr without the Kokkos OpenMP binding warning."""
    skip = ("Kokkos::OpenMP::initialize WARNING", "In general, for best performance", "For best performance with",
            "For unit testing set OMP_PROC_BIND")
    return "\n".join(l for l in text.splitlines() if not any(s in l for s in skip)).strip()


def run_qgml(qgml, args, timeout, what):
    """Runs qgml with args; returns (CompletedProcess or None, seconds of the successful attempt, error).
    Retries when the binary cannot be started or changes while it runs (the lead's build relinks it)."""
    def mtime():
        try:
            return os.stat(qgml).st_mtime_ns
        except OSError:
            return None

    err = None
    for attempt in range(RETRIES + 1):
        before = mtime()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([qgml] + args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.perf_counter() - t0, f"{what}: timed out after {timeout} s"
        except OSError as e:  # missing, text file busy, exec format error while the linker writes it
            err = f"{what}: cannot start {qgml}: {e}"
        else:
            seconds = time.perf_counter() - t0
            relinked = mtime() != before
            if proc.returncode == 0:
                return proc, seconds, None
            err = f"{what}: exit {proc.returncode}: " + (filter_stderr(proc.stderr)[-800:] or proc.stdout[-800:])
            if not (relinked or proc.returncode in (126, 127) or proc.returncode < 0):
                return proc, seconds, err
        if attempt < RETRIES:
            log(f"  {err.splitlines()[0][:200]} -- retrying in {RETRY_WAIT_S:.0f} s (binary being rebuilt?)")
            time.sleep(RETRY_WAIT_S)
    return None, 0.0, err


def wait_for_binary(qgml):
    """True when qgml exists, waiting a little for a relink in progress."""
    for attempt in range(RETRIES + 1):
        if os.access(qgml, os.X_OK):
            return True
        if attempt < RETRIES:
            log(f"no executable {qgml} yet -- waiting {RETRY_WAIT_S:.0f} s (binary being rebuilt?)")
            time.sleep(RETRY_WAIT_S)
    return False


def qgml_has_generate(qgml):
    for attempt in range(RETRIES + 1):
        try:
            proc = subprocess.run([qgml, "--help"], capture_output=True, text=True, timeout=60)
            text = proc.stdout + proc.stderr
            if "usage" in text:
                return "qgml generate" in text
        except (OSError, subprocess.TimeoutExpired):
            pass
        if attempt < RETRIES:
            time.sleep(RETRY_WAIT_S)
    return False


def qgml_info(qgml):
    info = {"path": os.path.abspath(qgml)}
    try:
        st = os.stat(qgml)
        info["mtime"] = datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds")
        with open(qgml, "rb") as f:
            info["sha256"] = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        info["error"] = str(e)
        return info
    for args in (["--version"], ["info"]):
        proc, _, err = run_qgml(qgml, args, 60, "qgml " + args[0])
        if proc is not None and proc.returncode == 0:
            info["qgml " + " ".join(args)] = filter_stderr(proc.stdout)
    rev = git_revision(os.path.dirname(os.path.abspath(qgml)))
    if rev:
        info["source_git_revision"] = rev
    return info


def git_revision(where):
    try:
        rev = subprocess.run(["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        if not rev:
            return None
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def simple_yaml(path):
    """Two-level YAML of qgml's config.yaml: {"section.key": "value"}."""
    out, section = {}, None
    try:
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].rstrip()
                if not line.strip():
                    continue
                if not line.startswith((" ", "\t")) and line.endswith(":"):
                    section = line[:-1].strip()
                elif ":" in line and section:
                    k, v = line.strip().split(":", 1)
                    out[f"{section}.{k.strip()}"] = v.strip().strip('"')
    except OSError:
        pass
    return out


def number(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return int(f) if f.is_integer() and "." not in str(v) and "e" not in str(v).lower() else f


def qgml_run_details(run_dir, summary):
    """N, epochs and w of a qgml run, from dimension_summary.json if it says them, else the run's files."""
    out = {}
    for key, names in (("N", ("N", "matrix_size", "model_N", "model.N")),
                       ("epochs", ("epochs", "epochs_run", "training_epochs")),
                       ("w", ("w", "training.w"))):
        for n in names:
            if n in summary:
                out[key] = summary[n]
                break
    cfg = simple_yaml(os.path.join(run_dir, "config.yaml"))
    if "N" not in out and "model.N" in cfg:
        out["N"] = number(cfg["model.N"])
    if "w" not in out and "training.w" in cfg:
        out["w"] = number(cfg["training.w"])
    if "training.epochs" in cfg:
        out["epochs_configured"] = number(cfg["training.epochs"])
    if "training.early_stop" in cfg:
        out["early_stop"] = number(cfg["training.early_stop"])
    hist = os.path.join(run_dir, "history.csv")
    if "epochs" not in out and os.path.exists(hist):
        with open(hist) as f:
            rows = [l for l in f.read().splitlines()[1:] if l.strip()]
        out["epochs"] = len(rows)
    return out


def run_qgml_train(args, csv, work_runs, tag):
    parent = os.path.join(work_runs, tag)
    os.makedirs(parent, exist_ok=True)
    target = csv
    if args.config_shim:
        target = os.path.join(parent, "data.yaml")
        with open(target, "w") as f:
            f.write(f"data:\n  file: {os.path.abspath(csv)}\n")
    before = set(os.listdir(parent))
    proc, seconds, err = run_qgml(args.qgml, ["train", target, "--quiet", "--output.directory", parent,
                                              "--output.name", tag, "--output.plots", "false"],
                                  args.timeout, "qgml train")
    rec = {"seconds": round(seconds, 4), "estimate": None, "error": err}
    new = sorted(d for d in set(os.listdir(parent)) - before if os.path.isdir(os.path.join(parent, d)))
    if new:
        rec["run_dir"] = rel(os.path.join(parent, new[-1]))
    if err:
        return rec
    if not new:
        rec["error"] = f"qgml train exited 0 but made no run directory under {parent}"
        return rec
    run_dir = os.path.join(parent, new[-1])
    path = os.path.join(run_dir, "dimension_summary.json")
    try:
        with open(path) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        rec["error"] = f"no readable dimension_summary.json in {run_dir}: {e}"
        return rec
    mode = summary.get("mode")
    frac = summary.get("fraction") or []
    rec.update(estimate=mode, median=summary.get("median"), mean=summary.get("mean"),
               fraction_at_mode=(frac[mode] if isinstance(mode, int) and 0 <= mode < len(frac) else None),
               histogram=summary.get("histogram"))
    rec.update(qgml_run_details(run_dir, summary))
    known = {"mode", "median", "mean", "fraction", "histogram", "N", "epochs", "w"}
    extra = {k: v for k, v in summary.items() if k not in known and not isinstance(v, (list, dict))}
    if extra:
        rec["summary_extra"] = extra
    return rec
