"""Fixtures for the leaderboard tests: the synthetic results, a built site, an HTTP server, Chromium settings."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.chromium import system_chromium

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ROOT / "tests" / "data" / "make_synthetic_results.py"
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def _load_synthetic():
    spec = importlib.util.spec_from_file_location("make_synthetic_results", SYNTHETIC)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


synthetic = _load_synthetic()


@pytest.fixture(scope="session")
def synth():
    """tests/data/make_synthetic_results.py as a module (datasets, models, golden_lookup, result_dict)."""
    return synthetic


@pytest.fixture(scope="session")
def golden_results() -> Path:
    return synthetic.GOLDEN_RESULTS


@pytest.fixture
def results_copy(tmp_path) -> Path:
    """A writable copy of the synthetic results, for tests that break or add files."""
    target = tmp_path / "results"
    shutil.copytree(synthetic.GOLDEN_RESULTS, target)
    return target


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    from leaderboard.web.build import build_site

    out = tmp_path_factory.mktemp("site") / "_site"
    build_site(synthetic.GOLDEN_RESULTS, out, strict=True, is_verified=synthetic.golden_verification,
               lookup=synthetic.golden_lookup)
    return out


@pytest.fixture(scope="session")
def board_200x30(tmp_path_factory):
    """A synthetic board of 200 models x 30 datasets (10 queries each; about one model in ten misses a few
    datasets, one in ten is not verified), built once per session: (site folder, the Leaderboard the build made)."""
    import zlib

    from leaderboard.web import build

    root = tmp_path_factory.mktemp("board200x30")
    synthetic.write_scaled_results(root / "results", 200, 30, 10, depth=5)
    made, original = [], build.build_leaderboard
    with pytest.MonkeyPatch.context() as patch:  # keep the board the build makes (the oracle of its numbers)
        patch.setattr(build, "build_leaderboard", lambda *args, **kwargs: made.append(
            original(*args, **kwargs)) or made[-1])
        build.build_site(root / "results", root / "_site",
                         is_verified=synthetic.VerifiedWhen(lambda r: zlib.crc32(r.model.id.encode()) % 10 != 0),
                         lookup=synthetic.scaled_lookup)
    return root / "_site", made[0]


@contextmanager
def served(site: Path):
    """`site` served over real HTTP on 127.0.0.1 (the project's own server) while the block runs: its URL."""
    from leaderboard.web.build import make_server

    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def repository_site(tmp_path_factory) -> Path:
    """The repository's own board: results/ built with each result re-scored against ../shared/data."""
    from leaderboard.submissions.verify import verifier
    from leaderboard.web.build import build_site
    from tests.conftest import SHARED

    out = tmp_path_factory.mktemp("repository") / "_site"
    build_site(ROOT / "results", out, is_verified=verifier({}, SHARED / "data"))
    return out


@pytest.fixture(scope="session")
def site_url(built_site):
    """The built site served over real HTTP on 127.0.0.1."""
    with served(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's chromium (or $IRBOARD_CHROMIUM), else Playwright's own, headless (see design/browser-tests.md)."""
    executable = system_chromium()
    return {**browser_type_launch_args, **({"executable_path": executable} if executable else {}),
            "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def watch(page):
    """Collect console errors, uncaught exceptions and dialogs (dismissed) of `page`; returns the list."""
    problems = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))

    def on_dialog(dialog):
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return problems


@pytest.fixture
def watched(page):
    """The page, failing the test on console errors, uncaught exceptions or any dialog (alert)."""
    problems = watch(page)
    yield page
    assert problems == []


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The files whose text is parsed (evaluator.result.parse_result_text's `source`), in order."""
    import evaluator.result

    sources = []
    parse = evaluator.result.parse_result_text

    def counted(text, source="<result>", *args, **kwargs):
        sources.append(source)
        return parse(text, source, *args, **kwargs)

    monkeypatch.setattr(evaluator.result, "parse_result_text", counted)
    return sources
