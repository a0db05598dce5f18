"""The machine a figure was measured on."""

from __future__ import annotations

import platform
import subprocess

# The instruction sets that set a CPU's speed on this work, as /proc/cpuinfo names them: hosts of
# one model name ("AMD EPYC", "Intel(R) Xeon(R) Processor") differ up to 3x by these.
TIERS = (
    ("avx512f", "avx512"),
    ("avx512_bf16", "bf16"),
    ("avx512_vnni", "vnni"),
    ("amx_tile", "amx"),
)


def cpu_model() -> str:
    """The CPU's model name, as lscpu prints it, and its instruction tier: "AMD EPYC (avx512,
    bf16, vnni)"."""
    name, flags = platform.processor() or "unknown", set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return name
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key == "Model name":
            name = value.strip()
        elif key == "Flags":
            flags = set(value.split())
    tier = [short for flag, short in TIERS if flag in flags] or ["avx2" if "avx2" in flags else "-"]
    return f"{name} ({', '.join(tier)})"
