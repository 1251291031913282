#!/usr/bin/env bash
# perf/gpu/check.sh: the whole GPU check in one command on a fresh GPU machine, from a build tree packed
# on the development machine (perf/gpu/pack_prebuilt.sh): no compiling there.
#
#   perf/gpu/check.sh --prebuilt FILE [--out DIR] [--budget S] [--quick] [run.sh options...]
#
#   1. the machine: GPU name, compute capability, driver, CUDA runtime and compute-sanitizer versions,
#      torch and its CUDA (one JSON line, "suite": "gpu_info");
#   2. run.sh's `checks` stage: the whole CUDA CTest suite (an exclusion is listed with its reason in
#      OUT/summary.md) and compute-sanitizer memcheck, racecheck and initcheck on their test subsets, all
#      four at once (none of them is timed); each sanitizer's reports judged by sanitizer_report.py
#      (the documented Kokkos filter; perf/gpu/README.md "Sanitizer filter");
#   3. run.sh's `bench` stage (bench.py; the time left, cases past the deadline recorded as skipped).
#
# Output, at most 8 files as the device tool returns them: OUT/check.jsonl (every JSON line: the machine,
# the steps, the sanitizers, the benchmarks), OUT/summary.md, OUT/bench.md, OUT/ctest.log and
# OUT/logs.tar.xz (every log, the sanitizers' full reports among them). Exit status: run.sh's (1 if any
# step failed or timed out).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prebuilt="" out="" budget=540 pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) prebuilt="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) pass+=("$1"); shift ;;
  esac
done
[ -n "$prebuilt" ] || { echo "check.sh: --prebuilt FILE is required (perf/gpu/pack_prebuilt.sh)" >&2; exit 2; }
out="${out:-$root/perf/results/gpu-check-$(date -u +%Y%m%d)}"
mkdir -p "$out"
work="$(mktemp -d /tmp/qgml-gpu-check.XXXXXX)"
t0=$(date +%s)
export PATH="$PATH:/usr/local/cuda/bin"

# 1. The machine.
python3 - "$work/info.jsonl" <<'EOF'
import json, subprocess, sys, datetime
def run(*cmd):
    try:
        r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable: {e}"
info = {"suite": "gpu_info", "status": "info", "utc": datetime.datetime.now(datetime.timezone.utc).isoformat()}
smi = run("nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.mem",
          "--format=csv,noheader")
info["nvidia_smi"] = smi
parts = [p.strip() for p in smi.splitlines()[0].split(",")] if smi and "," in smi else []
if len(parts) >= 4:
    info.update(gpu=parts[0], compute_cap=parts[1], driver=parts[2], gpu_memory=parts[3])
head = run("nvidia-smi")
info["cuda_driver_api"] = next((l.split("CUDA Version:")[1].strip(" |") for l in head.splitlines()
                                if "CUDA Version:" in l), None)
info["nvcc"] = run("nvcc", "--version").splitlines()[-1:] or None
info["compute_sanitizer"] = run("compute-sanitizer", "--version").splitlines()[-1:] or None
info["torch"] = run("python3", "-c", "import torch; print(torch.__version__, torch.version.cuda, "
                    "torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no cuda')")
info["cpus"] = run("nproc")
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(info) + "\n")
print(json.dumps(info))
EOF

# 2 and 3: run.sh (its own --budget keeps the summary inside ours).
left=$(( budget - ($(date +%s) - t0) ))
# The functional checks get about 45 % of the time, the benchmarks the rest; the training peer is the
# vectorised PyTorch trainer (the fastest; the reference-style one is far slower and measured elsewhere).
bash "$here/run.sh" --prebuilt "$prebuilt" --out "$work/run" --budget "$left" --checks-limit $(( left * 45 / 100 )) \
  --bench-args "--train-peers torch_vectorised --case-timeout 100" "${pass[@]}" checks bench
rc=$?

# Collect: one JSON-lines file, the summary, the logs.
{
  cat "$work/info.jsonl"
  python3 - "$work/run/steps.tsv" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    f = line.rstrip("\n").split("\t")
    print(json.dumps({"suite": "gpu_check_step", "step": f[0], "status": f[1], "seconds": int(f[2] or 0),
                      "exit": f[3]}))
EOF
  cat "$work/run/sanitizers.jsonl" 2>/dev/null
  cat "$work/run/bench.jsonl" 2>/dev/null
} >"$out/check.jsonl"
cp "$work/run/logs/ctest.log" "$out/ctest.log" 2>/dev/null
cp "$work/run/bench.md" "$out/bench.md" 2>/dev/null
{
  echo "# GPU check, $(date -u +%FT%TZ)"
  echo
  echo '```'
  head -n 1 "$work/info.jsonl"
  echo '```'
  echo
  echo "## Steps"
  echo
  echo '```'
  column -t -s $'\t' "$work/run/steps.tsv" 2>/dev/null || cat "$work/run/steps.tsv"
  echo '```'
  echo
  echo "## CTest"
  echo
  echo '```'
  sed -n '/tests passed/,$p' "$work/run/logs/ctest.log" 2>/dev/null | head -n 80
  echo '```'
  echo
  echo "Excluded from CTest on a prebuilt tree (run.sh's step_ctest): \"every public header compiles on its own\","
  echo "\"build: configure check *\" and \"build: no extended lambda in qgml kernels\" (compile, configure and"
  echo "object tests: the packed tree holds binaries, not the compiler's objects or the Kokkos install they"
  echo "build against; CI's cuda preset build runs them)."
  echo
  echo "## Sanitizers"
  echo
  echo '```'
  cat "$work/run/sanitizers.jsonl" 2>/dev/null
  echo '```'
} >"$out/summary.md"
tar -C "$work/run" -cf - logs steps.tsv $(cd "$work/run" && ls bench.* sanitizers.jsonl 2>/dev/null) 2>/dev/null |
  xz -T0 -6 >"$out/logs.tar.xz"
# The device tool returns files up to 16 MB: past 15 MB, the sanitizers' report logs keep their first and
# last 20000 lines (their counts are in check.jsonl either way).
if [ "$(stat -c %s "$out/logs.tar.xz")" -gt 15000000 ]; then
  for f in "$work"/run/logs/*-reports.log; do
    [ -f "$f" ] && { head -n 20000 "$f"; echo "... (cut by check.sh)"; tail -n 20000 "$f"; } >"$f.cut" && mv "$f.cut" "$f"
  done
  tar -C "$work/run" -cf - logs steps.tsv 2>/dev/null | xz -T0 -6 >"$out/logs.tar.xz"
fi
echo "check.sh: $(( $(date +%s) - t0 )) s; $out: $(cd "$out" && ls | tr '\n' ' ')" >&2
exit $rc
