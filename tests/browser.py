"""A real browser for the tests that look at the served pages: Debian's ``chromium`` and
``chromium-driver`` driven by Selenium (a dev dependency). The packages are installed
with apt-get when they are missing (``make test`` runs as root on CI, as the README's
set-up does); without them the test fails — it never skips."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

PACKAGES = ("chromium", "chromium-driver", "fonts-wqy-microhei")
"""The browser, its driver, and a font with the Chinese characters (the pages read in
Chinese too)."""
FONT = os.environ.get("SHENGJI_TEST_FONT", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
"""Where ``fonts-wqy-microhei`` puts the font (a test of the install names its own)."""


def _found() -> tuple[str, str] | None:
    browser = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None or not os.path.exists(FONT):
        return None
    return browser, driver


def ensure_chromium() -> tuple[str, str]:
    """The paths of chromium and chromedriver, installed with apt-get if missing.

    Several test workers may need them at once on a fresh machine: one installs under a
    file lock while the others wait for it and then find them (two apt-gets at once would
    fail on dpkg's own lock); apt-get also waits for a dpkg lock someone else holds."""
    found = _found()
    if found is None:
        lock_path = os.path.join(tempfile.gettempdir(), "shengji-tests-chromium.lock")
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = _found()
            if found is None:
                _install()
                found = _found()
    assert found is not None, (
        "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"
    )
    return found


def _install() -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    wait = ["-o", "DPkg::Lock::Timeout=600"]
    for command in (
        ["apt-get", *wait, "update", "-qq"],
        ["apt-get", *wait, "install", "-y", *PACKAGES],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr[-2000:]}"


@contextmanager
def chromium(width: int = 1280, height: int = 900, lang: str = "en") -> Iterator[webdriver.Chrome]:
    """A headless Chromium (quit on exit)."""
    browser, driver_path = ensure_chromium()
    options = Options()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
        f"--lang={lang}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
