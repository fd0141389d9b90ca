#!/usr/bin/env python3
"""`lagom report` pages opened in headless Chromium (Debian's `chromium` package).

For one input kind (or `all` of them in one page) this makes the documents with the built lagom, writes
the report, then has Chromium load it from a file:// URL (no network) once, with --dump-dom (the DOM
after the page's script ran) and --screenshot. It checks that
  * the page rendered (body data-rendered="true") and raised no JavaScript error (the page's own error
    handler lists every uncaught error in #lagom-js-errors and counts them in body data-js-errors);
  * every expected chart (figure data-chart=NAME) is there with the expected number of series
    (data-series, counted by the page from the Chart.js object) and every expected table with the
    expected number of rows (data-rows, and the <tr> elements of its <tbody> counted here);
  * the screenshot is not blank: enough pixels differ from the page's white background (the PNG is
    decoded with zlib from the standard library).
Exit 0 pass, 1 fail, 77 skip (CTest SKIP_RETURN_CODE) when no Chromium is installed. The files stay in
--work for a person to look at (report.html, screenshot.png, dom.html).

With --broken-library the page gets a stand-in library that defines no Chart, and the test passes only
when the check sees the resulting JavaScript error (the check can fail).

Usage: report_browser_test.py --lagom PATH --kind simulate|explore|tune|profile|validate|check|plan|all
                              --work DIR [--data DIR] [--chromium PATH] [--broken-library]
"""
import argparse
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib

KINDS = ["simulate", "explore", "tune", "profile", "validate", "check", "plan"]
BROWSER_TIMEOUT_S = 90  # one Chromium run; a loaded 2-core machine takes a few seconds


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


def must(cmd, out_path=None):
    r = run(cmd)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stderr}")
    if out_path:
        with open(out_path, "w") as f:
            f.write(r.stdout)
    return r.stdout


def find_chromium(given):
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "chromium-headless-shell"):
        path = shutil.which(name)
        if path:
            return path
    return None


# ---- the documents, and what each section must show -------------------------------------------------

def make_documents(lagom, kind, work, data):
    """Writes the inputs of `kind` into work; returns (report arguments, expected charts, expected tables)."""
    docs, charts, tables = [], {}, {}
    golden = os.path.join(data, "..", "golden", "gpt3-175b-1024", "args")
    if kind == "simulate":
        with open(golden) as f:
            args = f.read().split()
        path = os.path.join(work, "simulate.json")
        must([lagom, "simulate", "--json", *args], path)
        doc = json.load(open(path))
        stages = len(doc["stage_breakdown_s"])
        # timeline: one series per phase; breakdown: one; memory: four parts, the budget and the A100's
        # capacity
        charts.update({"simulate-timeline": 4, "simulate-breakdown": 1, "simulate-memory": 6})
        tables["simulate-op-classes"] = len(doc["op_classes"])
        docs.append(path)
        assert stages == 8, f"gpt3-175b golden has pp 8, got {stages} stages"
    elif kind == "explore":
        path = os.path.join(work, "explore.json")
        must([lagom, "explore", "--json", "--quiet", "--model", "llama3-8b", "--cluster", "dgx-h100",
              "--gpus", "64", "--global-batch", "512", "--top", "40"], path)
        doc = json.load(open(path))
        charts["explore-scatter"] = 2  # the strategies and the Pareto front
        tables["explore-top"] = min(25, len(doc["results"]))
        docs += [path, "--top", "25"]
    elif kind == "tune":
        path = os.path.join(work, "tune.json")
        # README's TP=8 + SP row: the overlap knobs change the op classes (a new gradient bucket size)
        must([lagom, "tune", "--json", "--quiet", "--model", "llama3-8b", "--cluster", "a40-nvlink-ib400",
              "--gpus", "16", "--tp", "8", "--sp", "--global-batch", "64",
              "--out", os.path.join(work, "tune-out")], path)
        doc = json.load(open(path))
        charts.update({"tune-iteration": 1, "tune-op-classes": 2})
        tables["tune-ops"] = len(doc["ops"])
        docs.append(path)
    elif kind == "profile":
        # GEMMs and memory bandwidth measured here (cpu backend), and all-reduce busbw from vTrain's
        # measured table (8 A100s) imported and fitted as a second run.
        db = os.path.join(work, "profile.db")
        must([lagom, "profile", "--backend", "cpu", "--quick", "--quiet", "--db", db])
        must([lagom, "db", "import", os.path.join(data, "vtrain", "AR_GPU8_1M_1024M_LUT"), "--db", db])
        runs = [r["id"] for r in json.loads(must([lagom, "db", "list", "--db", db, "--json"]))["runs"]]
        must([lagom, "db", "fit", str(runs[-1]), "--db", db])
        gemm_series = 0
        collective_fits = gemm_fits = 0
        for run_id in runs:
            export = json.loads(must([lagom, "db", "export", str(run_id), "--format", "json", "--db", db]))
            precisions = {s["precision"] for s in export["compute"] if s["kind"] == "gemm"}
            fitted = {g["precision"] for g in export["fits"]["gemms"]}
            gemm_series += len(precisions) + len(precisions & fitted)  # measured, and the fit's curve
            collective_fits += len(export["fits"]["collectives"])
            gemm_fits += len(export["fits"]["gemms"])
        charts["profile-gemm"] = gemm_series
        charts["profile-busbw-allreduce"] = 2  # one configuration (8 ranks): measured and fitted
        tables["profile-collective-fits"] = collective_fits
        tables["profile-gemm-fits"] = gemm_fits
        for run_id in runs:
            docs += ["--run", str(run_id)]
        docs += ["--db", db]
    elif kind == "validate":
        path = os.path.join(work, "validate.json")
        # exit 1: ten of the 86 runs need uneven pipeline stages (README, known gaps); the document is whole
        r = run([lagom, "validate", os.path.join(data, "validate", "dgxc-h100.csv"), "--json"])
        if r.returncode not in (0, 1) or not r.stdout.startswith("{"):
            sys.exit(f"FAIL: lagom validate exited {r.returncode}: {r.stderr}")
        with open(path, "w") as f:
            f.write(r.stdout)
        doc = json.load(open(path))
        charts["validate-scatter"] = 6  # runs, y = x, ±5%, ±10%
        tables["validate-groups"] = sum(len(v) for v in doc["groups"].values())
        docs.append(path)
    elif kind == "check":
        with open(golden) as f:
            args = f.read().split()
        base = os.path.join(work, "baseline.json")
        cur = os.path.join(work, "current.json")
        must([lagom, "simulate", "--json", *args], base)
        # the same strategy with a larger micro-batch: some metrics better, some worse
        changed = [a for a in args]
        changed[changed.index("--micro-batch") + 1] = "2"
        must([lagom, "simulate", "--json", *changed], cur)
        path = os.path.join(work, "check.json")
        r = run([lagom, "check", "--baseline", base, "--current", cur, "--json"])
        if r.returncode not in (0, 1):
            sys.exit(f"FAIL: lagom check exited {r.returncode}: {r.stderr}")
        with open(path, "w") as f:
            f.write(r.stdout)
        doc = json.loads(r.stdout)
        charts["check-deltas"] = 1
        tables["check-metrics"] = len(doc["metrics"])
        docs.append(path)
    elif kind == "plan":
        path = os.path.join(work, "plan.json")
        # tests/plan/test_plan_cli.cpp's small plan: two clusters at two GPU counts, priced, a deadline
        must([lagom, "plan", "--json", "--quiet", "--model", "llama3-8b", "--cluster", "dgx-h100",
              "--cluster", "dgx-a100", "--gpus", "8,16", "--global-batch", "64", "--threads", "2",
              "--tokens", "20B", "--price", "dgx-h100=3", "--price", "2", "--deadline", "60d"], path)
        doc = json.load(open(path))
        clusters = {r["cluster"] for r in doc["rows"] if r["feasible"]}
        selection = doc["selection"]
        named = {selection[k] for k in ("chosen", "closest", "cheapest", "fastest", "cheapest_in_deadline",
                                        "fastest_in_budget") if selection[k] is not None}
        # front: each cluster's points and its front, and the front over every cluster; cost per GPU
        # count: one line per cluster; goodput: its four parts
        charts.update({"plan-front": 2 * len(clusters) + 1, "plan-cost-by-gpus": len(clusters),
                       "plan-goodput": 4})
        tables.update({"plan-goodput": len(named), "plan-rows": len(doc["rows"])})
        docs.append(path)
    return docs, charts, tables


# ---- reading back the page --------------------------------------------------------------------------

class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.body = {}
        self.charts = {}   # name -> data-series, summed over the charts of that name
        self.tables = {}   # name -> [data-rows, <tr> in tbody], summed likewise
        self.errors = []
        self._table = None
        self._in_tbody = False
        self._in_error = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "figure" and "data-chart" in a:
            # several sections may hold a chart of one name (two profile runs): their series add up
            name = a["data-chart"]
            self.charts[name] = self.charts.get(name, 0) + int(a.get("data-series", "-1000"))
        elif tag == "table" and "data-table" in a:
            self._table = a["data-table"]
            rows = self.tables.setdefault(self._table, [0, 0])
            rows[0] += int(a.get("data-rows", "-1000"))
        elif tag == "tbody":
            self._in_tbody = True
        elif tag == "tr" and self._table and self._in_tbody:
            self.tables[self._table][1] += 1
        elif tag == "li" and self._in_error_list:
            self._in_error = True
            self.errors.append("")
        if tag == "ol" and a.get("id") == "lagom-js-errors":
            self._in_error_list = True

    _in_error_list = False

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_tbody = False
        elif tag == "table":
            self._table = None
        elif tag == "ol":
            self._in_error_list = False
        elif tag == "li":
            self._in_error = False

    def handle_data(self, data):
        if self._in_error:
            self.errors[-1] += data


def non_background_share(png_path):
    """The share of pixels that are not the white background, from the PNG decoded by hand (8-bit RGB/RGBA)."""
    with open(png_path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(blob):
        length, ctype = struct.unpack(">I4s", blob[pos:pos + 8])
        chunk = blob[pos + 8:pos + 8 + length]
        if ctype == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"unexpected PNG format: depth {depth}, color type {color}, interlace {interlace}")
            bpp = 3 if color == 2 else 4
        elif ctype == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    coloured = 0
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            if filt == 1:
                line[i] = (line[i] + left) & 255
            elif filt == 2:
                line[i] = (line[i] + up) & 255
            elif filt == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif filt == 4:
                ul = prev[i - bpp] if i >= bpp else 0
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
                line[i] = (line[i] + pred) & 255
        for x in range(0, stride, bpp):
            if line[x] < 245 or line[x + 1] < 245 or line[x + 2] < 245:
                coloured += 1
        prev = line
    return coloured / float(width * height)


def browser(chromium, args, url):
    cmd = [chromium, "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
           "--disable-background-networking", "--hide-scrollbars", "--mute-audio",
           "--virtual-time-budget=15000", *args, url]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    started = time.monotonic()
    r = run(cmd, timeout=BROWSER_TIMEOUT_S)
    return r, time.monotonic() - started


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lagom", required=True)
    p.add_argument("--kind", required=True, choices=KINDS + ["all"])
    p.add_argument("--work", required=True)
    p.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
    p.add_argument("--chromium")
    p.add_argument("--broken-library", action="store_true",
                   help="inline a library without Chart: the check must see the page's JavaScript error")
    a = p.parse_args()
    chromium = find_chromium(a.chromium)
    if not chromium:
        print("SKIP: no Chromium installed (Debian package chromium; scripts/setup.sh installs it)")
        return 77
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    inputs, charts, tables = [], {}, {}
    for kind in (KINDS if a.kind == "all" else [a.kind]):
        more, c, t = make_documents(a.lagom, kind, a.work, a.data)
        inputs += more
        charts.update(c)
        tables.update(t)
    page = os.path.join(a.work, "report.html")
    extra = []
    if a.broken_library:
        fake = os.path.join(a.work, "chart.min.js")
        with open(fake, "w") as f:
            f.write("/*! Chart.js v0.0.0 (a stand-in that defines no Chart) */\n")
        extra = ["--chart-js", fake]
    r = run([a.lagom, "report", *inputs, "--out", page, "--json", *extra])
    if r.returncode != 0:
        print(f"FAIL: lagom report exited {r.returncode}: {r.stderr}")
        return 1
    listing = json.loads(r.stdout)
    kinds = [s["kind"] for s in listing["sections"]]
    failures = []
    if sorted(set(kinds)) != sorted(KINDS if a.kind == "all" else [a.kind]):
        failures.append(f"sections {kinds}, expected {a.kind}")
    with open(page) as f:
        text = f.read()
    for needle in ("http://", "https://"):
        for line in text.splitlines():
            # Links named in comments and the licence are text; nothing may be loaded from the network.
            if needle in line and ("src=" in line or "href=" in line or "import(" in line):
                failures.append(f"the page loads something from the network: {line.strip()[:120]}")
    url = "file://" + os.path.abspath(page)
    shot = os.path.join(a.work, "screenshot.png")
    height = 1400 if a.kind != "all" else 2400  # the DOM check covers what lies below
    # One run does both: the DOM after the page's script ran on stdout, and the screenshot.
    dom_run, browser_s = browser(chromium, ["--dump-dom", f"--screenshot={shot}", f"--window-size=1280,{height}"], url)
    if dom_run.returncode != 0 or "<body" not in dom_run.stdout or not os.path.exists(shot):
        print(f"FAIL: chromium exited {dom_run.returncode}: {dom_run.stderr[-2000:]}")
        return 1
    with open(os.path.join(a.work, "dom.html"), "w") as f:
        f.write(dom_run.stdout)
    dom = Dom()
    dom.feed(dom_run.stdout)
    if dom.body.get("data-rendered") != "true":
        failures.append("the page's script did not finish (body data-rendered is not true)")
    if dom.body.get("data-js-errors") != "0" or dom.errors:
        failures.append(f"JavaScript errors: {dom.body.get('data-js-errors')}: {dom.errors}")
    for name, series in charts.items():
        got = dom.charts.get(name)
        if got != series:
            failures.append(f"chart {name}: {got} series, expected {series}")
    for name, rows in tables.items():
        got = dom.tables.get(name)
        if got is None or got[0] != rows or got[1] != rows:
            failures.append(f"table {name}: data-rows and <tr> {got}, expected {rows}")
    share = non_background_share(shot)
    # Measured: the pages of every kind colour 5.5-25% of a 1280-wide screenshot (bars, points, grid
    # lines, text); the page whose library failed (header and footer only) 0.4%.
    if share < 0.03:
        failures.append(f"screenshot {shot} is nearly blank: {100 * share:.1f}% of pixels not background")
    print(f"{a.kind}: {len(kinds)} section(s), charts {dom.charts}, tables "
          f"{ {k: v[0] for k, v in dom.tables.items()} }, render {dom.body.get('data-render-ms')} ms, "
          f"chromium {browser_s:.1f} s, {100 * share:.1f}% of the screenshot drawn; files in {a.work}")
    if a.broken_library:
        # The check itself is under test: it must have seen "Chart is not defined" and the missing charts.
        seen = any("Chart is not defined" in e for e in dom.errors)
        print(("PASS" if seen else "FAIL") + f": the broken page's errors as read back: {dom.errors}")
        return 0 if seen and failures else 1
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
