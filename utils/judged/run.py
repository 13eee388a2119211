"""The child process the judge starts (in its sandbox) to run a student's code: it only computes.

`python -m utils.judged.run WORKDIR FD` reads, on stdin, one JSON line of settings and then one JSON line per
call; for each call it writes `WORKDIR/out/<id>.json` (+ tensors, `utils.judged.tensor_files`) and answers
`<id>` on file descriptor FD. Each answer also lists the code the student's code made at run time so far
(`utils.judged.run_time_code`), for review. Nothing here decides a grade: the judge, in another process that never
imports the student's code, compares what was written with its own float64 references. Whatever the
student's code does to this process can only change its own outputs.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

DTYPE_ARGUMENTS = ("float16", "bfloat16", "float32", "float64")  # torch dtypes a call may pass by name
FUSED_ATTENTION_OPS = ("scaled_dot_product", "_flash_attention", "_efficient_attention", "_cudnn_attention")
FUSED_ATTENTION_FUNCTIONS = [
    "torch.nn.functional:scaled_dot_product_attention",
    "torch._C._nn:scaled_dot_product_attention",
    "torch.nn.functional:multi_head_attention_forward",
]


def ban(names: list[str]) -> None:
    """Replace each "package.module:attribute" with a function that refuses, before the student's code loads
    (so an alias taken at import time is the refusing one too)."""
    from utils.grading import refuse

    for name in names:
        module_name, _, attribute = name.partition(":")
        with contextlib.suppress(ImportError, AttributeError):
            owner = importlib.import_module(module_name)
            if hasattr(owner, attribute):
                setattr(owner, attribute, refuse(name.replace(":", ".")))


def watcher(ban_fused: bool):
    """A dispatch mode that records the largest tensor produced and refuses fused attention operators."""
    from utils.grading import LargestTensor, refuse

    class Watch(LargestTensor):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if ban_fused and any(op in str(func) for op in FUSED_ATTENTION_OPS):
                refuse(str(func))()
            return super().__torch_dispatch__(func, types, args, kwargs)

    return Watch()


class Encoder:
    """Turns a call's result (tensors, tuples, lists, dicts with string keys, plain values) into JSON plus a
    dict of tensors (moved to the CPU)."""

    def __init__(self, prefix: str):
        self.prefix, self.tensors = prefix, {}

    def __call__(self, value):
        import torch

        if isinstance(value, torch.Tensor):
            key = f"{self.prefix}{len(self.tensors)}"
            self.tensors[key] = value.detach().to("cpu")
            return {"tensor": key, "requires_grad": bool(value.requires_grad)}
        if isinstance(value, tuple | list):
            return {"tuple": [self(v) for v in value]}
        if isinstance(value, dict) and all(isinstance(key, str) for key in value):
            return {"dict": {key: self(v) for key, v in value.items()}}
        if value is None or isinstance(value, bool | int | float | str):
            return {"value": value}
        return {"repr": type(value).__name__}


def resolve(module, target: str):
    value = module
    for part in target.split("."):
        value = getattr(value, part)
    return value


def run_call(module, request: dict, inputs: dict, settings: dict, guard) -> tuple[dict, dict]:
    """Run one call; return its JSON description and the tensors it produced. `guard`: the peak memory's
    (`utils.judged.peak_guard`)."""
    import torch

    import utils

    device = utils.device()
    args = []
    for i, arg in enumerate(request["args"]):
        if "tensor" in arg:
            tensor = inputs[arg["tensor"]].to(device)
            args.append(tensor.requires_grad_(True) if i in request.get("requires_grad", []) else tensor)
        elif arg.get("dtype") in DTYPE_ARGUMENTS:
            args.append(getattr(torch, arg["dtype"]))
        else:
            args.append(arg["value"])
    grad = inputs[request["grad"]].to(device) if request.get("grad") else None
    encode = Encoder("t")
    target = resolve(module, request["target"])
    watch = watcher(settings.get("ban_fused_attention", True))
    if device.type == "cuda":
        torch.cuda.synchronize()
        guard.reset_peak()
    baseline = torch.cuda.memory_allocated() if device.type == "cuda" else 0
    with guard.judged_call():
        start = time.perf_counter()
        with watch:
            result = target(*args)
            saved = None
            if grad is not None:
                output = result[0] if isinstance(result, tuple | list) else result
                if isinstance(output, torch.Tensor) and output.grad_fn is not None:
                    saved = [t for t in output.grad_fn.saved_tensors]
                if not isinstance(output, torch.Tensor) or not output.requires_grad:
                    raise AssertionError(
                        utils.bilingual(
                            "输出不可求导（没有 grad_fn）", "the output is not differentiable (no grad_fn)"
                        )
                    )
                output.backward(grad)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        peak = torch.cuda.max_memory_allocated() - baseline if device.type == "cuda" else None
        answer = {
            "ok": True,
            "result": encode(result),
            "seconds": seconds,
            "largest": {"numel": watch.numel, "shape": list(watch.shape), "bytes": watch.nbytes},
        }
    if peak is not None:
        answer["peak_memory_bytes"] = peak
    if grad is not None:
        answer["grads"] = [encode(args[i].grad) for i in request.get("requires_grad", [])]
        answer["saved"] = encode(saved) if saved is not None else None
    return answer, encode.tensors


def main(workdir: str, reply_fd: str) -> None:
    import utils  # noqa: F401  (decides between the GPU and Triton's interpreter before triton loads)
    from utils.checks.isolation import failure_record, load_student_module
    from utils.judged import peak_guard, run_time_code, tensor_files
    from utils.judged.student_module import MODULE_NAME

    work = Path(workdir)
    reply = os.fdopen(int(reply_fd), "w", buffering=1)
    settings = json.loads(sys.stdin.readline())
    fused = FUSED_ATTENTION_FUNCTIONS if settings.get("ban_fused_attention", True) else []
    ban([*fused, *settings.get("banned", [])])
    made_at_run_time = run_time_code.watch()  # before the student's module loads: it may run code as it does
    guard = peak_guard.PeakGuard()  # likewise: an alias it takes of a reset is the guarded one
    try:
        module, failure = load_student_module(work / f"{MODULE_NAME}.py"), None
    except BaseException as error:  # noqa: BLE001 (a broken module fails every call, with its message)
        module, failure = None, failure_record(error)
    for line in sys.stdin:
        request = json.loads(line)
        out = work / "out" / str(request["id"])
        if failure is not None:
            answer, tensors = failure, {}
        else:
            try:
                inputs = tensor_files.load(work / "in" / str(request["id"]))
                answer, tensors = run_call(module, request, inputs, settings, guard)
            except BaseException as error:  # noqa: BLE001 (SystemExit, KeyboardInterrupt too: the call failed)
                answer, tensors = failure_record(error), {}
        answer["run_time_code"] = list(made_at_run_time.seen)  # since the child started: its load too
        answer["memory_resets"] = guard.attempts  # during the judged calls so far, each one ignored
        sys.stdout.flush()
        tensor_files.save(tensors, out)
        out.with_suffix(".answer").write_text(json.dumps(answer), encoding="utf-8")
        reply.write(f"{request['id']}\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
