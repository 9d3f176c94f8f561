"""Headless Chromium (Debian's `chromium`, `make -C grafana tools`) for the HTML report: the DOM of
a page after the browser loaded and laid it out (its load handlers run), and screenshots."""

import re
import shutil
import subprocess

CHROMIUM = shutil.which("chromium")
# The flags that work here: no sandbox (root), no GPU, nothing fetched but the file.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=10000",
]
MISSING = "no chromium on the PATH (make -C grafana tools installs Debian's chromium)"


def _run(args, profile, timeout=180):
    """Chromium with the flags and a fresh --user-data-dir (profile: a folder of its own)."""
    if not CHROMIUM:
        raise FileNotFoundError(MISSING)
    r = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout
    )
    if r.returncode != 0:
        raise RuntimeError(f"chromium exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def dom(path, profile, width=1600, height=1200):
    """The page's DOM as Chromium serializes it after load."""
    return _run([f"--window-size={width},{height}", "--dump-dom", f"file://{path}"], profile)


def screenshot(path, png, profile, width=1600, height=2400):
    _run([f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={png}", f"file://{path}"], profile)


def screenshot_page(path, png, profile, width=1600, max_height=16000):
    """The whole page as one PNG: a window max_height tall (headless Chromium shoots the window,
    not the page), cut below the page's last pixel that differs from its bottom-right corner (the
    page's background). Returns the height kept."""
    from PIL import Image, ImageChops

    screenshot(path, png, profile, width, max_height)
    with Image.open(png) as img:
        img = img.convert("RGB")
        bg = Image.new("RGB", img.size, img.getpixel((img.width - 1, img.height - 1)))
        box = ImageChops.difference(img, bg).getbbox()
        height = min(img.height, (box[3] if box else img.height) + 16)
        img.crop((0, 0, img.width, height)).save(png, optimize=True)
    return height


def report_panels(page):
    """[(state, rows, drawn or None, title)] of every panel of a cpi2.grafana.report page; drawn is
    what the page's load handler counted in a browser (None before one loaded it)."""
    out = []
    for m in re.finditer(r'<section class="panel"([^>]*)><h3[^>]*>([^<]*)</h3>', page):
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))
        drawn = attrs.get("data-drawn")
        out.append((attrs["data-state"], int(attrs["data-rows"]), None if drawn is None else int(drawn), m.group(2)))
    return out
