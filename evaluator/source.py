"""Where a result's run file was published: `provenance.source` = {repository, commit, path, license}.

A result made from a run file its authors published (`irboard evaluate --run … --source OWNER/NAME@COMMIT:PATH
--source-license SPDX`) names the GitHub repository, the full commit, the file's path at that commit and the SPDX
id of the licence the repository grants; the model page credits it with a link to the file at that commit.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evaluator.errors import closest_names

# SPDX ids (https://spdx.org/licenses/) of the licences run files are published under; one an id not listed here
# needs is added here.
SPDX_IDS = frozenset({
    "0BSD", "AFL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later", "Apache-2.0", "Artistic-2.0", "BSD-2-Clause",
    "BSD-3-Clause", "BSD-3-Clause-Clear", "BSL-1.0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0",
    "CC-BY-SA-3.0", "CC-BY-SA-4.0", "CC0-1.0", "CDLA-Permissive-2.0", "ECL-2.0", "EPL-1.0", "EPL-2.0", "EUPL-1.2",
    "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later", "ISC", "LGPL-2.1-only",
    "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "MIT", "MIT-0", "MPL-2.0", "ODC-By-1.0", "ODbL-1.0",
    "OFL-1.1", "PDDL-1.0", "PostgreSQL", "Python-2.0", "Unlicense", "UPL-1.0", "WTFPL", "Zlib",
})
REPOSITORY_PATTERN = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}"
_SPEC = re.compile(rf"(?P<repository>{REPOSITORY_PATTERN})@(?P<commit>[0-9a-f]{{40}}):(?P<path>.+)")
SPEC_FORM = "OWNER/NAME@COMMIT:PATH (the full 40-hex commit), e.g. castorini/rank_llm@97f5fc1…:retrieve_results/x.txt"


class Source(BaseModel):
    """A published run file: a GitHub repository, a full commit, the file's path there, the repository's licence."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    repository: str = Field(pattern=rf"^{REPOSITORY_PATTERN}$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    path: str = Field(min_length=1, max_length=500)
    license: str = Field(max_length=50)

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        parts = value.split("/")
        if value.startswith("/") or any(part in ("", ".", "..") for part in parts) or re.search(r"[\s\\\"'<>`]", value):
            raise ValueError(f"provenance.source.path {value!r} must be a relative path inside the repository, "
                             "without spaces, quotes, backslashes or '..'")
        return value

    @field_validator("license")
    @classmethod
    def _license(cls, value: str) -> str:
        if value not in SPDX_IDS:
            close = closest_names(value, sorted(SPDX_IDS), n=1) or [i for i in SPDX_IDS if i.lower() == value.lower()]
            hint = f"did you mean {close[0]}? " if close else ""
            raise ValueError(f"provenance.source.license {value!r} is not an SPDX licence id; {hint}write the id the "
                             "repository's licence has at https://spdx.org/licenses/ (e.g. Apache-2.0, MIT)")
        return value

    @property
    def blob_url(self) -> str:
        """The file at its commit on GitHub."""
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"

    @property
    def raw_url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{self.path}"

    def __str__(self) -> str:
        return f"{self.repository}@{self.commit}:{self.path}"


def parse_source(text: str, license: str) -> Source:
    """`OWNER/NAME@COMMIT:PATH` and an SPDX id as a Source (ValueError: one line naming what is wrong)."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"--source {text!r}: write {SPEC_FORM}")
    from pydantic import ValidationError

    try:
        return Source(**match.groupdict(), license=license)
    except ValidationError as error:
        raise ValueError(error.errors()[0]["msg"].removeprefix("Value error, ")) from None
