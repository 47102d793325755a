"""tests/chromium.py: which browser the browser tests drive, and one line when there is none."""

import subprocess
import sys

from tests.chromium import HOW, system_chromium
from tests.conftest import ROOT


def test_irboard_chromium_chooses_the_browser(monkeypatch, tmp_path):
    browser = tmp_path / "my-chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    monkeypatch.setenv("IRBOARD_CHROMIUM", str(browser))
    assert system_chromium() == str(browser)
    browser.chmod(0o644)  # not runnable: no browser, rather than another one
    assert system_chromium() is None


def _run(*command, **env):
    return subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", **env})


def test_a_wrong_irboard_chromium_stops_make_test_with_one_line(tmp_path):
    done = _run("-m", "tests.chromium", IRBOARD_CHROMIUM=str(tmp_path / "missing"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: IRBOARD_CHROMIUM={tmp_path / 'missing'} is not an executable "
                                        "file; point it at Chromium or unset it"]


def test_browser_tests_without_a_browser_stop_at_once_saying_how_to_get_one(tmp_path):
    done = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/leaderboard/web/test_browser.py",
                IRBOARD_CHROMIUM=str(tmp_path / "missing"), HOME=str(tmp_path))
    assert done.returncode == 1
    assert f"error: {HOW}" in done.stdout + done.stderr
    assert "passed" not in done.stdout and "Traceback" not in done.stdout + done.stderr
