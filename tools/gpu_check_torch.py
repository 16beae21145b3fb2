"""The PyTorch side of `make gpu-check` (docs/GPU-CHECK.md): the zoo's torch models (tests/zoo builds
them exactly as it exports them) in PyTorch eager, PyTorch CUDA graphs (torch.cuda.graphs) and, within
a time cap, torch.compile (default mode, at the first precision only), each with GPU-resident inputs and outputs ("device") and with the host
copies included ("host", as opara_session_run does), at the same precision as ours: FP32 turns TF32
off in cuDNN and cuBLAS, TF32 turns it on. The protocol is gpu_check.c's: warm-up runs, then timed
runs of one call plus torch.cuda.synchronize() each (host wall clock), interleaved over the variants
of one model, batch and precision; median, p10, p90.

Usage: gpu_check_torch.py env | bench --models a,b --batches 1,8 --precisions fp32,tf32 --runs N
       --warmup N [--compile-seconds S] [--max-seconds S]
One JSON object per line on stdout, flushed at once (a run killed by its timeout keeps what it did).
Without a CUDA device (or without torch) every line says "skipped" with the reason.
"""
import glob
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "zoo"))


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def nvidia_wheel_libraries():
    """CUDA libraries inside this Python's site-packages (pip wheels: nvidia/cu13/lib, nvidia/cudnn/lib, ...)."""
    found = []
    for base in sys.path:
        for pattern in ("nvidia/*/lib/lib*.so*", "nvidia/*/*/lib/lib*.so*"):
            found.extend(glob.glob(os.path.join(base, pattern)))
    keep = ("libcublas.", "libcublasLt.", "libcudnn.", "libcudnn_cnn", "libnvrtc.", "libnvrtc-builtins", "libcupti.",
            "libcudart.")
    return sorted({p for p in found if os.path.basename(p).startswith(keep)})


def env():
    out = {"kind": "torch_env", "python": sys.executable, "python_version": sys.version.split()[0]}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - report whatever stops the import
        out.update(status="skipped", reason="no torch in %s: %s" % (sys.executable, e))
        emit(out)
        return
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    for mod in ("torchvision", "onnx", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            out[mod] = "missing (%s)" % e
    out["cuda_available"] = bool(torch.cuda.is_available())
    if out["cuda_available"]:
        out["device"] = torch.cuda.get_device_name(0)
        out["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        out["cudnn"] = torch.backends.cudnn.version()
    out["nvidia_wheel_libraries"] = nvidia_wheel_libraries()
    out["status"] = "ok"
    emit(out)


def has_attr(obj, name):
    """hasattr that also survives torch 1.x's backend modules, whose __getattr__ raises AssertionError."""
    try:
        getattr(obj, name)
        return obj is not None
    except Exception:  # noqa: BLE001
        return False


def set_precision(torch, precision):
    """TF32 on or off for cuDNN convolutions and cuBLAS matmuls; returns what torch reports back. Torch
    2.9+ has the fp32_precision API and refuses a mix of it with the allow_tf32 flags, so only one of the
    two is used: the new one where it exists (every level set, since the top one does not reach
    cudnn.conv/rnn in some versions)."""
    tf32 = precision == "tf32"
    matmul = torch.backends.cuda.matmul
    if has_attr(matmul, "fp32_precision"):
        value = "tf32" if tf32 else "ieee"
        targets = [torch.backends, torch.backends.cudnn, matmul,
                   getattr(torch.backends.cudnn, "conv", None), getattr(torch.backends.cudnn, "rnn", None)]
        for obj in targets:
            if has_attr(obj, "fp32_precision"):
                obj.fp32_precision = value
        return {"api": "fp32_precision", "matmul": matmul.fp32_precision,
                "cudnn_conv": torch.backends.cudnn.conv.fp32_precision if has_attr(getattr(torch.backends.cudnn, "conv", None),
                                                                                      "fp32_precision") else None,
                "cudnn_benchmark": torch.backends.cudnn.benchmark}
    matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return {"api": "allow_tf32", "matmul": "tf32" if matmul.allow_tf32 else "ieee",
            "cudnn_conv": "tf32" if torch.backends.cudnn.allow_tf32 else "ieee",
            "cudnn_benchmark": torch.backends.cudnn.benchmark}


def build(name):
    import torch
    import specs
    torch.manual_seed(0)
    if name in specs.TORCHVISION_MODELS:
        import torchvision_models
        desc = torchvision_models.build(name)
    else:
        import importlib
        desc = importlib.import_module(name).build()
    return desc["model"].eval(), desc["inputs"]


def batch_of(torch, inputs, batch):
    return [x[:1].repeat(batch, *([1] * (x.dim() - 1))).contiguous() for x in inputs]


def quantiles(ms):
    s = sorted(ms)
    def q(p):
        pos = p * (len(s) - 1)
        lo = int(pos)
        return s[lo] + (pos - lo) * (s[lo + 1] - s[lo]) if lo + 1 < len(s) else s[-1]
    return {"median_ms": q(0.5), "p10_ms": q(0.1), "p90_ms": q(0.9), "min_ms": s[0], "mean_ms": sum(s) / len(s),
            "runs": len(s)}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def make_variants(torch, model, host_in, compile_cap, compile_why, notes):
    """name -> callable that runs one inference (with its own synchronisation)."""
    dev_in = [x.cuda() for x in host_in]
    variants = {}

    def eager_device():
        model(*dev_in)
        torch.cuda.synchronize()

    def eager_host():
        out = model(*[x.cuda() for x in host_in])
        [o.cpu() for o in (out if isinstance(out, (tuple, list)) else [out])]

    variants["eager/device"] = eager_device
    variants["eager/host"] = eager_host
    static_in = [x.clone() for x in dev_in]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(*static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(*static_in)
    outs = static_out if isinstance(static_out, (tuple, list)) else [static_out]

    def graph_device():
        graph.replay()
        torch.cuda.synchronize()

    def graph_host():
        for s, h in zip(static_in, host_in):
            s.copy_(h)
        graph.replay()
        [o.cpu() for o in outs]

    variants["graph/device"] = graph_device
    variants["graph/host"] = graph_host
    if compile_cap > 0:
        t0 = time.time()
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(max(1, int(compile_cap)))
        try:
            compiled = torch.compile(model)  # the default mode: no CUDA graphs, the shortest compile
            compiled(*dev_in)  # compiles
            torch.cuda.synchronize()
            signal.alarm(0)

            def compile_device():
                compiled(*dev_in)
                torch.cuda.synchronize()

            def compile_host():
                out = compiled(*[x.cuda() for x in host_in])
                [o.cpu() for o in (out if isinstance(out, (tuple, list)) else [out])]

            variants["compile/device"] = compile_device
            variants["compile/host"] = compile_host
            notes["compile_s"] = round(time.time() - t0, 1)
        except Timeout:
            notes["compile"] = "skipped: compile took over the %d s cap" % int(compile_cap)
        except Exception as e:  # noqa: BLE001 - report the compiler's failure, keep the rest
            signal.alarm(0)
            notes["compile"] = "failed: %s" % ((str(e).splitlines() or [repr(e)])[0][:300])
        finally:
            signal.alarm(0)
    else:
        notes["compile"] = "skipped: " + compile_why
    return variants


def bench_one(torch, name, model, inputs, batch, precision, args, compile_cap, compile_why):
    flags = set_precision(torch, precision)
    host_in = batch_of(torch, inputs, batch)
    notes = {}
    with torch.inference_mode():
        variants = make_variants(torch, model, host_in, compile_cap, compile_why, notes)
        for _ in range(args["warmup"]):
            for run in variants.values():
                run()
        ms = {k: [] for k in variants}
        for _ in range(args["runs"]):
            for k, run in variants.items():
                t0 = time.perf_counter()
                run()
                ms[k].append((time.perf_counter() - t0) * 1e3)
    for k, values in ms.items():
        variant, io = k.split("/")
        rec = {"kind": "torch", "model": name, "batch": batch, "precision": precision, "variant": variant, "io": io,
               "status": "ok", "warmup": args["warmup"]}
        rec.update(quantiles(values))
        rec["tf32_flags"] = flags
        if variant == "compile" and "compile_s" in notes:
            rec["compile_s"] = notes["compile_s"]
        emit(rec)
    if "compile" in notes:
        emit({"kind": "torch", "model": name, "batch": batch, "precision": precision, "variant": "compile",
              "io": "*", "status": "skipped" if notes["compile"].startswith("skipped") else "failed",
              "reason": notes["compile"]})
    return "compile" not in notes or not notes["compile"].startswith(("failed", "skipped: compile took"))


def skip_all(args, reason):
    for name in args["models"]:
        emit({"kind": "torch", "model": name, "batch": "*", "precision": "*", "variant": "*", "io": "*",
              "status": "skipped", "reason": reason})


def bench(args):
    start = time.time()
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        skip_all(args, "no torch in %s: %s" % (sys.executable, e))
        return 0
    if not torch.cuda.is_available():
        skip_all(args, "torch %s has no CUDA (torch.cuda.is_available() is False)" % torch.__version__)
        return 0
    compile_left = args["compile_seconds"]
    built = {}
    for name in args["models"]:  # built once, on the GPU, for every precision
        try:
            model, inputs = build(name)
            built[name] = (model.cuda(), inputs)
        except Exception as e:  # noqa: BLE001
            emit({"kind": "torch", "model": name, "status": "failed", "reason": "build: %s: %s" % (type(e).__name__, e)})
    # precision outermost: FP32 (the targets) for every model before TF32, so a short budget drops TF32
    for precision in args["precisions"]:
        for name, (model, inputs) in built.items():
            for batch in args["batches"]:
                if time.time() - start > args["max_seconds"]:
                    emit({"kind": "torch", "model": name, "batch": batch, "precision": precision, "variant": "*",
                          "io": "*", "status": "skipped", "reason": "out of time (--max-seconds)"})
                    continue
                cap = compile_left if precision == args["precisions"][0] else 0  # compile at the first precision
                why = ("torch.compile runs at the first precision only" if precision != args["precisions"][0]
                       else "no time left for torch.compile")
                t0 = time.time()
                compiled_ok = True
                try:
                    compiled_ok = bench_one(torch, name, model, inputs, batch, precision, args, cap, why)
                except Exception as e:  # noqa: BLE001 - one configuration failing keeps the others
                    emit({"kind": "torch", "model": name, "batch": batch, "precision": precision, "variant": "*",
                          "io": "*", "status": "failed", "reason": "%s: %s" % (type(e).__name__, e)})
                if cap:  # a compile that failed or ran out of its cap is not tried again
                    compile_left = max(0, compile_left - (time.time() - t0)) if compiled_ok else 0
                torch.cuda.empty_cache()
    return 0


def parse(argv):
    args = {"models": [], "batches": [1], "precisions": ["fp32"], "runs": 100, "warmup": 10,
            "compile_seconds": 0.0, "max_seconds": 1e9}
    it = iter(argv)
    for k in it:
        v = next(it)
        if k == "--models":
            args["models"] = [m for m in v.split(",") if m]
        elif k == "--batches":
            args["batches"] = [int(b) for b in v.split(",") if b]
        elif k == "--precisions":
            args["precisions"] = [p for p in v.split(",") if p]
        elif k in ("--runs", "--warmup"):
            args[k[2:]] = int(v)
        elif k in ("--compile-seconds", "--max-seconds"):
            args[k[2:].replace("-", "_")] = float(v)
        else:
            raise SystemExit("gpu_check_torch.py: unknown option " + k)
    return args


def main(argv):
    if len(argv) >= 2 and argv[1] == "env":
        env()
        return 0
    if len(argv) >= 2 and argv[1] == "bench":
        return bench(parse(argv[2:]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
