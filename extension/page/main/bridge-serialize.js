// MAIN world, document_start, first of three bridge files. Turns any value a page tool returns into
// JSON text without throwing: Date → ISO string, Map → object (or [key, value] pairs), Set → array,
// BigInt → decimal string, Error → {name, message}, cycles → "[Circular]", throwing getters →
// "[Thrown: …]", DOM nodes → a short description; undefined and functions are dropped as JSON does.
// It hands `toText` to bridge.js through a slot that bridge.js deletes before any page script runs.
(() => {
  'use strict';
  const MAX_DEPTH = 64;

  function describeNode(node) {
    if (node.nodeType !== 1) return `[${node.nodeName}]`;
    const id = node.id ? `#${node.id}` : '';
    return `[<${node.localName}${id}>]`;
  }

  function plainMapKeys(map) {
    for (const key of map.keys()) if (typeof key !== 'string' && typeof key !== 'number') return false;
    return true;
  }

  // The slow path: a JSON-safe copy, guarding every property read and every cycle.
  function safeCopy(value, ancestors, depth) {
    switch (typeof value) {
      case 'bigint': return value.toString();
      case 'function': case 'symbol': case 'undefined': return undefined;
      case 'number': return Number.isFinite(value) ? value : null;
      case 'object': break;
      default: return value;
    }
    if (value === null) return null;
    if (ancestors.has(value)) return '[Circular]';
    if (depth > MAX_DEPTH) return '[Too deep]';
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (value instanceof Error) return { name: value.name, message: value.message };
    if (typeof Node === 'function' && value instanceof Node) return describeNode(value);
    if (typeof value.toJSON === 'function' && !(value instanceof Map) && !(value instanceof Set)) {
      try { return safeCopy(value.toJSON(), ancestors, depth + 1); } catch (e) { return `[Thrown: ${e}]`; }
    }
    ancestors.add(value);
    try {
      if (value instanceof Map) {
        if (plainMapKeys(value)) {
          const out = {};
          for (const [k, v] of value) out[k] = safeCopy(v, ancestors, depth + 1);
          return out;
        }
        return Array.from(value, ([k, v]) => [safeCopy(k, ancestors, depth + 1), safeCopy(v, ancestors, depth + 1)]);
      }
      if (value instanceof Set || ArrayBuffer.isView(value)) {
        return Array.from(value, (v) => safeCopy(v, ancestors, depth + 1) ?? null);
      }
      if (Array.isArray(value)) return value.map((v) => safeCopy(v, ancestors, depth + 1) ?? null);
      const out = {};
      for (const key of Object.keys(value)) {
        let v;
        try { v = value[key]; } catch (e) { out[key] = `[Thrown: ${e}]`; continue; }
        const copy = safeCopy(v, ancestors, depth + 1);
        if (copy !== undefined) out[key] = copy;
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  }

  // The fast path is native JSON.stringify with a replacer for the types JSON gets wrong;
  // cycles, throwing getters and too-deep values make it throw, and then the slow path runs.
  function replacer(_key, value) {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Map || value instanceof Set || value instanceof Error) return safeCopy(value, new Set(), 0);
    if (typeof Node === 'function' && value instanceof Node) return describeNode(value);
    return value;
  }

  function toText(value) {
    if (typeof value === 'string') return value;
    try {
      const text = JSON.stringify(value, replacer);
      if (text !== undefined) return text;
    } catch (_) { /* fall through to the guarded copy */ }
    try {
      return JSON.stringify(safeCopy(value, new Set(), 0) ?? null);
    } catch (error) { // a Proxy whose traps throw, and the like
      return JSON.stringify(`[Unserializable: ${String(error?.message ?? error)}]`);
    }
  }

  const slot = (window.__webmcpNb ??= {});
  slot.toText = toText;
})();
