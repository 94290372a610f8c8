"""Where a run ran: the hardware label (CPU, cores, memory, GPUs) and the software environment's digest.

The hardware label is what latencies are compared by: two cards measured on different labels are never
compared for latency. The environment digest (``Environment.digest``) is the SHA-256 over the Python
implementation and version, the operating system and architecture, the SDK version and every installed
Python distribution with its version (plus, when the method runs in Node, the version of the node that runs it:
``MT_EVAL_NODE``, else the one on PATH): two runs with the same digest ran on the same software.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import msgspec


class Environment(msgspec.Struct, kw_only=True):
    python: str
    os: str
    machine: str
    cpu_model: str
    cpu_count: int
    memory_gib: float | None
    hardware: str  # the hardware label: CPU, cores, memory and GPUs
    gpus: list[str] | None = None  # GPU models, [] when there is none; absent from older cards
    digest: str | None = None  # the software environment's SHA-256 (module docstring); absent from older cards


def environment(*, node: bool = False) -> Environment:
    """The environment of this process; ``node``: the method runs in Node, whose version is part of the digest."""
    cpu = cpu_model()
    count = os.cpu_count() or 1
    memory = memory_gib()
    gpus = gpu_models()
    return Environment(python=platform.python_version(), os=f"{platform.system()} {platform.release()}",
                       machine=platform.machine(), cpu_model=cpu, cpu_count=count, memory_gib=memory,
                       hardware=hardware_label(cpu, count, memory, gpus), gpus=gpus,
                       digest=environment_digest(node=node))


def hardware_label(cpu: str, cores: int, memory: float | None, gpus: list[str]) -> str:
    """``AMD EPYC ×2, 24 GiB, no GPU`` or ``… , GPU: NVIDIA A100 80GB ×2``."""
    label = f"{cpu} ×{cores}" + (f", {memory:g} GiB" if memory else "")
    if not gpus:
        return label + ", no GPU"
    counted: dict[str, int] = {}
    for gpu in gpus:
        counted[gpu] = counted.get(gpu, 0) + 1
    return label + ", GPU: " + ", ".join(name + (f" ×{n}" if n > 1 else "") for name, n in counted.items())


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def gpu_models() -> list[str]:
    """NVIDIA GPUs (``nvidia-smi``, else the driver's /proc files), then AMD GPUs the kernel lists in sysfs."""
    found = _nvidia_smi() or _nvidia_proc()
    return found + _amd_sysfs()


def _nvidia_smi() -> list[str]:
    program = shutil.which("nvidia-smi")
    if program is None:
        return []
    try:
        done = subprocess.run([program, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


def _nvidia_proc() -> list[str]:
    models = []
    for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        try:
            for line in info.read_text().splitlines():
                if line.startswith("Model:"):
                    models.append(line.split(":", 1)[1].strip())
        except OSError:
            continue
    return models


def _amd_sysfs() -> list[str]:
    models = []
    for device in sorted(Path("/sys/class/drm").glob("card[0-9]*/device")):
        try:
            if device.joinpath("vendor").read_text().strip() != "0x1002":
                continue
            name = device / "product_name"
            models.append(name.read_text().strip() if name.exists() else
                          f"AMD GPU {device.joinpath('device').read_text().strip()}")
        except OSError:
            continue
    return models


def environment_digest(*, node: bool = False) -> str:
    """SHA-256 over the software a run depends on (the module docstring)."""
    from mt_eval._version import __version__

    lines = [f"python {platform.python_implementation()} {platform.python_version()}",
             f"os {platform.system()} {platform.machine()}", f"mt-eval {__version__}"]
    distributions = sorted({f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()
                            if d.metadata["Name"]})
    lines += distributions
    if node:
        lines.append(f"node {node_version() or 'unknown'}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def node_version() -> str | None:
    """The version of the node that runs Node guests (``MT_EVAL_NODE``, else ``node`` on PATH), or None."""
    from mt_eval.bridge.runtimes import node_executable

    program = shutil.which(node_executable())
    if program is None:
        return None
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None
