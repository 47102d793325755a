"""The Touché board (the repository's published runs) with a second judgment set, made by a sealed round's pool
(tests/data/touche_pool_set.py, holes graded by a test rule): its dataset page switches between the official and the
post-hoc set by plain links, in Chromium, and each address keeps its choice; a rebuild from the caches gives the same
pages; the downloads name the set."""

import json
import shutil
import sys

import pytest
from playwright.sync_api import Page, expect

from leaderboard.cli import main
from tests.conftest import OFFICIAL, ROOT, SHARED
from tests.leaderboard.conftest import served

sys.path.insert(0, str(ROOT / "tests" / "data"))
import touche_pool_set as touche  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("touche")
    files = touche.touche_results(ROOT)
    for path in files:
        (tmp / "results" / path.parent.name).mkdir(parents=True)
        shutil.copy(path, tmp / "results" / path.parent.name / path.name)
    touche.write_set(tmp / "judgments", touche.pooled_qrels(files, OFFICIAL / "qrels" / touche.QRELS))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRBOARD_JUDGMENTS", str(tmp / "judgments"))
        patch.setenv("IRBOARD_CACHE", str(tmp / "cache"))
        for out in ("_site", "again"):
            assert main(["build", "--results", str(tmp / "results"), "--out", str(tmp / out),
                         "--data-dir", str(SHARED / "data")]) == 0
    page = f"datasets/{touche.SLUG}~{touche.NAME}.html"
    assert (tmp / "_site" / page).read_text() == (tmp / "again" / page).read_text()
    with served(tmp / "_site") as url:
        yield url, tmp / "_site"


def test_the_dataset_page_switches_judgment_sets(page: Page, site):
    url, folder = site
    shown = json.loads((folder / "downloads" / "datasets" / f"{touche.SLUG}~{touche.NAME}.json").read_text())
    official = json.loads((folder / "downloads" / "datasets" / f"{touche.SLUG}.json").read_text())
    assert shown["judgment_set"]["name"] == touche.NAME and official["judgment_set"]["name"] == "official"
    first = {row["model_id"]: row["nDCG@10"] for row in shown["rows"]}
    page.goto(f"{url}/datasets/{touche.SLUG}.html")
    switcher = page.locator("#judgment-sets")
    expect(switcher.locator("[aria-current=page]")).to_have_text("official")
    switcher.get_by_role("link", name=touche.NAME).click()
    page.wait_for_url(f"**/datasets/{touche.SLUG}~{touche.NAME}.html")
    expect(page.locator("#judgment-sets [aria-current=page]")).to_have_text(touche.NAME)
    top = page.locator("#scores tbody tr").first
    model = top.get_attribute("data-id")
    assert model == max(first, key=first.get)
    expect(top.locator("td.num").first).to_contain_text(f"{100 * first[model]:.2f}")
    expect(page.locator("#judgments")).to_contain_text("Judged@10 of the shown models: 1.00")
    expect(switcher.get_by_role("link", name="official")).to_have_attribute("href", f"../datasets/{touche.SLUG}.html")
