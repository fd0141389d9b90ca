#!/usr/bin/env python3
"""Bad-input suite: generates malformed inputs for every command and file format and runs lagom on each.

For every case: no crash (a signal), no hang (a timeout), no input modified (hash before and after), no
output file left behind, exit 2 and a `lagom: error:` line that names what was wrong (a file, a field or a
flag). Usage: run_bad_inputs.py LAGOM_BINARY TEST_DATA_DIR
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

LAGOM, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TIMEOUT_S = 20

NCCL_LOG = """# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
#  Rank  0 Group  0 Pid  41234 on    node17 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  41235 on    node17 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    20.00    0.05    0.05      0    19.50    0.05    0.05      0
        2048           512     float     sum      -1    21.00    0.10    0.10      0    20.50    0.10    0.10      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.07
"""


def preset_json(name):
    out = subprocess.run([LAGOM, "presets", "--show", name, "--json"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


CLUSTER = preset_json("dgx-a100")
WORKLOAD = preset_json("llama3-8b")
with open(os.path.join(DATA, "hf", "llama-3.1-405b.json")) as f:
    HF = json.load(f)

SIM = ["simulate", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]
cases = []  # (name, argv, {file: bytes}, [substrings the error must contain])


def add(name, argv, files, expect):
    cases.append((name, argv, files, expect))


def dump(doc):
    return json.dumps(doc, allow_nan=True).encode()


# Text-level corruptions of every JSON input, each in the command that reads it.
def corruptions(valid):
    text = valid.decode()
    yield "empty", b""
    yield "truncated-half", valid[: len(valid) // 2]
    yield "truncated-1", valid[:-1]
    yield "binary", bytes(range(256)) * 4
    yield "nul-bytes", b"\0" * 64
    yield "array", b"[1, 2, 3]"
    yield "string", b'"hello"'
    yield "number", b"42"
    yield "null", b"null"
    yield "nan-literal", b'{"layers": NaN}'
    yield "deep-nesting", b"[" * 100000 + b"]" * 100000
    yield "deep-objects", b'{"a":' * 5000 + b"1" + b"}" * 5000
    yield "huge-array", b"[" + b"1," * 500000 + b"1]"
    yield "bad-utf8", b'{"name": "\xff\xfe"}'
    yield "trailing-garbage", valid + b" }}}"
    yield "unicode-keys", text.replace('"', '"\u00e9', 2).encode()


for label, data in corruptions(dump(WORKLOAD)):
    add(f"workload-{label}", SIM + ["--model", "m.json"], {"m.json": data}, ["m.json"])
for label, data in corruptions(dump(CLUSTER)):
    add(f"cluster-{label}", ["simulate", "--model", "llama3-8b", "--cluster", "c.json", "--gpus", "8",
                             "--global-batch", "8"], {"c.json": data}, ["c.json"])
for label, data in corruptions(dump(HF)):
    add(f"hf-{label}", SIM + ["--model", "config.json", "--seq", "2048"], {"config.json": data}, ["config.json"])
for label, data in corruptions(b'{"ops": [], "overlap": {"bucket_mb": 25}}'):
    if label == "deep-objects":
        continue  # a valid object; a comm config's other top-level fields are tune's report, not read
    add(f"comm-config-{label}", SIM + ["--model", "llama3-8b", "--comm-config", "k.json"], {"k.json": data},
        ["k.json"])
for label, data in corruptions(b'{"iteration_time_s": 1, "breakdown_s": {"compute": 1}}'):
    add(f"check-{label}", ["check", "--baseline", "b.json", "--current", "b2.json"],
        {"b.json": data, "b2.json": data}, ["b.json"])

# Field-level mutations: wrong types, out-of-range integers, NaN/inf, huge numbers.
BAD_INTS = [-1, 0, 2**31, 2**32, 2**32 + 12, 2**63 - 1, 2**64 - 1, 1e308, 1.5, "12", True, [], {}]
for field in ["layers", "hidden", "heads", "kv_heads", "vocab", "seq"]:
    for value in BAD_INTS:
        doc = dict(WORKLOAD)
        doc[field] = value
        add(f"workload-{field}={value!r}"[:80], SIM + ["--model", "m.json"], {"m.json": dump(doc)},
            ["m.json", field])
for field in ["experts", "top_k"]:
    for value in [0, -3, 2**32 + 4, "2", 1e300]:
        doc = dict(WORKLOAD)
        doc["moe"] = {"experts": 8, "top_k": 2, field: value}
        add(f"workload-moe.{field}={value!r}", SIM + ["--model", "m.json"], {"m.json": dump(doc)},
            ["m.json", "moe." + field])
for section, field in [("gpu", "memory_gib"), ("gpu", "hbm_GBps"), ("gpu", "sms"), ("intra", "bw_GBps"),
                       ("intra", "latency_us"), ("nic", "gbit"), ("nic", "latency_us"), ("nic", "count"),
                       ("intra", "efficiency"), ("nic", "efficiency")]:
    for value in [-1, 1e308, float("inf"), float("nan"), "fast", None if field != "latency_us" else [], {}]:
        doc = json.loads(json.dumps(CLUSTER))
        doc[section][field] = value
        if value is None:
            continue
        add(f"cluster-{section}.{field}={value!r}", ["simulate", "--model", "llama3-8b", "--cluster", "c.json",
                                                    "--gpus", "8", "--global-batch", "8"],
            {"c.json": dump(doc)}, ["c.json"])
for field, value in [("gpus_per_node", 0), ("gpus_per_node", 2**32), ("gpus_per_node", 100000),
                     ("nodes", -1), ("nodes", 2**40), ("nccl_channels", 65), ("nccl_version", "x"),
                     ("gpu", []), ("intra", "nvswitch"), ("unknown_field", 1)]:
    doc = json.loads(json.dumps(CLUSTER))
    doc[field] = value
    add(f"cluster-{field}={value!r}", ["simulate", "--model", "llama3-8b", "--cluster", "c.json", "--gpus", "8",
                                       "--global-batch", "8"], {"c.json": dump(doc)}, ["c.json", field])
for key in ["num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"]:
    for value in [None, -1, 0, 2**32, "many", 1e308]:
        doc = dict(HF)
        if value is None:
            del doc[key]
        else:
            doc[key] = value
        add(f"hf-{key}={value!r}", SIM + ["--model", "config.json", "--seq", "2048"],
            {"config.json": dump(doc)}, ["config.json", key])
for model_type in ["mamba", "bert", "", 5]:
    doc = dict(HF)
    doc["model_type"] = model_type
    add(f"hf-model_type={model_type!r}", SIM + ["--model", "config.json", "--seq", "2048"],
        {"config.json": dump(doc)}, ["config.json", "model_type"])
add("hf-without-seq", SIM + ["--model", "config.json"], {"config.json": dump(HF)}, ["config.json", "seq"])
doc = dict(HF)
doc["kv_lora_rank"] = 512
add("hf-mla", SIM + ["--model", "config.json", "--seq", "2048"], {"config.json": dump(doc)}, ["kv_lora_rank"])

for key, value in [("channels", 2**40), ("channels", -1), ("threads", "x"), ("bytes", -5), ("algo", "magic"),
                   ("proto", 3), ("collective", "allfoo"), ("group", "zz")]:
    op = {"collective": "allreduce", "group": "dp", "bytes": 1024, "algo": "ring", "proto": "simple"}
    op[key] = value
    add(f"comm-config-ops.{key}={value!r}", SIM + ["--model", "llama3-8b", "--comm-config", "k.json"],
        {"k.json": dump({"ops": [op]})}, ["k.json", key])
add("comm-config-other-model", SIM + ["--model", "llama3-8b", "--comm-config", "k.json"],
    {"k.json": dump({"model": "gpt3-175b", "ops": []})}, ["k.json", "model"])

# Check documents: negative or misspelled metrics.
good = {"iteration_time_s": 1.0, "breakdown_s": {"compute": 1.0}}
neg = {"iteration_time_s": -1.0, "breakdown_s": {"compute": 1.0}}
add("check-negative-time", ["check", "--baseline", "b.json", "--current", "c.json"],
    {"b.json": dump(good), "c.json": dump(neg)}, ["c.json", "iteration_time_s"])
for tol in ["iteration_time=1", "foo=5", "=5", "x", "-5", "5,,", "nan", "inf%"]:
    add(f"check-tolerance-{tol}", ["check", "--baseline", "b.json", "--current", "b.json", "--tolerance", tol],
        {"b.json": dump(good)}, ["--tolerance"])
add("check-junit-onto-input", ["check", "--baseline", "b.json", "--current", "b.json", "--junit", "b.json"],
    {"b.json": dump(good)}, ["b.json"])

# nccl-tests logs and vTrain CSVs for db import (a failed import leaves no database).
# (Bad rows in an otherwise good log are skipped and reported, exit 0: the profiler tests cover them.)
lines = NCCL_LOG.splitlines(keepends=True)
for label, data in [("empty", b""), ("binary", bytes(range(256)) * 8), ("no-rows", "".join(lines[:7]).encode()),
                    ("truncated", NCCL_LOG[: len(NCCL_LOG) // 3].encode())]:
    add(f"nccl-tests-{label}", ["db", "--db", "out.db", "import", "log.txt", "--collective", "allreduce",
                                "--ranks", "2"], {"log.txt": data}, ["log.txt"])
add("db-is-a-text-file", ["db", "--db", "x.db", "list"], {"x.db": b"not a database\n" * 100}, ["x.db"])

# Runs CSV for validate.
for label, data in [("empty", b""), ("binary", bytes(range(256)) * 4), ("header-only", b"model,cluster\n"),
                    ("garbage", b"a,b,c\n1,2,3\n")]:
    add(f"runs-csv-{label}", ["validate", "runs.csv"], {"runs.csv": data}, ["runs.csv"])

# Command-line flags.
for flag in ["--gpus", "--tp", "--pp", "--dp", "--cp", "--ep", "--vpp", "--zero", "--global-batch",
             "--micro-batch"]:
    for value in ["0", "-1", "4294967296", "1e9", "abc", "99999999999"]:
        if flag == "--zero" and value == "0":
            value = "4"
        argv = ["simulate", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]
        argv += [flag, value]
        add(f"flag{flag}={value}", argv, {}, [flag])
for argv, expect in [
    (["simulate", "--model", "llama3-8b"], ["--cluster", "--gpus"]),
    (SIM + ["--model", "llama3-8b", "--vpp", "2", "--pp", "2", "--schedule", "1f1b"], ["schedule"]),
    (SIM + ["--model", "llama3-8b", "--schedule", "round-robin"], ["schedule"]),
    (SIM + ["--model", "llama3-8b", "--precision", "fp4"], ["precision"]),
    (SIM + ["--model", "llama3-8b", "--tp-overlap", "slice:0"], ["--tp-overlap"]),
    (SIM + ["--model", "llama3-8b", "--bucket-mb", "-1"], ["bucket"]),
    (SIM + ["--model", "nosuchmodel"], ["nosuchmodel"]),
    (SIM + ["--model", "m.json", "--trace", "m.json"], ["m.json"]),
    (SIM + ["--model", "./"], ["is a directory"]),
    (["simulate", "--layers", "2", "--hidden", "64", "--heads", "8", "--vocab", "4", "--seq", "64", "--cluster",
      "dgx-a100", "--gpus", "8", "--tp", "8", "--sp", "--tp-overlap", "flash", "--global-batch", "8"], ["vocab"]),
    (["explore", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8", "--top",
      "0"], ["--top"]),
    (["explore", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8",
      "--threads", "100000"], ["--threads"]),
    (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "1000000000", "--cluster", "dgx-a100"],
     ["--ranks"]),
    (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100", "--precision",
      "fp8"], ["--precision"]),
    (["cost", "--collective", "allreduce", "--bytes", "1E", "--ranks", "8", "--cluster", "dgx-a100"], ["--bytes"]),
    (["cost", "--gemm", "1,2", "--cluster", "dgx-a100"], ["--gemm"]),
    (["bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n", "64", "--k", "64",
      "--ranks", "1000000"], ["--ranks"]),
    (["tune", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--tp", "8", "--global-batch", "8",
      "--quiet", "--out", "m.json"], ["m.json"]),
    (["model", "missing.json"], ["missing.json"]),
    (["nosuchcommand"], ["nosuchcommand"]),
]:
    add("cli-" + "-".join(a.strip("-") for a in argv[:1] + argv[-2:]), argv, {"m.json": dump(WORKLOAD)}, expect)


def run_case(case):
    name, argv, files, expect = case
    with tempfile.TemporaryDirectory(prefix="lagom-bad-") as tmp:
        for file, data in files.items():
            with open(os.path.join(tmp, file), "wb") as f:
                f.write(data)
        before = {f: hashlib.sha256(d).hexdigest() for f, d in files.items()}
        try:
            proc = subprocess.run([LAGOM] + argv, cwd=tmp, capture_output=True, timeout=TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"{name}: hung (over {TIMEOUT_S} s): lagom {' '.join(argv)}"
        problems = []
        if proc.returncode < 0:
            problems.append(f"killed by signal {-proc.returncode}")
        elif proc.returncode != 2:
            problems.append(f"exit {proc.returncode}, expected 2")
        err = proc.stderr.decode(errors="replace")
        if "lagom: error:" not in err:
            problems.append("no 'lagom: error:' on stderr")
        for part in expect:
            if part not in err:
                problems.append(f"the error does not name {part!r}")
        for f, digest in before.items():
            path = os.path.join(tmp, f)
            if not os.path.exists(path) or hashlib.sha256(open(path, "rb").read()).hexdigest() != digest:
                problems.append(f"input {f} modified")
        left = sorted(set(os.listdir(tmp)) - set(files))
        if left:
            problems.append(f"left files behind: {left}")
        if problems:
            return f"{name}: {'; '.join(problems)}: lagom {' '.join(argv)}\n  stderr: {err.strip()[:300]}"
    return None


def main():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failures = [r for r in pool.map(run_case, cases) if r]
    for failure in failures:
        print(failure)
    print(f"{len(cases)} bad inputs, {len(failures)} handled wrongly")
    return 1 if failures or len(cases) < 250 else 0


if __name__ == "__main__":
    sys.exit(main())
