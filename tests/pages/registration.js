// Exercises registerTool's contract from the page itself; the same checks hold for native WebMCP and the
// extension's polyfill. `contract` reports what each attempt did.
const mc = document.modelContext;
let changes = 0;
mc.addEventListener('toolchange', () => { changes += 1; });
const outcome = (promise) => promise.then(() => 'ok', (e) => e.name);
const noop = () => 'ok';

mc.registerTool({
  name: 'contract', description: 'Runs registration edge cases', inputSchema: { type: 'object', properties: {} },
  async execute() {
    const controller = new AbortController();
    const result = {
      first: await outcome(mc.registerTool({ name: 'temp', description: 't', execute: noop }, { signal: controller.signal })),
      duplicate: await outcome(mc.registerTool({ name: 'temp', description: 't', execute: noop })),
      empty: await outcome(mc.registerTool({ name: '', description: 't', execute: noop })),
      spaces: await outcome(mc.registerTool({ name: 'has space', description: 't', execute: noop })),
      tooLong: await outcome(mc.registerTool({ name: 'x'.repeat(129), description: 't', execute: noop })),
    };
    result.listedBefore = (await mc.getTools()).some((t) => t.name === 'temp');
    const before = changes;
    controller.abort();
    await new Promise((r) => setTimeout(r, 0));
    result.listedAfter = (await mc.getTools()).some((t) => t.name === 'temp');
    result.changeOnAbort = changes > before;
    result.preAborted = await outcome(mc.registerTool({ name: 'never', description: 't', execute: noop }, { signal: AbortSignal.abort() }));
    result.neverListed = !(await mc.getTools()).some((t) => t.name === 'never');
    // The early-draft alias throws at once on a duplicate, as Chrome 146-149 did.
    navigator.modelContext.registerTool({ name: 'drafted', description: 't', execute: noop });
    try {
      navigator.modelContext.registerTool({ name: 'drafted', description: 't', execute: noop });
      result.draftDuplicate = 'ok';
    } catch (e) {
      result.draftDuplicate = e.name;
    }
    navigator.modelContext.unregisterTool('drafted');
    return result;
  },
});
