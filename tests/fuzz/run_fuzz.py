#!/usr/bin/env python3
"""run_fuzz.py TARGET --seconds N --work DIR --artifacts DIR --seeds PATH... [--max-len N] [--dict FILE]

Runs one libFuzzer target for a bounded time (the ctest of tests/fuzz/CMakeLists.txt): the seeds (files,
or every file of a folder) are copied into a fresh corpus under DIR, the target runs with one input at a
time under ASan + UBSan (its build has them), and any crash, leak, undefined behaviour, input slower than
10 s or allocation over 2 GiB fails the run; libFuzzer writes the input to the artifacts folder, and this
script prints its path and the command that replays it. Exit status: libFuzzer's (0 = nothing found).
"""
import argparse
import os
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("target")
parser.add_argument("--seconds", type=int, required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--artifacts", required=True)
parser.add_argument("--max-len", type=int, default=16384)
parser.add_argument("--dict")
parser.add_argument("--seeds", nargs="+", required=True)
args = parser.parse_args()

shutil.rmtree(args.work, ignore_errors=True)
corpus, scratch = os.path.join(args.work, "corpus"), os.path.join(args.work, "tmp")
os.makedirs(corpus)
os.makedirs(scratch)
shutil.rmtree(args.artifacts, ignore_errors=True)  # what is left there is the last run's finding
os.makedirs(args.artifacts)

seeds = 0
for seed in args.seeds:
    files = [seed] if os.path.isfile(seed) else sorted(
        os.path.join(seed, name) for name in os.listdir(seed) if os.path.isfile(os.path.join(seed, name)))
    for path in files:
        if os.path.basename(path) in ("README.md", "PROVENANCE.md", "LICENSE"):
            continue
        shutil.copyfile(path, os.path.join(corpus, f"seed-{seeds:03d}-{os.path.basename(path)}"))
        seeds += 1
if seeds == 0:
    sys.exit(f"run_fuzz.py: no seed files in {args.seeds}")

command = [args.target, f"-max_total_time={args.seconds}", "-timeout=10", "-rss_limit_mb=2048",
           f"-max_len={args.max_len}", "-print_final_stats=1", "-detect_leaks=1",
           f"-artifact_prefix={args.artifacts}/"]
if args.dict:
    command.append(f"-dict={args.dict}")
command.append(corpus)
env = dict(os.environ, TMPDIR=scratch,
           ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
print(f"# {seeds} seeds; {' '.join(command)}", flush=True)
rc = subprocess.run(command, env=env, stdin=subprocess.DEVNULL).returncode
if rc != 0:
    found = sorted(os.listdir(args.artifacts))
    print(f"run_fuzz.py: {os.path.basename(args.target)} failed (exit {rc}); inputs in {args.artifacts}: {found}")
    for name in found:
        print(f"  replay: {args.target} {os.path.join(args.artifacts, name)}")
shutil.rmtree(args.work, ignore_errors=True)
sys.exit(rc)
