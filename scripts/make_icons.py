"""Makes the web app's icons (server/dos_server/web/static/icons/): the SVG the pages name, and
PNGs of the same drawing, rendered by Chromium through Playwright (the browser tests' own
tools: no imaging library, and the PNGs are the SVG itself, not a second drawing of it).

The outputs are committed, so the server needs no build step; run this again after changing
the drawing: ``.venv/bin/python scripts/make_icons.py``.

- ``icon.svg``, ``icon-192.png``, ``icon-512.png``: purpose "any", a rounded square.
- ``icon-maskable-192.png``, ``icon-maskable-512.png``: purpose "maskable", the background to
  the edges and the cards inside the safe zone (the middle circle, 80% across).
- ``apple-touch-icon.png`` (180 px): opaque and square, like the maskable one (iOS rounds the
  corners itself and fills transparency with black).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parent.parent / "server" / "dos_server" / "web" / "static" / "icons"
CHROMIUM = os.environ.get("DOS_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

# dos.css's light colours: --accent (the table), --red, --yellow, --yellow-fg.
TABLE, RED, YELLOW, INK = "#0b5cad", "#c8102e", "#f2c200", "#1d1d1f"
# A "2" (DOS is Spanish for two), drawn as a stroke so that no font is needed.
TWO = "M -34 -30 A 35 35 0 1 1 24 2 L -38 58 L 40 58"


def card(colour: str, number: str, transform: str) -> str:
    """A card centred on the origin, 190 x 280, white-edged, with an oval and a "2"."""
    return (f'<g transform="{transform}">'
            f'<rect x="-95" y="-140" width="190" height="280" rx="24" fill="{colour}" '
            'stroke="#fff" stroke-width="12"/>'
            '<ellipse rx="66" ry="108" fill="#fff" transform="rotate(20)"/>'
            f'<path d="{TWO}" fill="none" stroke="{number}" stroke-width="24" '
            'stroke-linecap="round" stroke-linejoin="round"/></g>')


def drawing(maskable: bool) -> str:
    """The icon at 512 x 512: two fanned cards on the table's blue."""
    corner = "0" if maskable else "112"
    scale = "0.74" if maskable else "0.88"  # the maskable's cards stay within 0.4 x 512 of the middle
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" width="512" height="512">'
            f'<rect width="512" height="512" rx="{corner}" fill="{TABLE}"/>'
            f'<g transform="translate(256 262) scale({scale})">'
            + card(RED, RED, "translate(-80 4) rotate(-14)")
            + card(YELLOW, INK, "translate(80 -4) rotate(12)")
            + "</g></svg>\n")


PNGS = {"icon-192.png": (192, False), "icon-512.png": (512, False),
        "icon-maskable-192.png": (192, True), "icon-maskable-512.png": (512, True),
        "apple-touch-icon.png": (180, True)}


def main() -> None:
    ICONS.mkdir(parents=True, exist_ok=True)
    (ICONS / "icon.svg").write_text(drawing(maskable=False))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--disable-gpu"])
        for name, (size, maskable) in PNGS.items():
            page = browser.new_page(viewport={"width": size, "height": size})
            svg = drawing(maskable).replace('width="512" height="512">',
                                            f'width="{size}" height="{size}">', 1)
            page.set_content(f'<body style="margin:0">{svg}</body>')
            page.screenshot(path=str(ICONS / name), omit_background=True)
            page.close()
            print(f"{name}: {size} x {size}")
        browser.close()
    print(f"icon.svg and the PNGs are in {ICONS}")


if __name__ == "__main__":
    main()
