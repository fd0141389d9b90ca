#!/usr/bin/env bash
# record.sh LAGOM: writes into this folder one document of each kind that a command reads, as LAGOM (the
# release before documents carried `kind` and `version`) writes them. Run once with that release's binary;
# the files are test data (tests/documents/test_documents_v0_cli.cpp), never rewritten by a newer lagom.
set -euo pipefail
lagom=${1:?usage: record.sh LAGOM}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$here/../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$here"
small=(--model gpt2 --cluster a40-pcie-ib100 --gpus 16 --zero 3 --micro-batch 2 --global-batch 32)
"$lagom" simulate "${small[@]}" --json --quiet > simulate.json
"$lagom" explore --model gpt2 --cluster dgx-a100 --gpus 16 --global-batch 64 --top 3 --json --quiet > explore.json
rm -rf tune-out
"$lagom" tune "${small[@]}" --search default --out tune-out --json --quiet > tune.json
"$lagom" check --baseline simulate.json --current simulate.json --json > check.json
# exit 1 is a validation beyond its tolerance: the document is whole either way
"$lagom" validate "$data/validate/dgxc-h100.csv" --json > validate.json || [[ $? == 1 ]]
# a profile export: vTrain's measured all-reduce table (8 A100s, tests/data/vtrain), every 32nd size (1 MiB
# to 1 GiB, 32 rows: the file stays small), imported and fitted
awk 'NR == 1 || (NR - 2) % 32 == 0' "$data/vtrain/AR_GPU8_1M_1024M_LUT" > "$work/AR_GPU8_1M_1024M_LUT"
"$lagom" db import "$work/AR_GPU8_1M_1024M_LUT" --db "$work/p.db" --quiet > /dev/null
"$lagom" db fit 1 --db "$work/p.db" --quiet > /dev/null
"$lagom" db export 1 --format json --db "$work/p.db" > profile.json
# check --predicted against a production run of one record of no op class (3 ranks): every class "no records"
echo '{"version":1,"kind":"collective","source":"nccl","host":"node1","pid":4242,"comm_hash":"0xabcdef0123456789","rank":0,"n_ranks":3,"n_nodes":1,"collective":"allreduce","count":1048576,"dtype":"bfloat16","bytes":2097152,"algorithm":"ring","protocol":"simple","channels":8,"seq":17,"peer":-1,"clock":"gpu","start_ns":1733057000123456789,"end_ns":1733057000123789012}' > "$work/one.jsonl"
"$lagom" db import "$work/one.jsonl" --db "$work/prod.db" --quiet > /dev/null
"$lagom" check --predicted tune-out/lagom-config.json --db "$work/prod.db" --run 1 --json > check-predicted.json
"$lagom" --version > VERSION
