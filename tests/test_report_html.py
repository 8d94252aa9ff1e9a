"""report.html: self-contained, clean in a real browser, readable on a phone.

Browser checks run Debian's `chromium` headless (installed by .ci/run; skipped where it is
absent). No Chrome DevTools Protocol: that needs a websocket client, and the only one on these
machines arrives as a transitive dependency of an optional extra. Instead each check uses what
the chromium binary itself records, and each detector is first shown to fire on a control page,
so that a silent detector cannot make a check pass:

- console: `--enable-logging=stderr --v=0` prints every console message as a `CONSOLE` line;
- network: `--log-net-log=FILE` records every URL request. Chromium's own background traffic
  (component updates, time and sign-in checks) carries the initiator "not an origin"; a request
  made by the page carries the page's origin (for file:// pages "null"). The test counts the
  latter;
- rendering: `--dump-dom` gives the DOM after load; `--screenshot` a PNG, read with matplotlib;
- phone width: headless windows are at least 500 px wide, so a probe page loads the report in a
  360 px iframe (`--allow-file-access-from-files` lets it read the frame) and writes the frame's
  scroll width into its own DOM, which `--dump-dom` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from arrivalbench import report
from test_report_golden import build_golden

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                    "(.ci/run installs Debian's chromium)")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("html")
    written = report.write(build_golden(root / "results.duckdb"), root / "out")
    return written.out / "report.html"


# -- static checks (no browser) ------------------------------------------------------------------


def test_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text  # nothing runs
    # no attribute, CSS url() or @import that points anywhere but the page itself or a CSV
    # file beside it
    targets = re.findall(r'(?:src|href|xlink:href)="([^"]*)"', text)
    targets += re.findall(r"url\(([^)]*)\)", text) + re.findall(r"@import\s+([^;]+)", text)
    for target in targets:
        assert target.startswith(("#", "data:")) or re.fullmatch(r"[a-z_]+\.csv", target), target
    # and no address at all, but the namespace names of SVG itself
    bare = re.sub(r'xmlns(?::xlink)?="http://www\.w3\.org/[^"]*"', "", text)
    assert not re.search(r"(?i)\b(?:https?|ftp|wss?):", bare)
    assert '<link rel="icon" href="data:,">' in text  # or the browser asks for /favicon.ico
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text


def test_figures_are_inline_scalable_svg_with_unique_ids(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    roots = re.findall(r"<svg\b[^>]*>", text)
    assert len(roots) == 4
    for root in roots:
        assert "viewBox=" in root and not re.search(r'\s(width|height)="', root)
    assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    ids = re.findall(r'\sid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "duplicate ids across inlined figures"


# -- chromium ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Visit:
    dom: str
    console: list[str]
    requests: list[str]  # URLs the page asked for


def visit(url: str, work: Path, *extra: str) -> Visit:
    assert CHROMIUM is not None
    work.mkdir(parents=True, exist_ok=True)
    netlog = work / "netlog.json"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={work / 'profile'}", "--enable-logging=stderr",
         "--v=0", f"--log-net-log={netlog}", *extra, url],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return Visit(done.stdout, console, page_requests(netlog))


def page_requests(netlog: Path) -> list[str]:
    """URLs of requests started on behalf of a web origin (not Chromium's own)."""
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "url" in params \
                and params.get("initiator", "not an origin") != "not an origin":
            urls.append(params["url"])
    return urls


PROBE = """<!DOCTYPE html><html><body>
<iframe id="f" src="{src}" style="width:360px;height:640px;border:0"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {{
  var d = this.contentDocument;
  document.body.setAttribute("data-probe", JSON.stringify(
    {{scroll: d.documentElement.scrollWidth, client: d.documentElement.clientWidth}}));
}});
</script></body></html>
"""


def phone_widths(target: Path, work: Path) -> dict[str, int]:
    """The scroll and client width of `target` in a 360 px wide frame."""
    probe = work / f"probe-{target.stem}.html"
    probe.write_text(PROBE.format(src=target.as_uri()), encoding="utf-8")
    seen = visit(probe.as_uri(), work / f"run-{target.stem}", "--allow-file-access-from-files",
                 "--dump-dom")
    found = re.search(r'data-probe="([^"]*)"', seen.dom)
    assert found, seen.dom[-1000:]
    widths: dict[str, int] = json.loads(html.unescape(found.group(1)))
    return widths


@needs_chromium
def test_detectors_fire_on_a_control_page(tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><body><p>control</p>'
                       '<img src="http://127.0.0.1:9/pixel.png">'
                       '<script>console.error("control-error")</script></body></html>',
                       encoding="utf-8")
    seen = visit(control.as_uri(), tmp_path / "control", "--dump-dom")
    assert any("control-error" in line for line in seen.console), seen.console
    assert "http://127.0.0.1:9/pixel.png" in seen.requests, seen.requests
    wide = tmp_path / "wide.html"
    wide.write_text('<!DOCTYPE html><html><body><div style="width:900px">x</div></body></html>',
                    encoding="utf-8")
    widths = phone_widths(wide, tmp_path)
    assert widths["scroll"] > widths["client"]


@needs_chromium
def test_report_opens_without_console_message_or_request(page: Path, tmp_path: Path) -> None:
    seen = visit(page.as_uri(), tmp_path, "--dump-dom")
    assert seen.console == []
    assert seen.requests == []
    assert "<h1>ArrivalBench report</h1>" in seen.dom
    assert seen.dom.count("<svg") == 4  # the figures parsed as SVG elements in the DOM
    assert 'id="summary"' in seen.dom and "m:unhinted" in seen.dom


@needs_chromium
def test_report_fits_a_phone_screen(page: Path, tmp_path: Path) -> None:
    widths = phone_widths(page, tmp_path)
    assert 300 <= widths["client"] <= 360
    assert widths["scroll"] <= widths["client"], "the page scrolls sideways on a phone"


@needs_chromium
def test_screenshot_is_not_blank(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    visit(page.as_uri(), tmp_path, "--hide-scrollbars", "--window-size=500,2600",
          f"--screenshot={shot}")
    pixels = matplotlib.image.imread(shot)[:, :, :3]
    assert pixels.shape[:2] == (2600, 500)
    ink = (pixels < 0.9).any(axis=2).mean()
    assert ink > 0.03, f"only {ink:.1%} of the screenshot is not white"
    # the figures were drawn: the PASS green (#009E73) of the composition bars is on screen
    green = np.all(np.abs(pixels - np.array([0x00, 0x9E, 0x73]) / 255) < 0.04, axis=2)
    assert green.sum() > 500
