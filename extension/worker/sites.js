// What a model's capture is bound to. A grant check reads the relay's copy of a tab's URL, which can lag the tab:
// what is then taken of the tab for the model (a screenshot, a skill injected) is taken only while Chrome's
// committed frames show the site that was checked. Errors name no site the caller was not given.
import { ErrorCode } from '../shared/protocol.js';
import { RelayError } from './relay.js';

// A grant is for a site: an origin, as webmcp_nb/link/grants.py `origin_of` writes it (`file://` for files). A
// URL of no site of its own (about:blank, srcdoc, data:) shows what the frame that made it put there.
function ownSite(url) {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'file:') return 'file://';
    if (['http:', 'https:', 'blob:'].includes(parsed.protocol) && parsed.origin !== 'null') return parsed.origin;
  } catch {
    // not a URL: no site
  }
  return null;
}

async function shownFrames(tabId) {
  const frames = (await chrome.webNavigation.getAllFrames({ tabId })) ?? [];
  return frames.filter((f) => f.documentLifecycle !== 'prerender' && f.documentLifecycle !== 'cached');
}

function leftSite(tabId, site, what) {
  return new RelayError(ErrorCode.NAVIGATED, `Tab ${tabId} no longer shows ${site}, the site that was checked: ${what}`, { tabId });
}

// The top frame's committed document, if it shows `site`; else NAVIGATED, saying `what` was not done.
export async function requireTop(tabId, site, what) {
  const top = (await shownFrames(tabId)).find((f) => f.frameId === 0);
  if (!top || ownSite(top.url) !== site) throw leftSite(tabId, site, what);
  return top.documentId;
}

// For a screenshot: the top frame must show `site`, and every frame a site in `sites` (a frame of no site of its
// own counts as its parent's), else PERMISSION_DENIED naming those sites (its page, which the caller may read,
// embeds them). Returns the top frame's document, which must be the same after the capture: a navigation that
// committed in between, even back to `site`, refuses the picture.
export async function requireSites(tabId, site, sites = []) {
  const frames = await shownFrames(tabId);
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  const top = byId.get(0);
  if (!top || ownSite(top.url) !== site) throw leftSite(tabId, site, 'no screenshot taken');
  const siteOf = (frame) => {
    for (let f = frame, depth = 0; f && depth < 64; f = byId.get(f.parentFrameId), depth++) {
      const own = ownSite(f.url);
      if (own) return own;
    }
    return site;
  };
  const allowed = new Set([site, ...sites]);
  const others = [...new Set(frames.map(siteOf))].filter((s) => !allowed.has(s)).sort().slice(0, 10);
  if (others.length) {
    throw new RelayError(ErrorCode.PERMISSION_DENIED, `Tab ${tabId} shows frames of ${others.join(', ')}, not granted for reading: no screenshot taken`, { tabId, sites: others });
  }
  return top.documentId;
}
