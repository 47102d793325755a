"""What this process may use of the machine: the one definition of how many cores it runs on."""

from __future__ import annotations

import os


def cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one (a container or `taskset`
    limit), else every core of the machine."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
