// What the side panel knows of tabs: each tab as the worker's hub last described it (url, title, tools,
// skills), and which tab the panel shows — the one named by `?tab=` (pinned), else the active tab of the
// panel's window, followed as it changes.

export const tabs = new Map(); // tab id → the hub's tab info
export const shown = {
  tabId: null,
  pinned: false,
  windowId: null,
  chromeTab: null, // chrome.tabs.Tab of the shown tab: its title and URL while the hub knows nothing of it
};

export const currentTab = () => tabs.get(shown.tabId) ?? null;
export const onCurrentTab = (event) => event.tab_id === null || event.tab_id === undefined || event.tab_id === shown.tabId;

// Finds the tab to show and follows it: `switched()` after the panel moved to another tab, `updated()` when
// Chrome says the shown tab's title or URL changed.
export async function followActiveTab({ switched, updated }) {
  const pinned = Number(new URLSearchParams(location.search).get('tab'));
  if (Number.isInteger(pinned) && pinned > 0) {
    shown.tabId = pinned;
    shown.pinned = true;
  } else {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    shown.tabId = tab?.id ?? null;
    shown.windowId = tab?.windowId ?? null;
    shown.chromeTab = tab ?? null;
    chrome.tabs.onActivated.addListener(async ({ tabId, windowId }) => {
      if (tabId === shown.tabId || (shown.windowId !== null && windowId !== shown.windowId)) return;
      shown.tabId = tabId;
      shown.chromeTab = await chrome.tabs.get(tabId).catch(() => null);
      switched();
    });
  }
  chrome.tabs.onUpdated.addListener((tabId, _change, tab) => {
    if (tabId !== shown.tabId) return;
    shown.chromeTab = tab;
    updated();
  });
  if (shown.tabId !== null && !shown.chromeTab) shown.chromeTab = await chrome.tabs.get(shown.tabId).catch(() => null);
}
