// The top page's own tool, and an iframe of another origin (localhost, same port) with tools of its own: every
// view must say those come from the frame's origin, not the page's.
document.modelContext.registerTool({
  name: 'hostTool',
  description: "The page's own tool.",
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => 'host',
});
const frame = document.createElement('iframe');
frame.allow = 'tools'; // native WebMCP needs the permissions policy in a cross-origin frame
frame.src = `http://localhost:${location.port}/t/cross-frame-inner.html`;
document.body.append(frame);
