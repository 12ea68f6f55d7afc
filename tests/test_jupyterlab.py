"""JupyterLab smoke test in the real headless Chromium: the panel renders, and a click on Call updates it
(click → widget comm → kernel → library loop → page tool → widget update from the loop thread → browser)."""

from pathlib import Path

import pytest

playwright = pytest.importorskip("playwright.sync_api")

from lab_page import panel_in_jupyterlab  # noqa: E402 - needs playwright, checked above

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.timeout(240)
def test_the_panel_renders_in_jupyterlab_and_call_updates_it(tmp_path: Path):
    with panel_in_jupyterlab(tmp_path) as page:
        call = page.locator(".jupyter-widgets button", has_text="Call")
        try:
            call.wait_for(timeout=90_000)
        except playwright.Error:
            pytest.fail(f"the panel did not render; cell output: {page.locator('.jp-OutputArea').all_inner_texts()}")
        assert page.locator(".jupyter-widgets .widget-tab, .jupyter-widgets .lm-TabBar").count() > 0
        call.click()
        page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
