"""The machine a figure was measured on."""

from __future__ import annotations

import platform
import subprocess


def cpu_model() -> str:
    """The CPU's model name, as lscpu prints it."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"
