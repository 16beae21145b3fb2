"""Merges the fragments of `make gpu-check` (tools/gpu_check.sh) into OUT/results.json, OUT/summary.txt
and OUT/warnings.txt; checks the issue's targets. Standard library only (any Python 3).

Usage: gpu_check_merge.py --variant gpu|emu --budget S --wall S --models "a b" --batches 1,8 SCRATCH OUT
       gpu_check_merge.py --verify RESULTS.json   (exit 0 when every step is ok and every correctness check
                                                   passes; timing targets are not part of it)
Exit status of a merge: 0 when every step is ok and every correctness check passes, 1 otherwise.
"""
import glob
import json
import os
import re
import sys

FP32_NMSE = 1e-8   # the exact mode (tests/cuda_zoo_util.h)
TF32_NMSE = 1e-3   # TF32 (tests/cuda_zoo_util.h: 20x the worst zoo model measured on the emulated H100)
SPEEDUP = 1.5      # Opara graph over our sequential graph on GoogLeNet and Inception-v3 at batch 1
MODES = ["eager", "graph", "seq-graph"]


def read(path, limit=None):
    try:
        with open(path, "r", errors="replace") as f:
            return f.read() if limit is None else f.read(limit)
    except OSError:
        return ""


def jsonl(path):
    out = []
    for line in read(path).splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"kind": "unparsed", "line": line[:500]})
    return out


# ---- test-gpu ------------------------------------------------------------------------------------------

SUMMARY = re.compile(r"^(?:(\S+)\s+)?(?:[A-Za-z-]+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?")


def test_gpu(scratch, name, logs):
    text = read(os.path.join(scratch, "frag", name + ".out")) + read(os.path.join(scratch, "frag", name + ".err"))
    res = {"per_test": {}, "summary": None, "failing": []}
    for line in text.splitlines():
        m = SUMMARY.match(line.strip())
        if not m:
            if line.startswith("failing:"):
                res["failing"] = line.split(":", 1)[1].split("(")[0].split()
            continue
        counts = {"passed": int(m.group(2)), "failed": int(m.group(3)), "skipped": int(m.group(4) or 0)}
        if m.group(1):
            res["per_test"][m.group(1)] = counts
        else:
            res["summary"] = line.strip()
            res.update(counts)
    details = {}
    for t in res["failing"]:
        log = read(os.path.join(scratch, logs, t + ".log"))
        lines = [l for l in log.splitlines() if l.startswith(("FAIL ", "  ", "SKIP ")) or "no closing line" in l]
        details[t] = "\n".join((lines or log.splitlines()[-15:])[:80])
    res["failures"] = details
    skips = []
    for log in sorted(glob.glob(os.path.join(scratch, logs, "*.log"))):
        for l in read(log).splitlines():
            if l.startswith("SKIP "):
                skips.append("%s: %s" % (os.path.basename(log)[:-4], l[5:200]))
    res["skips"] = skips[:200]
    return res


# ---- warnings digest -----------------------------------------------------------------------------------

WARN = re.compile(r"opara: (warning|error):|opara-emu:|^FAIL |[Ww]arning[:)]|Traceback|\b\w*Error:|error:|ERROR|"
                  r"CUDA_ERROR|CUDNN_STATUS_(?!SUCCESS)|CUBLAS_STATUS_(?!SUCCESS)|NVRTC_ERROR|no closing line")
# not warnings: the emulator's banner, our INFO/DEBUG lines (they may quote an error code they recovered
# from) and our own JSON records (results.json has them)
QUIET = re.compile(r"opara-emu: .*\(cc \d+\.\d+\), seed|^opara: (info|debug):|^\{\"kind\": ")


def warnings_digest(scratch):
    groups = {}
    files = sorted(glob.glob(os.path.join(scratch, "frag", "*.err")) + glob.glob(os.path.join(scratch, "frag", "*.out")) +
                   glob.glob(os.path.join(scratch, "test-logs-*", "*.log")))
    for path in files:
        where = os.path.relpath(path, scratch)
        for line in read(path, 50_000_000).splitlines():
            if not WARN.search(line) or QUIET.search(line.strip()):
                continue
            line = line.strip()[:500]
            key = re.sub(r"0x[0-9a-fA-F]+|\d+(\.\d+)?(e[-+]?\d+)?", "#", line)
            g = groups.setdefault(key, {"count": 0, "example": line, "where": []})
            g["count"] += 1
            if where not in g["where"] and len(g["where"]) < 5:
                g["where"].append(where)
    return sorted(groups.values(), key=lambda g: -g["count"])


# ---- the table and the targets -------------------------------------------------------------------------

def index_records(ours, torch):
    o = {}
    for r in ours:
        if r.get("status") == "ok" and r.get("mode") in MODES:
            o[(r["model"], r["batch"], r["precision"], r["mode"])] = r
    t = {}
    for r in torch:
        if r.get("status") == "ok":
            t[(r["model"], r["batch"], r["precision"], r["variant"], r["io"])] = r
    return o, t


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def table(ours, torch):
    o, t = index_records(ours, torch)
    keys = sorted({k[:3] for k in o} | {k[:3] for k in t}, key=lambda k: (str(k[0]), int(k[1]) if str(k[1]).isdigit() else 0, k[2]))
    rows = []
    for model, batch, prec in keys:
        row = {"model": model, "batch": batch, "precision": prec}
        for mode in MODES:
            r = o.get((model, batch, prec, mode))
            key = mode.replace("-", "_")
            row["ours_%s_ms" % key] = r["median_ms"] if r else None
            row["ours_%s_p10_ms" % key] = r["p10_ms"] if r else None
            row["ours_%s_p90_ms" % key] = r["p90_ms"] if r else None
            row["ours_%s_create_ms" % key] = r["create_ms"] if r else None
            row["ours_%s_nmse" % key] = r.get("nmse_worst") if r else None
            row["ours_%s_device_ms" % key] = r.get("device_median_ms") if r else None
        for variant in ("eager", "graph", "compile"):
            for io in ("host", "device"):
                r = t.get((model, batch, prec, variant, io))
                row["torch_%s_%s_ms" % (variant, io)] = r["median_ms"] if r else None
        g, s = row["ours_graph_ms"], row["ours_seq_graph_ms"]
        row["opara_graph_speedup_over_seq_graph"] = ratio(s, g)
        row["torch_graph_host_over_ours_graph"] = ratio(row["torch_graph_host_ms"], g)
        row["torch_graph_device_over_ours_graph"] = ratio(row["torch_graph_device_ms"], g)
        row["torch_graph_device_over_ours_graph_device"] = ratio(row["torch_graph_device_ms"], row["ours_graph_device_ms"])
        row["torch_eager_host_over_ours_graph"] = ratio(row["torch_eager_host_ms"], g)
        row["torch_compile_host_over_ours_graph"] = ratio(row["torch_compile_host_ms"], g)
        nmse = [row["ours_%s_nmse" % m.replace("-", "_")] for m in MODES]
        nmse = [x for x in nmse if x is not None]
        row["nmse_worst"] = max(nmse) if nmse else None
        rows.append(row)
    return rows


def target(name, status, detail, kind):
    return {"name": name, "status": status, "detail": detail, "kind": kind}


def targets(variant, models, batches, ours, torch, thread, tests):
    o, t = index_records(ours, torch)
    out = []
    # correctness: every model, batch and mode matches the CPU backend in FP32
    bad, missing = [], []
    for m in models:
        for b in batches:
            for mode in MODES:
                r = o.get((m, b, "fp32", mode))
                if not r:
                    failed = [x for x in ours if x.get("model") == m and x.get("batch") == b and x.get("mode") in (mode, "*")
                              and x.get("precision") in ("fp32", "*")]
                    missing.append("%s b%d %s (%s)" % (m, b, mode, failed[0].get("reason", "no record")[:160] if failed else "no record"))
                elif not (r.get("nmse_worst") is not None and r["nmse_worst"] <= FP32_NMSE):
                    bad.append("%s b%d %s NMSE %s" % (m, b, mode, r.get("nmse_worst")))
    out.append(target("every zoo model in every mode matches the CPU backend, FP32 NMSE <= %g" % FP32_NMSE,
                      "pass" if not bad and not missing else "fail",
                      "; ".join(bad + ["not measured: " + x for x in missing]) or "%d sessions" % (len(models) * len(batches) * 3),
                      "correctness"))
    tf = [r for (m, b, p, mode), r in o.items() if p == "tf32"]
    tbad = ["%s b%s %s NMSE %s" % (r["model"], r["batch"], r["mode"], r.get("nmse_worst")) for r in tf
            if not (r.get("nmse_worst") is not None and r["nmse_worst"] <= TF32_NMSE)]
    out.append(target("TF32 sessions match the CPU backend within NMSE %g" % TF32_NMSE,
                      "pass" if tf and not tbad else "fail" if tbad else "not measured",
                      "; ".join(tbad) or "%d sessions" % len(tf), "correctness"))
    dio = [r for r in o.values() if "device_io_same_outputs" in r]
    dbad = ["%s b%s %s %s" % (r["model"], r["batch"], r["precision"], r["mode"]) for r in dio if not r["device_io_same_outputs"]]
    dmiss = sorted({r.get("device_io", "")[:200] for r in o.values() if r.get("device_io")})
    out.append(target("opara_session_run_device (device-resident I/O) gives the host run's outputs bit for bit",
                      "pass" if dio and not dbad else "fail",
                      "; ".join(dbad + ["not measured: " + x for x in dmiss]) or "%d sessions" % len(dio), "correctness"))
    th = [r for r in thread if r.get("kind") == "thread"]
    tfail = ["%s %s: %s" % (r.get("model"), r.get("mode", "*"), r.get("second_thread_run") or r.get("reason")) for r in th
             if r.get("status") != "ok"]
    out.append(target("a session created on one thread runs from a second thread (every mode)",
                      "pass" if th and not tfail else "fail", "; ".join(tfail) or "%d sessions" % len(th), "correctness"))
    for name, res in tests.items():
        ok = res.get("summary") is not None and res.get("failed", 1) == 0
        out.append(target("make test-gpu (%s) passes" % name, "pass" if ok else "fail",
                          res.get("summary") or "no summary line (the step did not finish)", "correctness"))
    # timing: checked on a GPU, reported on the emulator
    timing = "reported" if variant == "emu" else None
    details, ok_all, measured = [], True, False
    for m in [x for x in ("googlenet", "inception_v3") if x in models] or models:
        g, s = o.get((m, 1, "fp32", "graph")), o.get((m, 1, "fp32", "seq-graph"))
        if g and s:
            measured = True
            r = s["median_ms"] / g["median_ms"]
            ok_all &= r >= SPEEDUP
            details.append("%s b1: %.2fx (seq %.3f ms / graph %.3f ms)" % (m, r, s["median_ms"], g["median_ms"]))
        else:
            ok_all = False
            details.append("%s b1: not measured" % m)
    out.append(target("Opara graph >= %.1fx our sequential graph at batch 1 (GoogLeNet, Inception-v3)" % SPEEDUP,
                      timing or ("pass" if ok_all and measured else "fail"), "; ".join(details), "timing"))
    details, ok_all, measured = [], True, False
    for m in models:
        for b in batches:
            for p in ("fp32", "tf32"):
                g, tg = o.get((m, b, p, "graph")), t.get((m, b, p, "graph", "host"))
                if not g or not tg:
                    if p == "fp32":
                        ok_all = False
                        details.append("%s b%d %s: not measured" % (m, b, p))
                    continue
                measured = True
                faster = g["median_ms"] < tg["median_ms"]
                ok_all &= faster
                td = t.get((m, b, p, "graph", "device"))
                device = ""
                if g.get("device_median_ms") and td:
                    device = "; device-resident I/O: ours %.3f ms vs torch graph %.3f ms" % (g["device_median_ms"], td["median_ms"])
                details.append("%s b%d %s: ours %.3f ms vs torch graph %.3f ms (%s)%s" % (
                    m, b, p, g["median_ms"], tg["median_ms"], "faster" if faster else "SLOWER", device))
    out.append(target("our Opara graph faster than PyTorch's CUDA graph at batch 1 and 8, same precision, host copies "
                      "included on both sides", timing or ("pass" if ok_all and measured else "fail"),
                      "; ".join(details), "timing"))
    return out


# ---- the profile ---------------------------------------------------------------------------------------

def profile(scratch):
    text = read(os.path.join(scratch, "frag", "profile.json"))
    if not text:
        return None
    try:
        nodes = json.loads(text).get("nodes", [])
    except ValueError as e:
        return {"error": "profile.json does not parse: %s" % e}
    timed = [n for n in nodes if n.get("time_ms") is not None]
    top = sorted(timed, key=lambda n: -n["time_ms"])[:15]
    return {"nodes": len(nodes), "timed": len(timed),
            "total_ms": round(sum(n["time_ms"] for n in timed), 4),
            "runs": max((n.get("runs", 0) for n in timed), default=0),
            "largest_spread": max((n.get("time_spread") or 0 for n in timed), default=0),
            "sources": sorted({n.get("source") for n in nodes}),
            "top": [{k: n.get(k) for k in ("node", "op", "name", "kernel", "source", "time_ms", "time_spread", "grid",
                                           "block", "regs", "smem_static")} for n in top],
            "file": "profile.json"}


# ---- output --------------------------------------------------------------------------------------------

def fmt(v, digits=3):
    return "-" if v is None else ("%.*f" % (digits, v) if isinstance(v, float) else str(v))


def summary_text(res):
    lines = ["opara gpu-check (%s): %s in %s s of %s s" % (res["variant"], res["verdict"], res["wall_s"], res["budget_s"]), ""]
    env = res.get("environment", {})
    dev = env.get("device") or {}
    lines.append("device: %s (cc %s, driver %s) via %s" % (dev.get("name"), dev.get("compute_capability"),
                                                             dev.get("driver_version"), dev.get("driver_library")))
    te = env.get("torch") or {}
    lines.append("python: %s torch %s (CUDA %s, %s)" % (te.get("python"), te.get("torch"), te.get("torch_cuda"),
                                                        "cuda available" if te.get("cuda_available") else "no CUDA"))
    ld = env.get("loader") or {}
    lines.append("loader alone: gemm %s, conv %s, libraries %s, kernels %s" % (ld.get("gemm"), ld.get("conv"),
                                                                             ld.get("libraries"), ld.get("kernels")))
    if env.get("libraries_used"):
        lines.append(env["libraries_used"])
    lines += ["", "steps:"]
    for s in res["steps"]:
        lines.append("  %-16s %-8s %7s s  %s" % (s["name"], s["status"], s["seconds"], (s.get("reason") or "")[:150]))
    lines += ["", "table (median ms; host copies included for ours and torch 'H'; 'D': inputs and outputs stay on the "
                  "device; ratios > 1: ours faster):"]
    head = "%-13s %2s %-4s | %8s %8s %8s %8s | %8s %8s %8s %8s %8s | %6s %6s | %8s" % (
        "model", "b", "prec", "seq-grph", "graph", "graphD", "eager", "t.eagerH", "t.grphH", "t.grphD", "t.compH", "t.compD",
        "spdup", "vsTgH", "NMSE")
    lines.append(head)
    for r in res["table"]:
        lines.append("%-13s %2s %-4s | %8s %8s %8s %8s | %8s %8s %8s %8s %8s | %6s %6s | %8s" % (
            r["model"], r["batch"], r["precision"], fmt(r["ours_seq_graph_ms"]), fmt(r["ours_graph_ms"]),
            fmt(r.get("ours_graph_device_ms")), fmt(r["ours_eager_ms"]), fmt(r["torch_eager_host_ms"]), fmt(r["torch_graph_host_ms"]),
            fmt(r["torch_graph_device_ms"]), fmt(r["torch_compile_host_ms"]), fmt(r["torch_compile_device_ms"]),
            fmt(r["opara_graph_speedup_over_seq_graph"], 2), fmt(r["torch_graph_host_over_ours_graph"], 2),
            "-" if r["nmse_worst"] is None else "%.1e" % r["nmse_worst"]))
    lines += ["", "targets:"]
    for t in res["targets"]:
        lines.append("  [%s] %s: %s" % (t["status"], t["name"], t["detail"][:600]))
    lines += ["", "warnings: %d distinct lines (warnings.txt)" % len(res["warnings"])]
    return "\n".join(lines) + "\n"


def merge(args, scratch, out):
    steps = jsonl(os.path.join(scratch, "steps.jsonl"))
    frag = lambda name: os.path.join(scratch, "frag", name)  # noqa: E731
    models = args["models"].split()
    batches = [int(b) for b in args["batches"].split(",") if b]
    device_env = jsonl(frag("device-env.out"))
    torch_env = jsonl(frag("torch-env.out"))
    ours = [r for p in sorted(glob.glob(frag("bench-*.out"))) for r in jsonl(p)]
    torch = jsonl(frag("torch.out"))
    thread = jsonl(frag("thread.out"))
    tests = {}
    for name in ("fp32", "tf32"):
        step = [s for s in steps if s["name"] == "test-gpu-" + name]
        if step and step[0]["status"] != "skipped":
            tests[name] = test_gpu(scratch, "test-gpu-" + name, "test-logs-" + name)
    env = {"facts": read(frag("facts.txt"), 200_000), "python": read(frag("python.out")).strip() or None,
           "device": next((r for r in device_env if r.get("kind") == "device"), None),
           "loader": next((r for r in device_env if r.get("kind") == "loader"), None),
           "torch": torch_env[0] if torch_env else None,
           "libraries_used": read(frag("libraries.txt")).strip() or None,
           "opara_env": {k: v for k, v in os.environ.items() if k.startswith("OPARA_")}}
    build_text = read(frag("build.err")) + read(frag("build.out"))
    res = {"schema": "opara-gpu-check/1", "variant": args["variant"], "wall_s": float(args["wall"]),
           "budget_s": int(args["budget"]), "models": models, "batches": batches, "steps": steps,
           "environment": env,
           "build": {"compiler_warnings": len(re.findall(r"warning:", build_text)),
                     "errors": [l for l in build_text.splitlines() if "error" in l][:40]},
           "zoo": read(frag("zoo.out"), 20_000).splitlines()[-40:],
           "test_gpu": tests, "ours": ours, "torch": torch, "thread": thread, "profile": profile(scratch)}
    res["table"] = table(ours, torch)
    res["targets"] = targets(args["variant"], models, batches, ours, torch, thread, tests)
    res["warnings"] = warnings_digest(scratch)
    steps_ok = all(s["status"] == "ok" for s in steps)
    correct = all(t["status"] == "pass" for t in res["targets"] if t["kind"] == "correctness")
    timing = [t["status"] for t in res["targets"] if t["kind"] == "timing"]
    res["verdict"] = "%s; correctness %s; timing targets %s" % (
        "every step ok" if steps_ok else "STEPS NOT OK: " + ", ".join("%s %s" % (s["name"], s["status"]) for s in steps
                                                                       if s["status"] != "ok"),
        "pass" if correct else "FAIL", ", ".join(timing))
    res["ok"] = steps_ok and correct
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(summary_text(res))
    with open(os.path.join(out, "warnings.txt"), "w") as f:
        f.write("# every WARN/ERROR line of the run (our log, emulator and driver diagnostics, test failures), "
                "digits folded to # for grouping: count, example, where\n")
        for g in res["warnings"]:
            f.write("%6d  %s    [%s]\n" % (g["count"], g["example"], ", ".join(g["where"])))
    return 0 if res["ok"] else 1


def verify(path):
    with open(path) as f:
        res = json.load(f)
    problems = ["step %s: %s (%s)" % (s["name"], s["status"], s.get("reason", "")) for s in res["steps"] if s["status"] != "ok"]
    problems += ["target %s: %s (%s)" % (t["name"], t["status"], t["detail"][:300]) for t in res["targets"]
                 if t["kind"] == "correctness" and t["status"] != "pass"]
    missing = [k for k in ("environment", "table", "targets", "warnings", "test_gpu", "ours") if k not in res]
    problems += ["results.json lacks %s" % k for k in missing]
    for p in problems:
        print("gpu-check verify: " + p)
    print("gpu-check verify: %s (%d steps, %d table rows)" % ("ok" if not problems else "FAILED", len(res["steps"]),
                                                              len(res["table"])))
    return 0 if not problems else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--verify":
        return verify(argv[2])
    args, pos = {}, []
    it = iter(argv[1:])
    for a in it:
        if a.startswith("--"):
            args[a[2:]] = next(it)
        else:
            pos.append(a)
    if len(pos) != 2 or not {"variant", "budget", "wall", "models", "batches"} <= set(args):
        sys.stderr.write(__doc__)
        return 2
    return merge(args, pos[0], pos[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
