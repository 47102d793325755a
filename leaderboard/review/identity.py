"""Model ids a reviewer should look at twice: a new id that looks like an existing one, and an organisation claim.

A pull request's summary (leaderboard/review/changes.py) lists, for every model id new to the results:

- a near duplicate of an existing id: the same after case and punctuation are dropped (`BM25`, `bm25.`, `bm_25`)
  or letters that look alike are folded (`brn25`), within a small edit distance of it (`bm26`), holding it whole
  (`bm25-official`), or the same name under another organisation (`irboard/bm25` beside `bm25`, `org-b/e5` beside `org-a/e5`);
- an organisation claim: `org/name` claims `org`. The claim is matched when `model.url` points into that
  organisation's own space, https://huggingface.co/org/… or https://github.com/org/… (case aside); any other
  claim is flagged, and a maintainer approves it by approving the pull request, having checked that the submitter
  speaks for `org` (docs: CONTRIBUTING.md, "What reviewers look at").

Nothing here rejects a file: ids are the submitter's to choose, and look-alikes can be honest (`bm25-k1-1.5-b-0.75`
beside `bm25`). The flags make a look-alike visible where it is reviewed.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

ORGANISATION_HOSTS = ("huggingface.co", "github.com")
_PUNCTUATION = re.compile(r"[^a-z0-9]")
MIN_CONTAINED = 3  # an existing name shorter than this is not searched for inside new ones


# letters that read alike in a proportional font, folded to one spelling
_CONFUSABLE = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("i", "l"))


def normalised(name: str) -> str:
    """Lower case, letters and digits only: `BM-25.` -> `bm25`."""
    return _PUNCTUATION.sub("", name.lower())


def folded(name: str) -> str:
    """`normalised`, with letters that look alike folded: `brn25` -> `bm25`, `l1ama` -> `llama`."""
    text = normalised(name)
    for look, same in _CONFUSABLE:
        text = text.replace(look, same)
    return text


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions (optimal string alignment)."""
    previous2, previous = None, list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if previous2 is not None and i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def _split(model_id: str) -> tuple[str, str]:
    org, _, name = model_id.rpartition("/")
    return org, name


def _allowed_distance(length: int) -> int:
    return 0 if length < 3 else 1 if length < 6 else 2


def look_alike(new_id: str, existing_id: str) -> str | None:
    """Why `new_id` may be mistaken for `existing_id` (None: it would not)."""
    if new_id == existing_id:
        return None
    new_org, new_name = _split(new_id)
    old_org, old_name = _split(existing_id)
    whole_new, whole_old = normalised(new_id), normalised(existing_id)
    if whole_new == whole_old:
        return "the same id but for case and punctuation"
    name_new, name_old = normalised(new_name), normalised(old_name)
    if name_new == name_old and normalised(new_org) != normalised(old_org):
        return "the same name under another organisation"
    if folded(new_id) == folded(existing_id):
        return "the same id once letters that look alike are folded (rn/m, vv/w, cl/d, 0/o, 1/i/l)"
    distance = edit_distance(name_new, name_old)
    if new_org.lower() == old_org.lower() or not old_org or not new_org:
        if 0 < distance <= _allowed_distance(min(len(name_new), len(name_old))):
            return f"{distance} edit{'s' if distance > 1 else ''} away"
        if len(name_old) >= MIN_CONTAINED and name_old in name_new:
            return "holds it whole"
    return None


def organisation_claim(model_id: str, url: str) -> str | None:
    """Why the organisation `model_id` names is not shown to be the submitter's (None: no organisation, or `url`
    points into its space on huggingface.co or github.com)."""
    org, _ = _split(model_id)
    if not org:
        return None
    parts = urlsplit(url) if url else None
    if parts is not None and parts.scheme == "https" and parts.hostname in ORGANISATION_HOSTS:
        first = parts.path.strip("/").split("/")[0]
        if first.lower() == org.lower():
            return None
    where = " or ".join(f"https://{host}/{org}/" for host in ORGANISATION_HOSTS)
    return f"claims the organisation {org!r} but model.url is not under {where}: a maintainer approves the claim"


def identity_flags(new_models: dict[str, str], existing_ids: set[str]) -> list[str]:
    """One line per flag for the model ids in `new_models` (id -> model.url) that are not in `existing_ids`."""
    flags = []
    for model_id, url in sorted(new_models.items()):
        if model_id in existing_ids:
            continue
        for other in sorted(existing_ids):
            if (why := look_alike(model_id, other)) is not None:
                flags.append(f"{model_id!r} looks like {other!r} ({why})")
        if (why := organisation_claim(model_id, url)) is not None:
            flags.append(f"{model_id!r} {why}")
    return flags
