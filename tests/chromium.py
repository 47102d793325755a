"""The Chromium the browser tests drive, and `python -m tests.chromium`: make sure there is one.

Looked for in this order: $IRBOARD_CHROMIUM, Debian's /usr/bin/chromium (or `chromium` / `chromium-browser` on
PATH), then the browser `playwright install chromium` puts in Playwright's cache. When none is there, the command
installs Debian's package where apt-get can run (as root or through password-less sudo), else Playwright's own
browser, and otherwise stops with one line saying how to get one. `make test` runs it before the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

HOW = ("no Chromium for the browser tests: install one with `sudo apt-get install chromium` (Debian, Ubuntu) or "
       "`.venv/bin/python -m playwright install chromium`, or set IRBOARD_CHROMIUM to a Chromium binary")


def _playwright_chromium() -> str | None:
    """The browser in Playwright's own cache, if `playwright install chromium` has put one there."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        path = playwright.chromium.executable_path
    return path if path and os.access(path, os.X_OK) else None


def system_chromium(system: tuple[str, ...] = ("/usr/bin/chromium",)) -> str | None:
    """$IRBOARD_CHROMIUM when set (None if it does not run), else Debian's Chromium, or None."""
    chosen = os.environ.get("IRBOARD_CHROMIUM")
    candidates = (chosen,) if chosen else (*system, shutil.which("chromium"), shutil.which("chromium-browser"))
    return next((path for path in candidates if path and os.access(path, os.X_OK)), None)


def find_chromium() -> str | None:
    """A Chromium binary to launch (the system's first, then Playwright's own), or None when there is none.
    Starts Playwright: call it before a test session's own Playwright runs."""
    return system_chromium() or (None if os.environ.get("IRBOARD_CHROMIUM") else _playwright_chromium())


def _apt_prefix() -> list[str] | None:
    """How to run apt-get here: directly as root, through sudo without a password, or not at all."""
    if not shutil.which("apt-get"):
        return None
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    return None


def _install() -> None:
    """Try Debian's package, then Playwright's browser; quietly, since failing here is reported once below."""
    apt = _apt_prefix()
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if apt is not None:
        print("installing Chromium for the browser tests (apt-get install chromium)", file=sys.stderr)
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            if subprocess.run([*apt, *command], env=environment, capture_output=True).returncode != 0:
                break
        else:
            return
    print("installing Playwright's Chromium for the browser tests", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], capture_output=True, timeout=600)


def main() -> int:
    chosen = os.environ.get("IRBOARD_CHROMIUM")
    if chosen and not system_chromium():
        print(f"error: IRBOARD_CHROMIUM={chosen} is not an executable file; point it at Chromium or unset it",
              file=sys.stderr)
        return 1
    if find_chromium() is None:
        _install()
        if find_chromium() is None:
            print(f"error: {HOW}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
