// MAIN world, document_start, second of three bridge files. When the browser has no WebMCP, installs a
// spec-shaped `document.modelContext` (registerTool with AbortSignal, getTools, executeTool, toolchange)
// that also lists and fills declarative `<form toolname>` tools. Whenever `navigator.modelContext` is
// missing, adds the early-draft alias on top of `document.modelContext` (native or polyfill):
// registerTool / unregisterTool / provideContext / clearContext. Both are configurable, so a native
// implementation can take over.
(() => {
  'use strict';
  if (!window.isSecureContext) return;
  const slot = window.__webmcpNb;
  const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

  function checkName(name) {
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw new DOMException(`Invalid tool name ${JSON.stringify(String(name)).slice(0, 140)}`, 'InvalidStateError');
    }
  }

  function snapshotSchema(schema) {
    if (schema === undefined || schema === null) return undefined;
    const parsed = typeof schema === 'string' ? JSON.parse(schema) : JSON.parse(JSON.stringify(schema));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new TypeError('inputSchema must be a JSON Schema object');
    }
    return parsed;
  }

  class ModelContext extends EventTarget {
    #tools = new Map();
    ontoolchange = null;
    ontoolcancel = null;

    registerTool(tool, { signal } = {}) {
      try {
        checkName(tool?.name);
        if (this.#tools.has(tool.name)) throw new DOMException('Duplicate tool name', 'InvalidStateError');
        if (typeof tool.execute !== 'function') throw new TypeError('execute must be a function');
        if (signal?.aborted) throw signal.reason ?? new DOMException('The signal is aborted', 'AbortError');
        const entry = {
          name: tool.name,
          title: tool.title === undefined ? undefined : String(tool.title),
          description: String(tool.description ?? ''),
          inputSchema: snapshotSchema(tool.inputSchema),
          annotations: { ...tool.annotations },
          execute: tool.execute.bind(tool),
        };
        this.#tools.set(tool.name, entry);
        signal?.addEventListener('abort', () => {
          if (this.#tools.get(entry.name) === entry) {
            this.#tools.delete(entry.name);
            this.#changed();
          }
        }, { once: true });
        this.#changed();
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error instanceof SyntaxError ? new TypeError(error.message) : error);
      }
    }

    async getTools() {
      return Array.from(this.#tools.values(), ({ name, title, description, inputSchema, annotations }) => ({
        name, title, description, inputSchema, annotations, window, origin: location.origin,
      }));
    }

    async executeTool(registeredTool, input, { signal } = {}) {
      const entry = this.#tools.get(registeredTool?.name ?? registeredTool);
      if (!entry) throw new DOMException(`No tool named ${registeredTool?.name}`, 'NotFoundError');
      const args = typeof input === 'string' ? JSON.parse(input) : (input ?? {});
      const run = Promise.resolve().then(() => entry.execute(args));
      const aborted = new Promise((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => {
          this.#fire('toolcancel', { toolName: entry.name }); // as native WebMCP
          reject(signal.reason);
        }, { once: true });
      });
      const value = await Promise.race([run, aborted]);
      return typeof value === 'string' ? value : slot.toText(value);
    }

    #changed() {
      this.#fire('toolchange');
    }

    // An event to listeners and to the `on<type>` handler, as an EventTarget with event handler attributes does.
    #fire(type, fields = {}) {
      const event = Object.assign(new Event(type), fields);
      this.dispatchEvent(event);
      if (typeof this[`on${type}`] === 'function') this[`on${type}`](event);
    }
  }

  // Declarative tools: a <form toolname> becomes a tool whose schema is derived from its fields.
  const FIELD_SKIP = new Set(['submit', 'button', 'reset', 'image', 'file', 'hidden']);

  function fieldSchema(fields) {
    const first = fields[0];
    const schema = {};
    const described = fields.find((f) => f.hasAttribute('toolparamdescription'));
    if (described) schema.description = described.getAttribute('toolparamdescription');
    if (first.type === 'radio') return { ...schema, type: 'string', enum: fields.map((f) => f.value) };
    if (first.type === 'checkbox') return { ...schema, type: 'boolean' };
    if (first.localName === 'select') {
      const values = Array.from(first.options, (o) => o.value);
      return first.multiple
        ? { ...schema, type: 'array', items: { type: 'string', enum: values } }
        : { ...schema, type: 'string', enum: values };
    }
    if (first.type === 'number' || first.type === 'range') {
      Object.assign(schema, { type: 'number' });
      if (first.min !== '') schema.minimum = Number(first.min);
      if (first.max !== '') schema.maximum = Number(first.max);
      if (first.step !== 'any' && Number.isInteger(Number(first.step || 1))) schema.multipleOf = 1;
      return schema;
    }
    Object.assign(schema, { type: 'string' });
    if (first.pattern) schema.pattern = `^(?:${first.pattern})$`;
    return schema;
  }

  function formSchema(form) {
    const groups = new Map();
    for (const field of form.elements) {
      if (!field.name || FIELD_SKIP.has(field.type) || field.localName === 'fieldset' || field.localName === 'button') continue;
      if (!groups.has(field.name)) groups.set(field.name, []);
      groups.get(field.name).push(field);
    }
    const properties = {};
    const required = [];
    for (const [name, fields] of groups) {
      properties[name] = fieldSchema(fields);
      if (fields.some((f) => f.required)) required.push(name);
    }
    return { type: 'object', properties, required };
  }

  function fill(form, input) {
    for (const [name, value] of Object.entries(input ?? {})) {
      const fields = Array.from(form.elements).filter((f) => f.name === name);
      for (const field of fields) {
        if (field.type === 'checkbox') field.checked = Boolean(value);
        else if (field.type === 'radio') field.checked = field.value === String(value);
        else if (field.localName === 'select' && field.multiple) {
          const wanted = new Set((Array.isArray(value) ? value : [value]).map(String));
          for (const option of field.options) option.selected = wanted.has(option.value);
        } else field.value = String(value);
        field.dispatchEvent(new Event('input', { bubbles: true }));
        field.dispatchEvent(new Event('change', { bubbles: true }));
      }
    }
  }

  // Fills `form`, then resolves with what the page passes to respondWith on its next submit: at once
  // when the form has toolautosubmit, otherwise when the user submits it. Invalid input rejects.
  function submitForm(form, input) {
    fill(form, input);
    return new Promise((resolve, reject) => {
      const onSubmit = (event) => {
        if (event.target !== form) return;
        window.removeEventListener('submit', onSubmit, true);
        let response = null;
        Object.defineProperty(event, 'agentInvoked', { value: true });
        Object.defineProperty(event, 'respondWith', { value: (promise) => { response = promise; } });
        setTimeout(() => resolve(response ?? (event.defaultPrevented ? null : 'submitted')), 0);
      };
      window.addEventListener('submit', onSubmit, true);
      if (!form.hasAttribute('toolautosubmit')) return;
      if (!form.checkValidity()) {
        window.removeEventListener('submit', onSubmit, true);
        const problems = Array.from(form.elements).filter((f) => f.validationMessage).map((f) => `${f.name}: ${f.validationMessage}`);
        reject(new TypeError(`The form is not valid: ${problems.join('; ')}`));
        return;
      }
      form.requestSubmit();
    });
  }

  // What makes a form a tool, or changes the tool: a form registers when it gains `toolname` (at any time: a
  // page may add it later), registers again when its name, description or fields change, and unregisters when
  // it loses `toolname` or leaves the document.
  const FORM_ATTRIBUTES = ['toolname', 'tooldescription', 'toolparamdescription', 'name', 'type', 'required',
    'pattern', 'min', 'max', 'step', 'multiple', 'value'];

  function watchForms(mc) {
    const registered = new Map(); // form → {controller, as: the tool as registered, as JSON}
    const scan = () => {
      const seen = new Set();
      for (const form of document.querySelectorAll('form[toolname]')) {
        seen.add(form);
        const tool = {
          name: form.getAttribute('toolname'),
          description: form.getAttribute('tooldescription') ?? '',
          inputSchema: formSchema(form),
        };
        const as = JSON.stringify(tool);
        if (registered.get(form)?.as === as) continue;
        registered.get(form)?.controller.abort();
        const controller = new AbortController();
        registered.set(form, { controller, as });
        mc.registerTool({ ...tool, execute: (input) => submitForm(form, input) }, { signal: controller.signal })
          .catch(() => registered.get(form)?.controller === controller && registered.delete(form));
      }
      for (const [form, { controller }] of registered) {
        if (!seen.has(form)) { controller.abort(); registered.delete(form); }
      }
    };
    const start = () => {
      scan();
      new MutationObserver(scan).observe(document.documentElement,
        { childList: true, subtree: true, attributes: true, attributeFilter: FORM_ATTRIBUTES });
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true });
    else start();
  }

  function installDraftAlias(mc) {
    const controllers = new Map();
    const client = { requestUserInteraction: async (callback) => callback() };
    const alias = {
      registerTool(tool) {
        checkName(tool?.name);
        if (controllers.has(tool.name)) throw new DOMException('Duplicate tool name', 'InvalidStateError');
        const controller = new AbortController();
        controllers.set(tool.name, controller);
        const execute = tool.execute;
        mc.registerTool({ ...tool, execute: (input) => execute.call(tool, input, client) }, { signal: controller.signal })
          .catch(() => controllers.get(tool.name) === controller && controllers.delete(tool.name));
      },
      unregisterTool(name) {
        controllers.get(name)?.abort();
        controllers.delete(name);
      },
      provideContext({ tools = [] } = {}) {
        alias.clearContext();
        for (const tool of tools) alias.registerTool(tool);
      },
      clearContext() {
        for (const controller of controllers.values()) controller.abort();
        controllers.clear();
      },
    };
    Object.defineProperty(navigator, 'modelContext', { value: alias, configurable: true, enumerable: true });
  }

  if (!document.modelContext) {
    const mc = new ModelContext();
    Object.defineProperty(document, 'modelContext', { value: mc, configurable: true, enumerable: true });
    slot.polyfilled = true;
    watchForms(mc);
  }
  if (!navigator.modelContext) installDraftAlias(document.modelContext);
})();
