"""JupyterLab smoke test in the real headless Chromium: the panel renders, and a click on Call updates it
(click → widget comm → kernel → library loop → page tool → widget update from the loop thread → browser); nothing
in it runs past the output area, wide or narrow, and no picker cuts its choice short; and its log keeps the newest
event in view as events pour in, unless the reader scrolled up, whose place it keeps."""

from pathlib import Path

import pytest
from eventually import eventually

playwright = pytest.importorskip("playwright.sync_api")

from lab_page import PANEL_CELL, panel_in_jupyterlab, run_cell  # noqa: E402 - needs playwright, checked above

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTES = """
with wm.Session(browser, evidence="off") as notes:
    for i in range({start}, {end}):
        notes.note(f"note {{i}}")
"""

CUT_OFF = """() => {
  // Every element of the output that runs past the box that clips it (its nearest ancestor that does not let
  // overflow show): a border or text cut off at the right.
  const out = document.querySelector('.jp-OutputArea-output');
  const cut = [];
  for (const el of out.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (!el.getClientRects().length || box.width === 0) continue;
    let clip = el.parentElement;
    while (clip !== out && getComputedStyle(clip).overflowX === 'visible') clip = clip.parentElement;
    const edge = clip.getBoundingClientRect().left + clip.clientLeft + clip.clientWidth;
    if (box.right > edge + 0.5) cut.push(`${el.localName}.${el.className}: ${Math.round(box.right - edge)} px`);
  }
  return cut;
}"""

ASK_BEFORE = """() => {
  // The chat's "ask before" picker: the width its chosen label needs, and the width it has for it.
  const select = [...document.querySelectorAll('.jupyter-widgets select')]
    .find((s) => s.selectedIndex >= 0 && s.options[s.selectedIndex].text.startsWith('medium-'));
  const style = getComputedStyle(select);
  const probe = document.createElement('span');
  probe.style.font = style.font;
  probe.style.whiteSpace = 'pre';
  probe.textContent = select.options[select.selectedIndex].text;
  document.body.append(probe);
  const need = probe.getBoundingClientRect().width;
  probe.remove();
  return [need, select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)];
}"""

TOP_LINE = """(log) => {
  // The first log line the reader sees at the top of the log's box, and where it is.
  const top = log.getBoundingClientRect().top;
  const lines = [...log.querySelectorAll('.widget-html-content')];
  const line = lines.find((l) => l.getBoundingClientRect().bottom > top + 4);
  return [line.textContent, line.getBoundingClientRect().top];
}"""


@pytest.mark.timeout(300)
def test_the_panel_renders_in_jupyterlab_and_call_updates_it(tmp_path: Path):
    cells = (PANEL_CELL, NOTES.format(start=0, end=40), NOTES.format(start=40, end=60))
    with panel_in_jupyterlab(tmp_path, cells=cells) as page:
        call = page.locator(".jupyter-widgets button", has_text="Call")
        try:
            call.wait_for(timeout=90_000)
        except playwright.Error:
            pytest.fail(f"the panel did not render; cell output: {page.locator('.jp-OutputArea').all_inner_texts()}")
        assert page.locator(".jupyter-widgets .widget-tab, .jupyter-widgets .lm-TabBar").count() > 0
        call.click()
        page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
        assert page.evaluate(CUT_OFF) == []
        page.locator(".jupyter-widgets .lm-TabBar-tab", has_text="Chat").click()
        need, room = page.evaluate(ASK_BEFORE)  # a wide output: the row's four fields share its width
        assert need <= room, f"'medium- and high-risk tools' needs {need:.0f} px and has {room:.0f}"

        page.locator(".jupyter-widgets .lm-TabBar-tab", has_text="Log").click()
        run_cell(page, 1)
        line = lambda text: page.locator(".jupyter-widgets .widget-html-content", has_text=text)  # noqa: E731
        playwright.expect(line("note 39")).to_be_in_viewport(timeout=30_000)  # the newest, without scrolling
        log = page.locator(".jupyter-widgets.widget-box", has=line("note 39")).filter(has_not=page.locator("select"))
        log = log.first
        log.evaluate("(box) => { box.scrollTop = -150; }")  # the reader scrolls up to read
        read, where = log.evaluate(TOP_LINE)
        run_cell(page, 2)
        line("note 59").wait_for(state="attached", timeout=30_000)
        stays = lambda: (now := log.evaluate(TOP_LINE))[0] == read and abs(now[1] - where) < 1  # noqa: E731
        eventually(stays, 10, f"{read!r} to stay where the reader left it (scroll offsets are whole pixels)")
        playwright.expect(line("note 59")).not_to_be_in_viewport()
        log.evaluate("(box) => { box.scrollTop = 0; }")  # back at the bottom: the newest is in view
        playwright.expect(line("note 59")).to_be_in_viewport()

        page.set_viewport_size({"width": 900, "height": 1000})  # a narrow output area
        page.locator(".jupyter-widgets .lm-TabBar-tab", has_text="Tools").click()
        eventually(lambda: page.evaluate(CUT_OFF) == [], 10, "nothing cut off at the right in a narrow output")
