"""A stand-in for the Hugging Face hub on 127.0.0.1, serving a folder laid out like the hub.

It answers what ``hf_hub_download`` asks, and only that: ``HEAD`` then ``GET`` on
``/datasets/<owner>/<name>/resolve/<revision>/<path>``. A found file gets the headers the client
requires (``X-Repo-Commit`` with the pinned commit, ``ETag``, ``Content-Length``); a missing file,
repository or revision a 404 with the hub's ``X-Error-Code``. Files are read from
``root/<owner>/<name>/<path>`` (the mirror layout ``--data-dir`` takes), each repository at the one
revision it is registered with. Every request is recorded, so tests can check the client came here
(``huggingface_hub`` 1.x+ also asks once for ``/api/agent-harnesses``, best-effort telemetry: a 404).
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_RESOLVE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


@dataclass
class HubServer:
    root: Path
    revisions: dict[str, str]  # repository -> the commit it is served at
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    # request path -> body sent on GET instead of the file (HEAD still describes the file): a damaged transfer
    bodies: dict[str, bytes] = field(default_factory=dict)
    # repository -> (status, headers) every request for it gets instead: a gated repository refusing the client
    refused: dict[str, tuple[int, dict[str, str]]] = field(default_factory=dict)
    url: str = ""

    def __enter__(self) -> HubServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Shut down and close the port: later connections are refused."""
        if self.url:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()

    def resolve(self, path: str) -> tuple[int, dict[str, str], Path | None]:
        """Status, headers and file for a request path."""
        match = _RESOLVE.match(path.split("?", 1)[0])
        if match is None:
            return 404, {"X-Error-Code": "RepoNotFound"}, None
        repo, revision, file_path = match.groups()
        if repo in self.refused:
            return self.refused[repo][0], dict(self.refused[repo][1]), None
        if repo not in self.revisions:
            return 404, {"X-Error-Code": "RepoNotFound"}, None
        commit = self.revisions[repo]
        if revision != commit:
            return 404, {"X-Error-Code": "RevisionNotFound"}, None
        local = self.root / repo / file_path
        if ".." in file_path.split("/") or not local.is_file():
            return 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, None
        etag = hashlib.sha256(local.read_bytes()).hexdigest()
        headers = {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Content-Length": str(local.stat().st_size)}
        return 200, headers, local


def _handler(server: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so no kept-alive connection outlives stop()
        protocol_version = "HTTP/1.0"

        def _answer(self, send_body: bool) -> None:
            server.requests.append((self.command, self.path))
            status, headers, local = server.resolve(self.path)
            self.send_response(status)
            body = server.bodies.get(self.path.split("?", 1)[0]) if send_body and local is not None else None
            if body is not None:
                headers["Content-Length"] = str(len(body))
            for name, value in headers.items():
                self.send_header(name, value)
            if local is None:
                self.send_header("Content-Length", "0")
            self.end_headers()
            if body is not None:
                self.wfile.write(body)
            elif send_body and local is not None:
                with open(local, "rb") as f:
                    while chunk := f.read(1 << 16):
                        self.wfile.write(chunk)

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self._answer(send_body=False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(send_body=True)

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

    return Handler
