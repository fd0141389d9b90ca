#!/usr/bin/env python3
"""Bad-input suite: generates malformed inputs for every command and file format and runs lagom on each.

For every case: no crash (a signal), no hang (a timeout), no input modified (hash before and after), no
output file left behind, exit 2 and a `lagom: error:` line that names what was wrong (a file, a field or a
flag). Malformed nccl_tuner.conf files go to the NCCL tuner plugin instead, driven through its ABI as
tests/shim does (dlopen, init, getCollInfo, finalize, here from a child Python through ctypes): no crash, one
warning naming the file and line, NCCL's cost table and channel count untouched.
Usage: run_bad_inputs.py LAGOM_BINARY TEST_DATA_DIR [TUNER_PLUGIN_SO]
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

LAGOM, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TUNER = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
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
# The norm and the rotary embedding (docs/model.md "Software stack"): each bad value names its field.
for field, value in [("norm", "batchnorm"), ("norm", 1), ("rope", "yes"), ("rope", 1),
                     ("rope", [])]:
    doc = dict(WORKLOAD)
    doc[field] = value
    add(f"workload-{field}={value!r}", SIM + ["--model", "m.json", "--stack", "pytorch-eager"],
        {"m.json": dump(doc)}, ["m.json", field])
add("stack=pytorch", SIM + ["--model", "llama3-8b", "--stack", "pytorch"], {}, ["--stack", "pytorch-eager"])
# What zero 2 is (docs/model.md "ZeRO-2: DeepSpeed's and FSDP's"): a bad value names the choices; the
# flag needs zero 2; a framework refuses the other one.
add("zero2=fsdp2", SIM + ["--model", "llama3-8b", "--zero", "2", "--zero2", "fsdp2"], {}, ["--zero2", "deepspeed"])
add("zero2-fsdp-param-gather-overlap", SIM + ["--model", "llama3-8b", "--zero", "2", "--zero2", "fsdp",
                                             "--param-gather-overlap", "on"], {},
    ["param-gather-overlap", "zero2 fsdp"])
add("zero2-without-zero2", SIM + ["--model", "llama3-8b", "--zero", "3", "--zero2", "fsdp"], {},
    ["--zero2", "zero 2", "zero=3"])
add("zero2-torch-deepspeed", ["tune", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                              "--global-batch", "32", "--zero", "2", "--zero2", "deepspeed", "--framework",
                              "torch-fsdp"], {}, ["torch-fsdp", "zero2 deepspeed", "fully_shard"])
# Which library shards zero 3 (docs/model.md "The gradient path of sharded data parallelism"): a bad value
# names the choices; the flag needs layers gathered (zero 3, FSDP's zero 2); DeepSpeed's ZeRO does not
# gather for zero 2; a framework refuses another library.
add("sharding=fsdp3", SIM + ["--model", "llama3-8b", "--zero", "3", "--sharding", "fsdp3"], {},
    ["--sharding", "fsdp2"])
add("sharding-zero1", SIM + ["--model", "llama3-8b", "--zero", "1", "--sharding", "fsdp1"], {},
    ["--sharding", "zero 3", "zero=1"])
add("sharding-zero2-deepspeed", SIM + ["--model", "llama3-8b", "--zero", "2", "--zero2", "deepspeed",
                                       "--sharding", "fsdp2"], {}, ["--sharding", "zero2 deepspeed"])
add("sharding-deepspeed-zero2-fsdp", SIM + ["--model", "llama3-8b", "--zero", "2", "--zero2", "fsdp",
                                            "--sharding", "deepspeed"], {}, ["sharding deepspeed", "zero2 fsdp"])
add("sharding-torch-fsdp1", ["tune", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                             "--global-batch", "32", "--zero", "3", "--sharding", "fsdp1", "--framework",
                             "torch-fsdp"], {}, ["torch-fsdp", "sharding fsdp1", "fsdp2"])
# torch.utils.checkpoint's early stop (docs/model.md "Early stop of the recompute"): on|off only; the flag
# needs full recompute; it is a PyTorch checkpoint's, refused under Megatron's and DeepSpeed's stacks.
add("early-stop=maybe", SIM + ["--model", "llama3-8b", "--recompute", "full", "--stack", "pytorch-eager",
                               "--recompute-early-stop", "maybe"], {}, ["--recompute-early-stop"])
add("early-stop-no-recompute", SIM + ["--model", "llama3-8b", "--stack", "pytorch-eager",
                                      "--recompute-early-stop", "on"], {},
    ["recompute-early-stop", "recompute full", "recompute=none"])
add("early-stop-explore-megatron", ["explore", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                     "--global-batch", "32", "--recompute-early-stop", "on"], {},
    ["--recompute-early-stop", "PyTorch stack", "megatron-core"])
add("early-stop-megatron", SIM + ["--model", "llama3-8b", "--recompute", "full", "--recompute-early-stop",
                                  "on"], {}, ["recompute-early-stop", "PyTorch stack", "megatron-core"])
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
# The NIC's fabric and staging fields (docs/model.md "The fabric"): each bad value names its field.
for field, value in [("qps_per_connection", 0), ("qps_per_connection", 129), ("gpudirect", "no"),
                     ("host_memory_GBps", -1), ("fabric", []), ("fabric", {"routing": "random"}),
                     ("fabric", {"leaf_nodes": 0}), ("fabric", {"oversubscription": 0.5}),
                     ("fabric", {"oversubscription": 1e9}), ("fabric", {"placement": 3}),
                     ("fabric", {"rail_optimized": "yes"}), ("fabric", {"spine": 4})]:
    doc = json.loads(json.dumps(CLUSTER))
    doc["nic"][field] = value
    name = field if not isinstance(value, dict) else field + "." + next(iter(value))
    add(f"cluster-nic.{name}={value!r}"[:80], ["cost", "--collective", "allreduce", "--bytes", "1G", "--ranks",
                                               "64", "--cluster", "c.json"], {"c.json": dump(doc)},
        ["c.json", "nic." + name])
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
        doc[key] = value  # None: null, which no class default replaces (an absent key reads at the default)
        add(f"hf-{key}={value!r}", SIM + ["--model", "config.json", "--seq", "2048"],
            {"config.json": dump(doc)}, ["config.json", key])
for model_type in ["mamba", "bert", "", 5]:
    doc = dict(HF)
    doc["model_type"] = model_type
    add(f"hf-model_type={model_type!r}", SIM + ["--model", "config.json", "--seq", "2048"],
        {"config.json": dump(doc)}, ["config.json", "model_type"])
add("hf-without-seq", SIM + ["--model", "config.json"], {"config.json": dump(HF)}, ["config.json", "seq"])
# DeepSeek-V2/V3 always build multi-head latent attention: refused even when the file omits its keys (their
# classes' defaults give it), in every command that reads a model.
for family in ["deepseek_v2", "deepseek_v3"]:
    doc = {"model_type": family, "num_hidden_layers": 4}
    for argv in [SIM + ["--model", "config.json", "--seq", "2048"], ["model", "config.json"],
                 ["explore", "--model", "config.json", "--seq", "2048", "--cluster", "dgx-a100", "--gpus", "8",
                  "--global-batch", "8"],
                 ["tune", "--model", "config.json", "--seq", "2048", "--cluster", "dgx-a100", "--gpus", "8",
                  "--tp", "8", "--global-batch", "8"],
                 ["plan", "--model", "config.json", "--seq", "2048", "--cluster", "dgx-a100", "--gpus", "8",
                  "--global-batch", "8", "--tokens", "1T"]]:
        add(f"hf-{family}-mla-by-default-{argv[0]}", argv, {"config.json": dump(doc)},
            ["config.json", "multi-head latent attention", "kv_lora_rank 512"])
# DeepSeek-MoE (v1) has no class in transformers: its keys are required, not guessed.
add("hf-deepseek-v1-without-hidden_size", SIM + ["--model", "config.json", "--seq", "2048"],
    {"config.json": dump({"model_type": "deepseek", "num_hidden_layers": 4})}, ["config.json", "hidden_size"])

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

# Production records for db import (docs/records.md "What a reader accepts"): a line whose field the format
# does not have is refused, naming file:line, the field and its value; nothing is imported (no database).
RECORD = {"version": 1, "kind": "collective", "source": "nccl", "host": "node1", "pid": 4242,
          "comm_hash": "0xabcdef0123456789", "rank": 3, "n_ranks": 16, "n_nodes": 2, "collective": "allreduce",
          "count": 1048576, "dtype": "bfloat16", "bytes": 2097152, "algorithm": "ring", "protocol": "simple",
          "channels": 8, "seq": 17, "peer": -1, "clock": "gpu", "start_ns": 1000, "end_ns": 2000}


def record_line(**changes):
    doc = dict(RECORD)
    doc.update(changes)
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


for label, changes, expect in [
    ("collective", {"collective": "allreducex"}, ['"collective" is "allreducex"']),
    ("dtype", {"dtype": "float99"}, ['"dtype" is "float99"', "allowed int8"]),
    ("algorithm", {"algorithm": "star"}, ['"algorithm" is "star"']),
    ("protocol", {"protocol": "ll64"}, ['"protocol" is "ll64"']),
    ("source", {"source": "rccl"}, ['"source" is "rccl"']),
    ("kind", {"kind": "group"}, ['"kind"']),
    ("clock", {"clock": "tsc"}, ['"clock" is "tsc"']),
    ("bytes-not-count-x-size", {"bytes": 4096}, ['"bytes" is 4096', "count"]),
    ("p2p-allreduce", {"kind": "p2p", "peer": 2}, ['"collective" is "allreduce"', "p2p"]),
    ("collective-send", {"collective": "send"}, ['"collective" is "send"']),
    ("collective-with-peer", {"peer": 5}, ['"peer" is 5']),
    ("p2p-peer-out-of-range", {"kind": "p2p", "collective": "send", "peer": 16}, ['"peer" is 16']),
    ("enqueue-not-ce", {"clock": "enqueue"}, ['"clock" is "enqueue"']),
    ("mpi-gpu-clock", {"source": "mpi"}, ['"clock" is "gpu"', "source"]),
    ("unknown-field", {"stream": 3}, ['"stream" is not a field of a record']),
]:
    add(f"records-{label}", ["db", "--db", "out.db", "import", "r.jsonl"],
        {"r.jsonl": record_line() + record_line(**changes)}, ["r.jsonl:2: "] + expect)
add("records-every-bad-line-listed", ["db", "--db", "out.db", "import", "r.jsonl"],
    {"r.jsonl": record_line(dtype="x") + record_line() + record_line(protocol="y")},
    ["2 lines are not Lagom records", "r.jsonl:1: ", "r.jsonl:3: "])
# Flags that cannot apply to the format imported, and values that pass but mean nothing.
VTRAIN = b"size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n1048576,262144,float,92790,19.78,92150,19.91\n"
for flag, value in [("--nodes", "1"), ("--nodes", "2"), ("--ranks", "16"), ("--collective", "allreduce")]:
    add(f"records-flag{flag}={value}", ["db", "--db", "out.db", "import", "r.jsonl", flag, value],
        {"r.jsonl": record_line()}, [flag, "cannot apply to production records"])
for name in ["AR_GPU0", "AR_GPU0_1M_1024M_LUT", "AR_GPU99999999999_LUT", "AG_GPU2097152"]:
    add(f"vtrain-ranks-{name}", ["db", "--db", "out.db", "import", name], {name: VTRAIN},
        [f"the file name {name} says", "--ranks"])
for name, argv, expect in [("AR_GPU16", ["--nodes", "100"], ["--nodes 100 with 16 ranks"]),
                           ("AR_GPU16", ["--nodes", "3"], ["--nodes 3 with 16 ranks"]),
                           ("AR_GPU16", ["--nodes", "0"], ["--nodes 0"]),
                           ("AR_GPU8", ["--ranks", "0"], ["--ranks says 0 ranks"]),
                           ("AR_GPU8", ["--ranks", "4", "--nodes", "8"], ["--nodes 8 with 4 ranks"])]:
    add(f"vtrain-{name}-{'-'.join(argv)}", ["db", "--db", "out.db", "import", name] + argv, {name: VTRAIN}, expect)
add("nccl-tests-nodes-100", ["db", "--db", "out.db", "import", "all_reduce.log", "--nodes", "100"],
    {"all_reduce.log": NCCL_LOG.encode()}, ["--nodes 100 with 2 ranks"])

CHART_JS = b"/*!\n * Chart.js v0.0.1-test\n */\nwindow.Chart = function () {};\n"  # the header report looks for
# Documents that no run can produce (documents/bounds.h): report refuses them naming the field's path, and
# writes no page.
SIMULATED_BYTES = subprocess.run([LAGOM, "simulate", "--model", "gpt2", "--cluster", "dgx-a100", "--gpus", "8",
                                  "--global-batch", "8", "--json"], capture_output=True, check=True).stdout
SIMULATED = json.loads(subprocess.run([LAGOM, "simulate", "--model", "gpt2", "--cluster", "dgx-a100", "--gpus", "8",
                                       "--global-batch", "8", "--json"], capture_output=True, text=True,
                                      check=True).stdout)
for path, value in [(["iteration_time_s"], -1.0), (["tokens_per_s"], -5.0), (["mfu"], -0.1),
                    (["breakdown_s", "exposed_comm"], -0.01), (["stage_breakdown_s", 0, "compute"], -2.0),
                    (["memory_gib_per_gpu", "total"], -3.0), (["op_classes", 0, "time_us"], -4.0),
                    (["op_classes", 0, "bytes"], -1024), (["op_classes", 0, "count"], -1.0)]:
    doc = json.loads(json.dumps(SIMULATED))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    field = ".".join(str(k) for k in path).replace(".0.", "[0].")
    add(f"report-simulate-{field}={value}", ["report", "d.json", "--out", "r.html", "--chart-js", "lib.js"],
        {"d.json": dump(doc), "lib.js": CHART_JS}, ["d.json", field])
VALIDATED = {"kind": "validate", "runs": [{"line": 3, "model": "gpt2", "gpus": 8, "parallel": "tp1",
                                           "measured_iteration_s": 1.0, "predicted_iteration_s": 1.1}],
             "groups": {}, "overall": {"runs": 1, "failed": 0, "mape_pct": 10.0, "median_abs_error_pct": 10.0,
                                       "mean_signed_error_pct": 10.0, "worst_error_pct": 10.0},
             "failed": 0, "passed": True}
for where, key, value in [("runs", "predicted_iteration_s", -1.1), ("runs", "measured_iteration_s", -1.0),
                          ("overall", "mape_pct", -1.0), ("overall", "mean_signed_error_pct", -150.0),
                          ("overall", "worst_error_pct", -101.0)]:
    doc = json.loads(json.dumps(VALIDATED))
    (doc["runs"][0] if where == "runs" else doc["overall"])[key] = value
    add(f"report-validate-{key}={value}", ["report", "v.json", "--out", "r.html", "--chart-js", "lib.js"],
        {"v.json": dump(doc), "lib.js": CHART_JS}, ["v.json", key])

# Runs CSV for validate.
for label, data in [("empty", b""), ("binary", bytes(range(256)) * 4), ("header-only", b"model,cluster\n"),
                    ("garbage", b"a,b,c\n1,2,3\n")]:
    add(f"runs-csv-{label}", ["validate", "runs.csv"], {"runs.csv": data}, ["runs.csv"])
# A value the flag's bound refuses names the file, line and column (found by tests/fuzz: it named the flag only).
add("runs-csv-micro-batch-0", ["validate", "runs.csv"],
    {"runs.csv": b"model,cluster,gpus,global-batch,micro-batch,measured_iteration_s\n"
                 b"llama3-8b,dgx-a100,8,8,0,1.0\n"}, ["runs.csv:2: column 'micro-batch'", "--micro-batch"])

# A runs file's unknown column with empty cells, a planned column's bad value, and a name that is a file only
# in the working directory (paths are the CSV folder's): validate and calibrate read runs files alike.
RUNS_HEAD = b"model,cluster,gpus,global-batch,"
for label, header, row, expect in [
    ("unknown-empty-column", b"tpp", b"", ["runs.csv:1: column 'tpp' (column 5): unknown"]),
    ("planned-recipe", b"fp8-recipe", b"sometimes", ["column 'fp8-recipe'", "'sometimes'"]),
    ("planned-connections", b"cuda-max-connections", b"64", ["column 'cuda-max-connections'", "'64'"]),
    ("planned-nvls", b"nccl-nvls", b"maybe", ["column 'nccl-nvls'", "'maybe'"]),
    ("planned-amax-history", b"fp8-amax-history", b"-3", ["column 'fp8-amax-history'", "'-3'"]),
    ("planned-bf16-layers", b"fp8-bf16-layers", b"1.5", ["column 'fp8-bf16-layers'", "'1.5'"]),
    ("planned-p2p-chunk", b"nccl-p2p-chunk", b"0", ["column 'nccl-p2p-chunk'", "'0'"]),
]:
    text = RUNS_HEAD + header + b",measured_iteration_s\ngpt2,dgx-a100,8,8," + row + b",1.0\n"
    add(f"runs-csv-{label}", ["validate", "runs.csv"], {"runs.csv": text}, expect)
    add(f"calibrate-runs-csv-{label}", ["calibrate", "runs.csv", "--cluster", "dgx-a100"], {"runs.csv": text},
        expect)
# "mymodel" is a file of the working directory only: the runs file in sub/ names no preset and no file there.
for command in (["validate", "sub/runs.csv"], ["calibrate", "sub/runs.csv", "--cluster", "dgx-a100"]):
    add(f"{command[0]}-runs-csv-name-in-working-directory", command,
        {"mymodel": dump(WORKLOAD), "sub/runs.csv": RUNS_HEAD + b"measured_iteration_s\nmymodel,dgx-a100,8,8,1.0\n"},
        ["sub/runs.csv:2: ", "mymodel"])

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
    (SIM + ["--model", "llama3-8b", "--zero", "3", "--dp-shard", "3"], ["dp-shard=3 does not divide dp=8"]),
    (SIM + ["--model", "llama3-8b", "--dp-shard", "2"], ["dp-shard=2 < dp=8 needs zero 1, 2 or 3"]),
    (SIM + ["--model", "llama3-8b", "--dp-shard", "0"], ["--dp-shard"]),
    (["explore", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8",
      "--framework", "megatron-lm", "--dp-shard", "2"], ["--framework megatron-lm: dp-shard 2 (hybrid sharding) is not available"]),
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
    # A number no double holds is refused by the JSON reader (found by tests/fuzz: it was an internal error).
    (["model", "big.json"], ["big.json", "number overflow"]),
    (SIM + ["--model", "big.json"], ["big.json", "number overflow"]),
    (["check", "--predicted", "big.json", "--db", "none.db", "--run", "1"], ["big.json", "number overflow"]),
    (SIM + ["--model", "llama3-8b", "--db", "missing.db"], ["--db missing.db: no such file"]),
    (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100", "--db",
      "m.json"], ["--db m.json: not a Lagom database"]),
    (["db", "--db", "none.db", "export", "1", "--format", "csv", "--json"], ["--json", "--format csv"]),
    (["db", "--db", "none.db", "export", "1", "--format", "nccl-tests", "--json"], ["--json", "--format nccl-tests"]),
    (["nosuchcommand"], ["nosuchcommand"]),
]:
    add("cli-" + "-".join(a.strip("-") for a in argv[:1] + argv[-2:]), argv,
        {"m.json": dump(WORKLOAD), "big.json": b'{"layers": 1e400, "ops": [{"bytes": 1e400}]}'}, expect)

# --nccl-version on every command that reads a cluster: a value that is no version, and one for a cluster
# without NCCL (it would be silently unused), each naming the flag.
NCCL_COMMANDS = {
    "cost": ["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100"],
    "simulate": SIM + ["--model", "llama3-8b"],
    "explore": ["explore", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"],
    "tune": ["tune", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--tp", "8",
             "--global-batch", "8", "--quiet"],
    "plan": ["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8",
             "--tokens", "1T"],
}
for command, argv in NCCL_COMMANDS.items():
    for value in ["x", "2", "2.30.7.1", "2.-1", "2.30-rc1", ""]:
        add(f"nccl-version-{command}={value}", argv + ["--nccl-version", value], {}, ["--nccl-version"])
    no_nccl = [a if a != "dgx-a100" else "nonccl.json" for a in argv]
    add(f"nccl-version-{command}-no-nccl", no_nccl + ["--nccl-version", "2.30"],
        {"nonccl.json": dump(dict(CLUSTER, has_nccl=False))}, ["--nccl-version", "has no NCCL"])
add("nccl-version-cost-gemm", ["cost", "--gemm", "8,8,8", "--cluster", "dgx-a100", "--nccl-version", "2.30"], {},
    ["--nccl-version", "--collective only"])

# Flags that cannot act in their context (inputs/flag_context.cpp): an error naming the flag and what it
# needs, in every command that takes the strategy flags (simulate, explore, tune; validate's runs files).
EXPLORE = ["explore", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]
TUNE = ["tune", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--tp", "8", "--global-batch", "8",
        "--quiet"]
for flags, expect in [
    (["--moe-capacity-factor", "1.0"], ["--moe-capacity-factor", "a MoE model"]),
    (["--moe-dispatcher", "allgather"], ["--moe-dispatcher", "a MoE model"]),
    (["--moe-grouped-gemm", "off"], ["--moe-grouped-gemm", "a MoE model"]),
    (["--expert-tp", "1"], ["expert-tp", "a MoE model"]),
    (["--fp8-params", "true"], ["--fp8-params", "--precision fp8"]),
    (["--fp8-wgrad", "false"], ["--fp8-wgrad", "--precision fp8"]),
    (["--fp8-attention", "on"], ["--fp8-attention", "--precision fp8"]),
    (["--tp-overlap-fp8-rs", "on"], ["--tp-overlap-fp8-rs", "--precision fp8"]),
]:
    for command, base in [("simulate", SIM + ["--model", "llama3-8b"]), ("explore", EXPLORE), ("tune", TUNE)]:
        add(f"flag-context-{command}{flags[-2]}", base + flags, {}, expect)
for flags, expect in [
    (["--defer-embedding-wgrad", "2"], ["--defer-embedding-wgrad", "pp > 1"]),
    (["--schedule", "gpipe"], ["--schedule", "pp > 1"]),
    (["--embedding-in-pipeline-split"], ["embedding-in-pipeline-split", "pp minus the counted stages"]),
    (["--loss-in-pipeline-split"], ["loss-in-pipeline-split", "pp minus the counted stages"]),
    (["--p2p-overlap", "on"], ["--p2p-overlap", "vpp > 1"]),
    (["--cp-comm-type", "p2p"], ["--cp-comm-type", "cp > 1"]),
    (["--tp", "4", "--pp-tp-split", "on"], ["--pp-tp-split", "pp > 1"]),
    (["--pp", "2", "--pp-tp-split", "off"], ["--pp-tp-split", "tp > 1"]),
    (["--tp", "2", "--pp", "2", "--sp", "--pp-tp-split", "on"], ["--pp-tp-split", "sequence parallelism"]),
    (["--tp", "8", "--dp-overlap", "off"], ["--dp-overlap", "dp·cp > 1"]),
    (["--tp", "8", "--bucket-mb", "50"], ["--bucket-mb", "dp·cp > 1"]),
]:
    add(f"flag-context-simulate{flags[-2] if len(flags) > 1 else flags[0]}", SIM + ["--model", "llama3-8b"] + flags,
        {}, expect)
# ZeRO with one replica of the weights: nothing to shard (simulate; tune's own layout tp 8 is dp 1).
add("flag-context-simulate--zero", SIM + ["--model", "llama3-8b", "--tp", "8", "--zero", "1"], {},
    ["--zero", "dp·cp > 1", "nothing to shard"])
add("flag-context-tune--zero", TUNE + ["--zero", "3"], {}, ["--zero", "dp·cp > 1", "nothing to shard"])
# explore judges a dimension only when it is pinned: --pp 1 given.
add("flag-context-explore-pinned-pp", EXPLORE + ["--pp", "1", "--defer-embedding-wgrad", "2"], {},
    ["--defer-embedding-wgrad", "pp > 1"])
for flag, value in [("--algo", "ring"), ("--proto", "simple"), ("--channels", "4"), ("--bytes", "1M"),
                    ("--ranks", "8")]:
    add(f"flag-context-cost-gemm{flag}", ["cost", "--gemm", "64,64,64", "--cluster", "dgx-a100", flag, value], {},
        [flag, "--collective only"])

# Numbers that pass the type but mean nothing: nan, inf, -inf and negatives where meaningless, one rule.
for command, argv, flag in [
    ("simulate", SIM + ["--model", "llama3-8b"], "--dropout"),
    ("simulate", SIM + ["--model", "llama3-8b"], "--moe-capacity-factor"),
    ("simulate", SIM + ["--model", "llama3-8b"], "--memory-reserve-gib"),
    ("simulate", SIM + ["--model", "llama3-8b"], "--bucket-mb"),
    ("simulate", SIM + ["--model", "llama3-8b", "--tokens", "1T"], "--price"),
    ("explore", EXPLORE, "--bucket-mb"),
    ("explore", EXPLORE, "--dropout"),
    ("tune", TUNE, "--bucket-mb"),
    ("plan", PLAN_BASE := ["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch",
                           "8", "--tokens", "1T"], "--failure-rate"),
    ("plan", PLAN_BASE, "--restart"),
    ("plan", PLAN_BASE, "--step-cv"),
    ("plan", PLAN_BASE, "--checkpoint-gbps"),
    ("validate", ["validate", "runs.csv"], "--max-mape"),
]:
    for value in ["nan", "inf", "-inf", "-1"]:
        add(f"number-{command}{flag}={value}", argv + [flag, value],
            {"runs.csv": b"model,cluster,gpus,global-batch,measured_iteration_s\nllama3-8b,dgx-a100,8,8,1.0\n"},
            [flag])

# Sizes one simulation cannot hold are refused at once with the limit named (docs/simulator.md#limits), in
# every command that reads a model (the suite's timeout catches a hang).
HUGE = ["--layers", "2147483647", "--hidden", "64", "--heads", "8", "--vocab", "100", "--seq", "64"]
for command, argv in [("simulate", ["simulate", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]),
                      ("explore", ["explore", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]),
                      ("tune", ["tune", "--cluster", "dgx-a100", "--gpus", "8", "--tp", "8", "--global-batch", "8"])]:
    add(f"limit-layers-{command}", argv + HUGE, {}, ["layers", "65536"])
huge = dict(WORKLOAD)
huge["layers"] = 2**31 - 1
for command, argv in [("model", ["model", "m.json"]), ("simulate", SIM + ["--model", "m.json"]),
                      ("plan", ["plan", "--model", "m.json", "--cluster", "dgx-a100", "--gpus", "8", "--tokens", "1T"])]:
    add(f"limit-layers-file-{command}", argv, {"m.json": dump(huge)}, ["m.json", "layers", "65536"])
hf_huge = dict(HF)
hf_huge["num_hidden_layers"] = 2**31 - 1
add("limit-layers-hf", SIM + ["--model", "config.json", "--seq", "2048"], {"config.json": dump(hf_huge)},
    ["config.json", "layers", "65536"])
moe = json.loads(json.dumps(WORKLOAD))
moe["moe"] = {"experts": 2**31 - 1, "top_k": 2}
add("limit-experts", SIM + ["--model", "m.json"], {"m.json": dump(moe)}, ["m.json", "moe.experts", "65536"])
add("limit-layer-passes", ["simulate", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8",
                           "--global-batch", "2147483640"], {}, ["layer passes", "4194304"])

# An endless input (a device) in every command that reads a file: refused by the one reader
# (files::read_input, docs/cli.md#inputs-and-outputs), never read until memory runs out.
for argv in [SIM + ["--model", "/dev/zero"],
             ["simulate", "--model", "llama3-8b", "--cluster", "/dev/zero", "--gpus", "8", "--global-batch", "8"],
             SIM + ["--model", "llama3-8b", "--comm-config", "/dev/zero"],
             ["explore", "--model", "/dev/zero", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"],
             ["tune", "--model", "/dev/zero", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8",
              "--out", "t"],
             ["plan", "--model", "/dev/zero", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8",
              "--tokens", "1T"],
             ["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "/dev/zero"],
             ["model", "/dev/zero"],
             ["validate", "/dev/zero"],
             ["calibrate", "/dev/urandom", "--cluster", "dgx-a100", "--fit", "kernel_launch_us"],
             ["db", "--db", "out.db", "import", "/dev/zero", "--collective", "allreduce", "--ranks", "2"],
             ["db", "--db", "out.db", "import", "/dev/urandom"],
             ["check", "--baseline", "/dev/zero", "--current", "m.json"],
             ["check", "--predicted", "/dev/zero", "--db", "none.db", "--run", "1"],
             ["report", "/dev/zero", "--out", "r.html"]]:
    add("endless-input-" + "-".join(a.strip("-/") for a in argv[:1] + argv[-2:]), argv,
        {"m.json": dump(WORKLOAD)}, ["/dev/", "is a device"])

# Outputs replace only files Lagom wrote, never an input of the run (docs/cli.md#inputs-and-outputs).
add("tune-out-onto-a-users-tuner-conf", ["tune", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8",
                                         "--global-batch", "8", "--quiet", "--out", "."],
    {"nccl_tuner.conf": b"# my own rules\n"}, ["nccl_tuner.conf", "not written by Lagom"])
add("tune-out-onto-its-model", ["tune", "--model", "lagom-config.json", "--cluster", "dgx-a100", "--gpus", "8",
                                "--global-batch", "8", "--quiet", "--out", "."],
    {"lagom-config.json": dump(WORKLOAD)}, ["lagom-config.json", "is an input of this command"])
add("simulate-trace-onto-a-users-file", SIM + ["--model", "llama3-8b", "--trace", "notes.txt"],
    {"notes.txt": b"my notes\n"}, ["notes.txt", "not written by Lagom"])
add("simulate-trace-onto-its-cluster", ["simulate", "--model", "llama3-8b", "--cluster", "c.json", "--gpus", "8",
                                        "--global-batch", "8", "--trace", "./c.json"],
    {"c.json": dump(CLUSTER)}, ["c.json", "is an input of this command"])

# lagom plan (docs/plan.md): its quantities, its constraints and the cluster file's operations object.
PLAN = ["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"]
for n, (argv, expect) in enumerate([
    (PLAN + ["--tokens", "1e30"], ["tokens", "1e+30"]),
    (PLAN + ["--tokens", "-5T"], ["--tokens", "-5T"]),
    (PLAN + ["--tokens", "15Q"], ["--tokens", "15Q"]),
    (PLAN + ["--tokens", "1T", "--deadline", "0"], ["--deadline", "'0'"]),
    (PLAN + ["--tokens", "1T", "--deadline", "-3d"], ["--deadline"]),
    (PLAN + ["--tokens", "1T", "--price", "-2"], ["--price", "'-2'"]),
    (PLAN + ["--tokens", "1T", "--price", "other=2"], ["--price", "'other'"]),
    (PLAN + ["--tokens", "1T", "--budget", "0"], ["--budget"]),
    (PLAN + ["--tokens", "1T", "--budget", "1M"], ["budget", "no price per GPU-hour"]),
    (PLAN + ["--tokens", "1T", "--failure-rate", "2"], ["--failure-rate"]),
    (PLAN + ["--tokens", "1T", "--pue", "0.5"], ["--pue"]),
    (PLAN + ["--tokens", "1T", "--batch-tokens", "16M"], ["--global-batch and --batch-tokens"]),
    (["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "0", "--tokens", "1T"], ["--gpus"]),
    (["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "64..8", "--tokens", "1T"], ["--gpus"]),
    (["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--tokens", "1T"], ["--gpus"]),
    (["plan", "--model", "llama3-8b", "--gpus", "8", "--tokens", "1T"], ["--cluster"]),
]):
    add(f"plan-{n}-" + "-".join(a.strip("-") for a in argv[-2:]), argv, {}, expect)
for field, value in [("failures_per_gpu_hour", 1.5), ("failures_per_gpu_hour", -1), ("restart_s", "long"),
                     ("checkpoint_GBps_per_node", 0), ("step_time_cv", 2), ("pue", 0.9),
                     ("price_per_gpu_hour", -2), ("gpu_idle_w", "hot"), ("unknown", 1)]:
    doc = json.loads(json.dumps(CLUSTER))
    doc["operations"] = {field: value}
    add(f"cluster-operations.{field}={value!r}", ["plan", "--model", "llama3-8b", "--cluster", "c.json", "--gpus",
                                                 "8", "--global-batch", "8", "--tokens", "1T"],
        {"c.json": dump(doc)}, ["c.json", "operations." + field])
doc = json.loads(json.dumps(CLUSTER))
doc["operations"] = {"gpu_idle_w": 800, "gpu_full_w": 400}
add("cluster-operations-idle-above-full", ["plan", "--model", "llama3-8b", "--cluster", "c.json", "--gpus", "8",
                                           "--global-batch", "8", "--tokens", "1T"],
    {"c.json": dump(doc)}, ["c.json", "operations.gpu_idle_w"])

# An empty value, in every command: it would read as the flag's default (CLI11 makes "" a 0), so it is refused
# before the command runs, naming the flag (docs/cli.md#conventions).
for argv, flag in [(SIM + ["--model", "llama3-8b", "--seq", ""], "--seq"),
                   (SIM + ["--model", "llama3-8b", "--memory-reserve-gib="], "--memory-reserve-gib"),
                   (EXPLORE + ["--top", ""], "--top"), (TUNE + ["--out", ""], "--out"),
                   (PLAN_BASE + ["--deadline", ""], "--deadline"),
                   (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100",
                     "--channels", ""], "--channels"),
                   (["check", "--baseline", "b.json", "--current", "b.json", "--tolerance", ""], "--tolerance"),
                   (["report", "b.json", "--out", "r.html", "--title", ""], "--title"),
                   (["validate", "runs.csv", "--max-mape", ""], "--max-mape"),
                   (["calibrate", "runs.csv", "--cluster", "dgx-a100", "--out", ""], "--out"),
                   (["bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n", "64", "--k",
                     "64", "--reps", ""], "--reps"),
                   (["adapt", "--watch", "w", "--config", "c", "--window", ""], "--window"),
                   (["profile", "--backend", "cpu", "--db", ""], "--db"), (["db", "--db", "", "list"], "--db"),
                   (["presets", "--show", ""], "--show"), (["model", ""], "an empty argument")]:
    add(f"empty-value-{argv[0]}{flag}", argv, {"b.json": dump(good), "runs.csv": b"model\n"},
        [f"{argv[0]}: {flag}" if flag.startswith("--") else flag, "empty"])
# A shape or knob of 0 would silently be the model's value or NCCL's choice: refused at the flag.
for argv, flag in [(["simulate", "--layers", "0", "--hidden", "64", "--heads", "8", "--vocab", "100", "--seq", "64",
                     "--cluster", "dgx-a100", "--gpus", "8", "--global-batch", "8"], "--layers"),
                   (SIM + ["--model", "llama3-8b", "--seq", "0"], "--seq"),
                   (EXPLORE + ["--ffn-hidden", "-4"], "--ffn-hidden"), (TUNE + ["--vocab", "0"], "--vocab"),
                   (["model", "llama3-8b", "--seq", "-1"], "--seq"),
                   (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100",
                     "--channels", "0"], "--channels"),
                   (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100",
                     "--threads", "0"], "--threads"),
                   (["cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8", "--cluster", "dgx-a100",
                     "--chunk-bytes", "0"], "--chunk-bytes"),
                   (["bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n", "64", "--k",
                     "64", "--seed", "-1"], "--seed")]:
    add(f"zero-or-negative{flag}-{argv[0]}", argv, {}, [flag])
# Repetitions that would run for hours: bounded at the flag (the suite's timeout catches a hang).
for flag in ["--reps", "--warmup"]:
    add(f"limit-bench-overlap{flag}", ["bench-overlap", "--kernel", "ag-gemm", "--method", "flash", "--m", "64", "--n",
                                       "64", "--k", "64", "--executor", "threads", flag, "2000000000"], {},
        [flag, "10000"])
# An output path that is a directory, or passes through a file: the user's path to correct, exit 2, not the
# environment's exit 1.
for command, argv in [("simulate", SIM + ["--model", "llama3-8b", "--trace", "d"]),
                      ("report", ["report", "b.json", "--out", "d", "--chart-js", "lib.js"]),
                      ("check", ["check", "--baseline", "b.json", "--current", "b.json", "--junit", "d"]),
                      ("calibrate", ["calibrate", "runs.csv", "--cluster", "dgx-a100", "--fit", "kernel_launch_us",
                                     "--cv", "none", "--out", "d"])]:
    add(f"output-is-a-directory-{command}", argv,
        {"d/keep": b"x", "b.json": SIMULATED_BYTES, "lib.js": CHART_JS,
         "runs.csv": f"model,cluster,gpus,global-batch,measured_iteration_s\ngpt2,dgx-a100,8,8,"
                     f"{SIMULATED['iteration_time_s']}\n".encode()},  # a fit calibrate accepts
        ["d: is a directory, not a file"])
add("output-under-a-file-simulate", SIM + ["--model", "llama3-8b", "--trace", "f/t.json"], {"f": b"mine"},
    ["f/t.json: not a path a file can be written to"])
add("output-under-a-file-report", ["report", "b.json", "--out", "f/r.html", "--chart-js", "lib.js"],
    {"f": b"mine", "b.json": SIMULATED_BYTES, "lib.js": CHART_JS}, ["f/r.html: not a path a file can be written to"])
# Flags of other commands that cannot act in their context (docs/cli.md: explore, profile, report, check).
for argv, files, expect in [
    (EXPLORE + ["--schedule", "gpipe"], {}, ["--schedule gpipe", "would have no effect"]),
    (EXPLORE + ["--schedule", "interleaved"], {}, ["--schedule interleaved", "pin --vpp"]),
    (["profile", "--backend", "cpu", "--suite", "compute", "--quick", "--db", "p.db", "--min-bytes", "1K"], {},
     ["--min-bytes", "runs no collective", "would have no effect"]),
    (["profile", "--backend", "cpu", "--quick", "--db", "p.db", "--collectives", "allreduce", "--step-factor", "4"], {},
     ["--step-factor, --collectives", "runs no collective"]),
    (["profile", "--backend", "cpu", "--db", "p.db", "--replay", "c.json", "--step-factor", "4"], {"c.json": b"{}"},
     ["--replay", "--step-factor"]),
    (["report", "b.json", "--out", "r.html", "--chart-js", "lib.js", "--top", "5"],
     {"b.json": SIMULATED_BYTES, "lib.js": CHART_JS}, ["--top 5", "no input is an explore document"]),
    (["report", "b.json", "--out", "r.html", "--chart-js", "lib.js", "--db", "x.db"],
     {"b.json": SIMULATED_BYTES, "lib.js": CHART_JS}, ["--db x.db", "no --run is given"]),
    (["check", "--baseline", "b.json", "--current", "b.json", "--db", "x.db"], {"b.json": SIMULATED_BYTES},
     ["--db x.db", "--baseline and --current are files"]),
]:
    add("no-effect-" + "-".join(a.strip("-") for a in argv[:1] + argv[-2:]), argv, files, expect)
# A value given twice where one replaces the other (or a runs file counted twice): refused, naming it.
RUNS_ONE = b"model,cluster,gpus,global-batch,measured_iteration_s\nllama3-8b,dgx-a100,8,8,1.0\n"
for argv, expect in [
    (PLAN_BASE + ["--price", "2", "--price", "3"], ["--price", "every cluster given twice"]),
    (PLAN_BASE + ["--cluster", "dgx-a100"], ["--cluster dgx-a100: given twice"]),
    (["plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--cluster", "dgx-h100", "--gpus", "8",
      "--global-batch", "8", "--tokens", "1T", "--price", "dgx-h100=2", "--price", "dgx-h100=3"],
     ["'dgx-h100' given twice"]),
    (["check", "--baseline", "b.json", "--current", "b.json", "--tolerance", "5,10"],
     ["the default tolerance given twice"]),
    (["check", "--baseline", "b.json", "--current", "b.json", "--tolerance", "mfu=3,mfu=10"], ["'mfu' given twice"]),
    (["validate", "runs.csv", "./runs.csv"], ["./runs.csv: given twice (as runs.csv)"]),
    (["calibrate", "runs.csv", "sub/../runs.csv", "--cluster", "dgx-a100"], ["sub/../runs.csv: given twice"]),
]:
    add("given-twice-" + "-".join(a.strip("-./") for a in argv[:1] + argv[-2:]), argv,
        {"b.json": SIMULATED_BYTES, "runs.csv": RUNS_ONE, "sub/x": b""}, expect)
# A tune document's op class of a negative size or no ranks is impossible: refused before report charts it.
TUNED_OP = {"name": "tp.allreduce.1024", "collective": "allreduce", "group": "tp", "bytes": 1024, "ranks": 8,
            "nodes": 1, "count": 4, "algo": "ring", "proto": "ll", "channels": 4, "threads": 512,
            "chunk_bytes": 32768, "scope": "per call (tuner plugin)", "predicted_time_us": 10.0}
for field, value in [("bytes", -1), ("ranks", 0), ("nodes", -2)]:
    doc = {"kind": "tune", "version": 1, "search": "lagom", "runtime": "nccl", "model": "gpt2",
           "predicted_iteration_time_s": 1.0, "baseline_iteration_time_s": 1.1, "speedup": 1.1, "evaluations": 3,
           "ops": [dict(TUNED_OP, **{field: value})]}
    add(f"report-tune-ops.{field}={value}", ["report", "t.json", "--out", "r.html", "--chart-js", "lib.js"],
        {"t.json": dump(doc), "lib.js": CHART_JS}, ["t.json", f"ops[0].{field}"])

# nccl_tuner.conf for the tuner plugin (shim/tuner_rules.h): the plugin warns once, naming the file and line,
# and NCCL keeps its own choices; it never crashes. (name, file bytes, [substrings the warning must contain])
tuner_cases = []
TUNER_GOOD = b"allreduce,0,65535,tree,ll,4,2,16,-1,-1\n"
TUNER_HEADER = b"# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n"
for label, line, expect in [
    ("unknown-collective", b"allgatherv,0,-1,ring,simple,4,-1,-1,-1,-1", ["unknown collective"]),
    ("unknown-algorithm", b"allreduce,0,-1,star,simple,4,-1,-1,-1,-1", ["unknown algorithm"]),
    ("unknown-protocol", b"allreduce,0,-1,ring,ll64,4,-1,-1,-1,-1", ["unknown protocol"]),
    ("half-named-pair", b"allreduce,0,-1,ring,-1,4,-1,-1,-1,-1", ["both"]),
    ("channels-65", b"allreduce,0,-1,ring,simple,65,-1,-1,-1,-1", ["channels"]),
    ("channels-0", b"allreduce,0,-1,ring,simple,0,-1,-1,-1,-1", ["channels"]),
    ("channels-huge", b"allreduce,0,-1,ring,simple,99999999999999999999,-1,-1,-1,-1", ["channels"]),
    ("channels-float", b"allreduce,0,-1,ring,simple,4.5,-1,-1,-1,-1", ["channels"]),
    ("regbuff-2", b"allreduce,0,-1,ring,simple,4,-1,-1,-1,2", ["regBuff"]),
    ("min-bytes-negative", b"allreduce,-2,-1,ring,simple,4,-1,-1,-1,-1", ["min_bytes"]),
    ("min-bytes-2^64", b"allreduce,18446744073709551616,-1,ring,simple,4,-1,-1,-1,-1", ["min_bytes"]),
    ("min-above-max", b"allreduce,100,10,ring,simple,4,-1,-1,-1,-1", ["min_bytes"]),
    ("size-suffix", b"allreduce,1K,-1,ring,simple,4,-1,-1,-1,-1", ["min_bytes"]),
    ("max-bytes-hex", b"allreduce,0,0x10,ring,simple,4,-1,-1,-1,-1", ["max_bytes"]),
    ("nnodes-0", b"allreduce,0,-1,ring,simple,4,0,-1,-1,-1", ["nNodes"]),
    ("nranks-2^31", b"allreduce,0,-1,ring,simple,4,-1,2147483648,-1,-1", ["nRanks"]),
    ("numpipeops-text", b"allreduce,0,-1,ring,simple,4,-1,-1,many,-1", ["numPipeOps"]),
    ("seven-fields", b"allreduce,0,-1,ring,simple,4,-1", ["got 7"]),
    ("twelve-fields", b"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,1048576,7", ["got 12"]),
    ("chunk-zero", b"allreduce,0,-1,ring,simple,4,-1,-1,-1,-1,0", ["chunk"]),
    ("spaces-not-commas", b"allreduce 0 -1 ring simple", ["got 1"]),
    ("empty-fields", b",,,,,,,,,", ["collective"]),
    ("nul-byte", b"allreduce,0,-1,ring,simple,4\x00,-1,-1,-1,-1", ["channels"]),
    ("binary", bytes(range(1, 256)), []),
    ("unicode-collective", "allréduce,0,-1,ring,simple,4,-1,-1,-1,-1".encode(), ["collective"]),
    ("long-line", b"allreduce," + b"9" * 100000 + b",-1,ring,simple,4,-1,-1,-1,-1", ["min_bytes"]),
]:
    # The bad line after a good one: the whole file is refused (the warning names line 3).
    tuner_cases.append((f"tuner-conf-{label}", TUNER_HEADER + TUNER_GOOD + line + b"\n", [":3:"] + expect))
tuner_cases.append(("tuner-conf-truncated-mid-line", TUNER_HEADER + TUNER_GOOD + b"allreduce,0,65", [":3:"]))
tuner_cases.append(("tuner-conf-directory", None, ["nccl_tuner.conf"]))
tuner_cases.append(("tuner-conf-over-16MiB", TUNER_HEADER + b"#" * (17 << 20) + b"\n", ["nccl_tuner.conf"]))

# The child: loads the plugin, runs one communicator (16 ranks on 2 nodes) with a null logger and NCCL_DEBUG
# unset, so the plugin's warning goes to stderr; exit 3 when NCCL's cost table or channel count changed.
TUNER_DRIVER = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
class V5(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("init", ctypes.c_void_p), ("getCollInfo", ctypes.c_void_p),
                ("finalize", ctypes.c_void_p)]
plugin = V5.in_dll(lib, "ncclTunerPlugin_v5")
init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64, ctypes.c_size_t,
                        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(plugin.init)
get = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_int))(plugin.getCollInfo)
fini = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(plugin.finalize)
nvl = (ctypes.c_int * 3)(1, 8, 8)
constants = (ctypes.c_double * 4096)()  # larger than ncclTunerConstants_v5_t
ctx = ctypes.c_void_p()
assert init(ctypes.byref(ctx), 0xabcdef, 16, 2, None, nvl, constants) == 0
for coll in range(5):
    for size in (0, 1024, 65535, 1 << 30):
        table = (ctypes.c_float * 21)(*[100.0 + i for i in range(21)])
        channels = ctypes.c_int(0)
        assert get(ctx, coll, size, 1, table, 7, 3, 0, ctypes.byref(channels)) == 0
        if list(table) != [100.0 + i for i in range(21)] or channels.value != 0:
            sys.exit(3)
assert fini(ctx) == 0
"""


def run_tuner_case(case):
    name, data, expect = case
    with tempfile.TemporaryDirectory(prefix="lagom-bad-tuner-") as tmp:
        path = os.path.join(tmp, "nccl_tuner.conf")
        if data is None:
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        env = {k: v for k, v in os.environ.items() if k not in ("NCCL_DEBUG", "NCCL_TUNER_CONFIG_FILE")}
        env["LAGOM_TUNER_CONFIG"] = path
        try:
            proc = subprocess.run([sys.executable, "-c", TUNER_DRIVER, TUNER], capture_output=True,
                                  timeout=TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"{name}: hung (over {TIMEOUT_S} s)"
        problems = []
        if proc.returncode < 0:
            problems.append(f"killed by signal {-proc.returncode}")
        elif proc.returncode == 3:
            problems.append("NCCL's cost table or channel count was changed")
        elif proc.returncode != 0:
            problems.append(f"exit {proc.returncode}")
        err = proc.stderr.decode(errors="replace")
        warnings = [l for l in err.splitlines() if l.startswith("lagom: warning: tuner:")]
        if len(warnings) != 1:
            problems.append(f"{len(warnings)} tuner warnings, expected 1")
        elif path not in warnings[0] or "NCCL keeps its own" not in warnings[0]:
            problems.append("the warning does not name the file and say NCCL keeps its own choices")
        for part in expect:
            if not warnings or part not in warnings[0]:
                problems.append(f"the warning does not name {part!r}")
        if data is not None and hashlib.sha256(open(path, "rb").read()).hexdigest() != hashlib.sha256(data).hexdigest():
            problems.append("input modified")
        left = sorted(set(os.listdir(tmp)) - {"nccl_tuner.conf"})
        if left:
            problems.append(f"left files behind: {left}")
        if problems:
            return f"{name}: {'; '.join(problems)}\n  stderr: {err.strip()[:300]}"
    return None


def run_case(case):
    name, argv, files, expect = case
    with tempfile.TemporaryDirectory(prefix="lagom-bad-") as tmp:
        for file, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, file)), exist_ok=True)  # a file in a folder: sub/x
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
        for line in err.splitlines():
            if line.startswith("lagom: error: "):
                parts = line[len("lagom: error: "):].split(": ")
                if any(a == b for a, b in zip(parts, parts[1:])):
                    problems.append("the error repeats a context ('X: X: ...')")
        for f, digest in before.items():
            path = os.path.join(tmp, f)
            if not os.path.exists(path) or hashlib.sha256(open(path, "rb").read()).hexdigest() != digest:
                problems.append(f"input {f} modified")
        left = sorted(set(os.listdir(tmp)) - {f.split("/")[0] for f in files})
        left += sorted(f"{d}/{x}" for d in {f.split("/")[0] for f in files if "/" in f}
                       for x in set(os.listdir(os.path.join(tmp, d))) - {f.split("/", 1)[1] for f in files
                                                                            if f.startswith(d + "/")})
        if left:
            problems.append(f"left files behind: {left}")
        if problems:
            return f"{name}: {'; '.join(problems)}: lagom {' '.join(argv)}\n  stderr: {err.strip()[:300]}"
    return None


def main():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failures = [r for r in pool.map(run_case, cases) if r]
        if TUNER:
            failures += [r for r in pool.map(run_tuner_case, tuner_cases) if r]
    for failure in failures:
        print(failure)
    total = len(cases) + (len(tuner_cases) if TUNER else 0)
    print(f"{total} bad inputs ({len(tuner_cases) if TUNER else 0} tuner configs), {len(failures)} handled wrongly")
    return 1 if failures or len(cases) < 250 else 0


if __name__ == "__main__":
    sys.exit(main())
