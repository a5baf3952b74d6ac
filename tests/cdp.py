"""A small DevTools-protocol (CDP) client for headless Chromium, for tests (the library never needs a browser).

Chromium is started with `--remote-debugging-pipe`: the protocol's JSON messages travel over two
inherited file descriptors (3: commands in, 4: replies out, each message ended by a NUL byte), so no
port is opened and nothing but the standard library is needed. Each `Browser` gets a fresh profile
directory and the flags that keep a headless browser off the network.

    with Browser.start() as browser:
        page = browser.page(width=800)
        page.goto(Path("report.html").resolve().as_uri())
        page.evaluate("document.title")
        page.screenshot(Path("shot.png"), full_page=True)
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    """The browser to use: $CHROMIUM if set, else the first of the usual names on PATH."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else shutil.which(explicit)
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class ProtocolError(RuntimeError):
    pass


class Browser:
    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int,
                 profile: str) -> None:  # fmt: skip
        self._process = process
        self._out = to_browser
        self._in = from_browser
        self._profile = profile
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    @classmethod
    def start(cls, executable: str | None = None, timeout: float = 30.0) -> Browser:
        executable = executable or find_chromium()
        if executable is None:
            raise FileNotFoundError("no Chromium found (install the distribution's `chromium`)")
        profile = tempfile.mkdtemp(prefix="learnability-chromium-")
        commands_r, commands_w = os.pipe()  # we write, the browser reads fd 3
        replies_r, replies_w = os.pipe()  # the browser writes fd 4, we read

        def wire() -> None:  # in the child: put the pipe ends at the fds the browser expects
            a, b = os.dup(commands_r), os.dup(replies_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(commands_r)
        os.close(replies_w)
        browser = cls(process, commands_w, replies_r, profile)
        browser._deadline = timeout
        browser.call("Browser.getVersion")
        return browser

    _deadline: float = 30.0

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:  # fmt: skip
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        end = time.monotonic() + self._deadline
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == ident:
                    if "error" in reply:
                        raise ProtocolError(f"{method}: {reply['error']}")
                    return dict(reply.get("result", {}))
                self.events.append(reply)
            if time.monotonic() > end or self._process.poll() is not None:
                raise ProtocolError(f"{method}: no reply from the browser")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise ProtocolError(f"{method}: the browser closed its pipe")
            self._buffer += chunk

    def page(self, width: int = 1400, height: int = 1000) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        page.call("Page.enable")
        page.call("Runtime.enable")
        page.resize(width, height)
        return page

    def close(self) -> None:
        with contextlib.suppress(ProtocolError, OSError):
            self.call("Browser.close")
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(10)
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.call(method, params, self.session)

    def resize(self, width: int, height: int) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def goto(self, url: str, timeout: float = 30.0) -> None:
        self.call("Page.navigate", {"url": url})
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            state = self.evaluate("document.readyState")
            pending = self.evaluate("Array.from(document.images).filter(i => !i.complete).length")
            if state == "complete" and pending == 0:
                return
            time.sleep(0.1)
        raise ProtocolError(f"{url} did not finish loading in {timeout} s")

    def evaluate(self, expression: str) -> Any:
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise ProtocolError(f"{expression[:60]}...: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(
        self, path: Path, full_page: bool = False, clip: dict[str, float] | None = None
    ) -> Path:
        params: dict[str, Any] = {
            "format": "png",
            "captureBeyondViewport": full_page or clip is not None,
        }
        if full_page:
            size = self.evaluate(
                "({w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight})"
            )
            params["clip"] = {"x": 0, "y": 0, "width": size["w"], "height": size["h"], "scale": 1}
        elif clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.call("Page.captureScreenshot", params)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


__all__ = ["Browser", "Page", "ProtocolError", "find_chromium"]
