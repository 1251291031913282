#!/usr/bin/env bash
# tune.sh WORKDIR QGML CONFIG
# qgml tune prints the table of batch sizes and the two answers (fastest, largest that fits), writes
# the trials as JSON with --json, honours a tiny --memory-budget (small largest batch, bigger
# candidates not run), and rejects bad options with a message naming the option and a non-zero exit.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL: $*"; exit 1; }
tune() { "$qgml" tune "$config" --data.points 300 "$@" --kokkos-disable-warnings; }

# 1. The table, both answers and the JSON.
tune --epochs-per-trial 2 --json tune.json >tune.log 2>&1 || { cat tune.log; fail "qgml tune failed"; }
cat tune.log
grep -Eq '^ +batch +batches +s/epoch +points/s +trainer bytes +bytes/point +fits' tune.log || fail "no table header"
for b in 32 64 128 256 300; do
  grep -Eq "^ +$b\*? +[0-9]+ +[0-9.e+-]+ +[0-9]+ .* yes$" tune.log || fail "no timed row for batch $b"
done
grep -q "^note: tune measures speed only" tune.log || fail "no speed-only note"
grep -Eq '^fastest: batch [0-9]+ \([0-9.e+-]+ s/epoch\); largest that fits: 300 points \(budget [0-9.]+ [KMGT]?i?B\)$' \
  tune.log || fail "no final line with both answers"
[ -f tune.json ] || fail "no tune.json"
ls -A | grep -q '\.tmp' && fail "a temporary file was left behind"
/usr/bin/python3 - tune.json <<'EOF' || fail "tune.json is not the expected JSON"
import json, sys
j = json.load(open(sys.argv[1]))
trials = j["trials"]
assert j["points"] == 300 and j["epochs_per_trial"] == 2, j
assert [t["batch"] for t in trials] == [32, 64, 128, 256, 300], trials
for t in trials:
    assert t["fits"] and t["timed"] and len(t["epoch_seconds"]) == 2, t
    assert t["median_epoch_seconds"] > 0 and t["points_per_second"] > 0, t
    model = j["memory"]["fixed_bytes"] + t["batch"] * j["memory"]["bytes_per_point"]
    if j["execution_space"] in ("Serial", "OpenMP", "Threads"):
        assert t["trainer_bytes"] == model, t
    else:  # the GPU team path's reduction partials grow in steps of the batch: the model is within 1 %
        assert model <= t["trainer_bytes"] <= 1.01 * model, (t, model)
assert j["fastest"]["batch"] in [t["batch"] for t in trials]
assert j["largest_fitting_batch"] == 300
EOF

# 2. A tiny budget: room for the fixed buffers and 40 points.
fixed=$(/usr/bin/python3 -c 'import json; print(int(json.load(open("tune.json"))["memory"]["fixed_bytes"]))')
per=$(/usr/bin/python3 -c 'import json; print(int(json.load(open("tune.json"))["memory"]["bytes_per_point"]))')
budget=$((fixed + 40 * per + per / 2))
tune --epochs-per-trial 1 --memory-budget "$budget" --json small.json >small.log 2>&1 ||
  { cat small.log; fail "qgml tune with a small budget failed"; }
cat small.log
grep -Eq '; largest that fits: 40 points \(budget ' small.log || fail "the largest batch in budget $budget is not 40"
grep -Eq '^ +32 .* yes$' small.log || fail "batch 32 should fit and run"
grep -Eq '^ +40 .* yes$' small.log || fail "the largest fitting batch 40 should run"
grep -Eq '^ +(64|128|256|300)\*? .* yes$' small.log && fail "a batch above 40 was run"
/usr/bin/python3 -c '
import json; j = json.load(open("small.json"))
assert j["largest_fitting_batch"] == 40, j["largest_fitting_batch"]
assert all(t["batch"] <= 40 for t in j["trials"] if t["timed"]), j["trials"]' || fail "small.json"
# Given candidates above the budget are listed but not run.
tune --epochs-per-trial 1 --memory-budget "$budget" --batches 16,128 >given.log 2>&1 ||
  { cat given.log; fail "qgml tune --batches with a small budget failed"; }
grep -Eq '^ +16 .* yes$' given.log && grep -Eq '^ +128 .* no \(not run\)$' given.log ||
  { cat given.log; fail "batch 128 should be listed as not fitting"; }

# 3. Bad input: message naming the option, non-zero exit.
expect_error() {
  local regex=$1
  shift
  "$qgml" tune "$@" --kokkos-disable-warnings >bad.out 2>bad.err && fail "exit 0 for: $*"
  grep -Eq -- "$regex" bad.err || { cat bad.err; fail "message for '$*' does not match: $regex"; }
  echo "ok (rejected): $(head -c 200 bad.err)"
}
expect_error "unknown option --batch \(options: --batches" "$config" --batch 64
expect_error "--batches '64,abc': 'abc' is not a positive integer" "$config" --batches 64,abc
expect_error "--batches '64,,128': empty entry" "$config" --batches 64,,128
expect_error "--batches '0': 0 is not a positive integer" "$config" --batches 0
expect_error "--batches: 5000 is larger than the data set \(2500 points\)" "$config" --batches 64,5000
expect_error "--memory-budget 'lots': expected a number of bytes" "$config" --memory-budget lots
expect_error "--memory-budget '-5': must be positive" "$config" --memory-budget -5
expect_error "memory budget 100 B \(100 bytes, --memory-budget\) does not fit even a batch of 1 point" \
  "$config" --memory-budget 100
expect_error "--epochs-per-trial '0': expected an integer from 1 to 1000000" "$config" --epochs-per-trial 0
expect_error "option --json needs a value" "$config" --json
expect_error "--json nowhere/t.json: the directory 'nowhere' does not exist" "$config" --json nowhere/t.json
expect_error "unknown setting 'training.learning_rate' \(did you mean 'training.lr'" "$config" --training.learning_rate 1
expect_error "training.epochs = 'ten': expected an integer" "$config" --training.epochs ten
expect_error "qgml tune needs a config file" --batches 64
expect_error "absent.yaml'?: cannot open" absent.yaml
echo "ok: $(grep "^fastest:" tune.log)"
