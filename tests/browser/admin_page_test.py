#!/usr/bin/env python3
"""The admin page in a real browser: Debian's Chromium, headless, driven
through Debian's ChromeDriver (the W3C WebDriver protocol, plain HTTP and
JSON: Python's standard library is the whole client).

Against mesh_admin_page_fixture (a Mesh with three backends for books:7000,
one for authors:7000 and calls to both), it checks that the page loads with
no console error; lists every endpoint of the running Mesh; shows an
endpoint made slow with a higher latency and fewer picks within seconds;
shows a failing endpoint ejected; and that a tap match typed into the page
shows matching live requests within 2 s, and no others. It keeps a
screenshot of the page in OUT_DIR.

  admin_page_test.py --fixture PATH --out OUT_DIR

Every wait is bounded. Exits 0 when every check passed, 1 otherwise.
"""
import argparse
import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# As the machine's notes say: no background fetches (the network is
# closed), a fresh profile, no sandbox as root.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1400,1800",
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{method} {path}: {e.code} {e.read()[:500]!r}")

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def start(self):
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": CHROMIUM_ARGS},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}}
        self.session = self.call("POST", "/session", caps, timeout=60)["sessionId"]

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        return self.s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def type(self, css, text):
        self.s("POST", f"/element/{self.find(css)}/value", {"text": text})

    def click(self, css):
        self.s("POST", f"/element/{self.find(css)}/click", {})

    def console(self):
        return self.s("POST", "/se/log", {"type": "browser"}) or []

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def quit(self):
        if self.session:
            try:
                self.call("DELETE", f"/session/{self.session}", timeout=10)
            except Exception:  # the browser may be gone already
                pass


def wait_for(condition, timeout, step=0.1):
    """Polls `condition` until it returns something truthy or `timeout`
    seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    value = condition()
    while not value and time.monotonic() < deadline:
        time.sleep(step)
        value = condition()
    return value


# The endpoints table of one destination's card, as the page shows it:
# {address: {column: text}}.
ENDPOINT_ROWS = """
const card = [...document.querySelectorAll('article.card')]
    .find(c => c.getAttribute('aria-label') === 'destination ' + arguments[0]);
if (!card) return null;
const table = card.querySelector('table');
const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent);
const out = {};
for (const tr of table.querySelectorAll('tbody tr')) {
  const cells = [...tr.children].map(td => td.textContent);
  const row = {};
  heads.forEach((h, i) => row[h] = cells[i]);
  out[cells[0]] = row;
}
return out;
"""


SPLIT_ROWS = """
const card = [...document.querySelectorAll('article.card')]
    .find(c => c.getAttribute('aria-label') === 'destination ' + arguments[0]);
if (!card) return null;
const head = [...card.querySelectorAll('h4')]
    .find(h => h.textContent === 'Traffic split');
if (!head) return null;
let table = head.nextElementSibling;
while (table && table.tagName !== 'TABLE') table = table.nextElementSibling;
if (!table) return null;
return [...table.querySelectorAll('tbody tr')]
    .map(tr => [...tr.children].map(td => td.textContent));
"""


def number(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError, AttributeError):
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            print(f"{program} is missing (Debian: chromium, chromium-driver; "
                  "scripts/install-deps.sh installs them)")
            return 1

    fixture = subprocess.Popen([args.fixture], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    driver_port = free_port()
    chromedriver = subprocess.Popen(
        [CHROMEDRIVER, f"--port={driver_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    browser = WebDriver(driver_port)

    def command(line):
        fixture.stdin.write(line + "\n")
        fixture.stdin.flush()
        return fixture.stdout.readline().strip()

    try:
        ready = json.loads(fixture.stdout.readline())
        url = f"http://{ready['admin']}/"
        books, authors = ready["books"], ready["authors"]
        print(f"admin page at {url}; books {books}; authors {authors}")
        if not wait_for(lambda: _up(browser), 20):
            check(False, "chromedriver started")
            return 1
        browser.start()
        browser.s("POST", "/url", {"url": url})

        # 1. Every endpoint of the running Mesh is listed.
        def listed():
            text = browser.js("return document.getElementById('destinations').textContent;")
            return all(a in text for a in books + authors) and text
        text = wait_for(listed, 10)
        check(bool(text), "the page lists every endpoint of both destinations")

        # The traffic split: each backend with its weight and share.
        split = wait_for(lambda: browser.js(SPLIT_ROWS, "library:7000"), 5)
        check(split is not None and
              sorted((r[0], r[1], r[2]) for r in split) ==
              [("authors:7000", "20", "20.0 %"), ("books:7000", "80", "80.0 %")],
              f"the traffic split shows each backend's weight and share ({split})")

        # 2. A slow endpoint: higher latency, fewer picks, within seconds.
        slow, fast = books[1], [books[0], books[2]]
        check(command(f"slow {slow} 60") == "ok", "backend made slow")
        began = time.monotonic()

        def slow_shown():
            rows = browser.js(ENDPOINT_ROWS, "books:7000") or {}
            if not all(a in rows for a in books):
                return None
            lat = {a: number(rows[a]["latency ms"]) for a in books}
            load = {a: number(rows[a]["load now"]) for a in books}
            if None in lat.values() or None in load.values():
                return None
            if (lat[slow] > 2 * max(lat[a] for a in fast) and
                    load[slow] < min(load[a] for a in fast)):
                return (lat, load)
            return None
        shown = wait_for(slow_shown, 12, step=0.25)
        check(bool(shown), "the slow endpoint shows a higher latency and "
              f"fewer picks (after {time.monotonic() - began:.1f} s: {shown})")

        # 3. A failing endpoint is shown ejected.
        failing = books[2]
        check(command(f"heal {slow}") == "ok", "the slow backend healed")
        check(command(f"fail {failing}") == "ok", "backend made to fail")

        def ejected_shown():
            rows = browser.js(ENDPOINT_ROWS, "books:7000") or {}
            row = rows.get(failing)
            return row and row.get("state", "").startswith("ejected (")
        check(bool(wait_for(ejected_shown, 15, step=0.2)),
              "the failing endpoint is shown ejected")
        browser.screenshot(os.path.join(args.out, "admin-page.png"))

        # 4. Live tap: a typed match shows its requests within 2 s, only
        # those.
        browser.type("#tap-path", "/authors.Directory/")
        clicked = time.monotonic()
        browser.click("#tap-start")

        def tap_rows():
            return browser.js(
                "return [...document.querySelectorAll('#tap-rows td.path')]"
                ".map(td => td.textContent);") or None
        paths = wait_for(tap_rows, 2, step=0.05)
        seen_after = time.monotonic() - clicked
        check(bool(paths) and seen_after <= 2.0,
              f"matching tap rows appear within 2 s ({seen_after:.2f} s, "
              f"{len(paths or [])} rows)")
        time.sleep(0.5)  # more rows come; none of them may be books'
        paths = tap_rows() or []
        check(paths and all(p.startswith("/authors.Directory/") for p in paths),
              f"the tap shows only matching requests ({len(paths)} rows, e.g. "
              f"{paths[:2]})")
        state = browser.js("return document.getElementById('tap-state').textContent;")
        check(state.startswith("watching"), f"the tap says what it watches: {state!r}")
        browser.screenshot(os.path.join(args.out, "admin-page-tap.png"))

        # 5. No console error, from the load on.
        errors = [e for e in browser.console() if e.get("level") == "SEVERE"]
        check(not errors, f"no console error ({errors[:3]})")
    finally:
        browser.quit()
        chromedriver.terminate()
        try:
            fixture.stdin.write("quit\n")
            fixture.stdin.flush()
        except BrokenPipeError:
            pass
        for p in (fixture, chromedriver):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    print("screenshots in " + args.out)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def _up(browser):
    try:
        return browser.call("GET", "/status", timeout=2).get("ready")
    except Exception:
        return False


if __name__ == "__main__":
    sys.exit(main())
