"""A real browser for the page tests: Debian's headless chromium, driven over the DevTools protocol on
a pipe (--remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4), so a test sees every
request the page makes, every console message and exception, the DOM as the browser built it, and
takes a screenshot of the whole page."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Loaded:
    requests: list[str]  # every URL the page asked for, itself included
    console: list[str]  # console messages, exceptions and the browser's log entries (CSP refusals ...)
    values: dict = field(default_factory=dict)  # each expression given -> its value in the loaded page


def load(page: Path, expressions: dict[str, str], screenshot: Path, width: int = 1280, timeout: float = 60) -> Loaded:
    """Open ``page`` in chromium, wait for its load event, evaluate each of ``expressions`` (name ->
    JavaScript) and save a screenshot of the whole page to ``screenshot``."""
    with tempfile.TemporaryDirectory(prefix="jvmbridge-chromium-") as profile:
        to_browser_read, to_browser = os.pipe()
        from_browser, from_browser_write = os.pipe()

        def wire() -> None:  # the child's fd 3 reads our messages, its fd 4 writes its own
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)

        process = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
             "--hide-scrollbars", "about:blank"],
            preexec_fn=wire, pass_fds=(3, 4, to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        devtools = _DevTools(to_browser, from_browser, time.monotonic() + timeout)
        try:
            target = devtools.call("Target.createTarget", url="about:blank")["targetId"]
            session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Network", "Runtime", "Log", "Page"):
                devtools.call(f"{domain}.enable", session=session)
            devtools.call("Emulation.setDeviceMetricsOverride", session=session, width=width, height=800,
                          deviceScaleFactor=1, mobile=False)
            devtools.call("Page.navigate", session=session, url=page.resolve().as_uri())
            devtools.wait_for("Page.loadEventFired")
            values = {name: devtools.call("Runtime.evaluate", session=session, expression=expression,
                                          returnByValue=True)["result"].get("value")
                      for name, expression in expressions.items()}
            height = devtools.call("Page.getLayoutMetrics", session=session)["cssContentSize"]["height"]
            devtools.call("Emulation.setDeviceMetricsOverride", session=session, width=width,
                          height=int(height) + 1, deviceScaleFactor=1, mobile=False)
            shot = devtools.call("Page.captureScreenshot", session=session, format="png")["data"]
            screenshot.write_bytes(base64.b64decode(shot))
            devtools.call("Browser.close")
        finally:
            os.close(to_browser)
            os.close(from_browser)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return Loaded(devtools.requests, devtools.console, values)


class _DevTools:
    def __init__(self, send_fd: int, receive_fd: int, deadline: float):
        self.send_fd, self.receive_fd, self.deadline = send_fd, receive_fd, deadline
        self.buffer, self.next_id = b"", 0
        self.events: list[dict] = []
        self.requests: list[str] = []
        self.console: list[str] = []

    def call(self, method: str, session: str | None = None, **params) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self.send_fd, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_for(self, method: str) -> dict:
        while True:
            seen = next((e for e in self.events if e.get("method") == method), None)
            if seen:
                return seen
            self._receive()

    def _receive(self) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > self.deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.receive_fd, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its end")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            self._note(message)
        return message

    def _note(self, event: dict) -> None:
        self.events.append(event)
        method, params = event["method"], event.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            self.console.append(f"console.{params['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                                      for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            self.console.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.console.append(f"{entry['source']} {entry['level']}: {entry['text']}")
