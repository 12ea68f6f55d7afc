// To-do list written against the EARLY WebMCP draft API (Chrome 146-149 era):
//
//   navigator.modelContext.provideContext({tools})  replaces the whole set of tools
//   navigator.modelContext.registerTool(tool)       adds one tool (throws on a duplicate name)
//   navigator.modelContext.unregisterTool(name)     removes one tool
//   navigator.modelContext.clearContext()           removes every tool
//
// Tool-set transitions (each one can be triggered by a tool call, a button or the URL):
//
//   load                 provideContext(ACTIVE)   -> addTodo, listTodos, setMode, disableTools
//   first to-do added    registerTool(clearTodos) -> ACTIVE + clearTodos
//     (addTodo tool, or the "Add" button)
//   list becomes empty   unregisterTool('clearTodos') -> ACTIVE
//     (clearTodos tool, which removes itself; "Clear list"; or "Done" on the last item)
//   setMode({mode: 'archive'})  provideContext(ARCHIVE) -> listArchived, setMode
//     ("Show archive" button; or load with ?mode=archive)
//   setMode({mode: 'active'})   provideContext(ACTIVE) (+ clearTodos if the list is not empty)
//     ("Back to to-dos" button)
//   disableTools()       clearContext() -> no tools at all
//     ("Disable agent tools" button; or load with ?disabled=1)
//   "Enable agent tools" button (humans only)  provideContext(set of the current mode)
//
// clearTodos is registered with registerTool rather than provideContext, and this page
// unregisters it itself before every provideContext call, so the resulting tool set is
// the same whether or not provideContext also drops tools added with registerTool.

(() => {
  const modelContext = navigator.modelContext;
  const $ = (id) => document.getElementById(id);

  if (!modelContext) {
    // No early-draft WebMCP here: say so, and do nothing else.
    $('webmcp-missing').hidden = false;
    return;
  }

  const state = {
    mode: 'active', // 'active' | 'archive'
    toolsEnabled: true,
    clearTodosRegistered: false,
    nextId: 1,
    todos: [], // [{id, text}]
    archived: [
      { id: 'a1', text: 'Renew passport' },
      { id: 'a2', text: 'Water the plants' },
    ],
  };

  // -------------------------------------------------------------------------
  // Tools
  // -------------------------------------------------------------------------

  const emptySchema = { type: 'object', properties: {} };

  const addTodoTool = {
    name: 'addTodo',
    description: 'Adds an item to the to-do list.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', minLength: 1, description: 'What needs doing.' } },
      required: ['text'],
    },
    annotations: { readOnlyHint: false },
    execute(input) {
      const text = typeof input?.text === 'string' ? input.text.trim() : '';
      if (!text) return { error: 'text must be a non-empty string.' };
      const todo = addTodo(text);
      return { added: todo, count: state.todos.length, tools: exposedToolNames() };
    },
  };

  const listTodosTool = {
    name: 'listTodos',
    description: 'Returns the items on the to-do list.',
    inputSchema: emptySchema,
    annotations: { readOnlyHint: true },
    execute() {
      return { todos: state.todos.map((t) => ({ ...t })), count: state.todos.length };
    },
  };

  const clearTodosTool = {
    name: 'clearTodos',
    description: 'Moves every item of the to-do list to the archive. Only offered while the list is not empty.',
    inputSchema: emptySchema,
    annotations: { readOnlyHint: false },
    execute() {
      const cleared = clearTodos();
      return { cleared, archivedCount: state.archived.length, tools: exposedToolNames() };
    },
  };

  const setModeTool = {
    name: 'setMode',
    description:
      'Switches the page between "active" (the to-do list) and "archive" (finished items). ' +
      'Each mode offers a different set of tools.',
    inputSchema: {
      type: 'object',
      properties: { mode: { type: 'string', enum: ['active', 'archive'] } },
      required: ['mode'],
    },
    annotations: { readOnlyHint: false },
    execute(input) {
      if (input?.mode !== 'active' && input?.mode !== 'archive') {
        return { error: 'mode must be "active" or "archive".' };
      }
      setMode(input.mode);
      return { mode: state.mode, tools: exposedToolNames() };
    },
  };

  const disableToolsTool = {
    name: 'disableTools',
    description: 'Removes all of this page\'s tools (a human can turn them back on).',
    inputSchema: emptySchema,
    annotations: { readOnlyHint: false },
    execute() {
      disableTools();
      return { disabled: true, tools: [] };
    },
  };

  const listArchivedTool = {
    name: 'listArchived',
    description: 'Returns the archived (finished or cleared) to-do items.',
    inputSchema: emptySchema,
    annotations: { readOnlyHint: true },
    execute() {
      return { archived: state.archived.map((t) => ({ ...t })), count: state.archived.length };
    },
  };

  const TOOL_SETS = {
    active: [addTodoTool, listTodosTool, setModeTool, disableToolsTool],
    archive: [listArchivedTool, setModeTool],
  };

  /** Calls a draft API method; errors are logged rather than breaking the page. */
  function draft(method, ...args) {
    try {
      const result = modelContext[method](...args);
      // The draft methods are synchronous; tolerate implementations that return a promise.
      if (result && typeof result.then === 'function') {
        result.catch((error) => console.error(`navigator.modelContext.${method} failed:`, error));
      }
    } catch (error) {
      console.error(`navigator.modelContext.${method} failed:`, error);
    }
  }

  /** provideContext() with the tool set of the current mode. */
  function provideToolsForMode() {
    if (state.clearTodosRegistered) {
      draft('unregisterTool', 'clearTodos');
      state.clearTodosRegistered = false;
    }
    draft('provideContext', { tools: TOOL_SETS[state.mode] });
    state.toolsEnabled = true;
    syncClearTodosTool();
  }

  /** clearTodos is offered exactly while the active list has items. */
  function syncClearTodosTool() {
    const wanted = state.toolsEnabled && state.mode === 'active' && state.todos.length > 0;
    if (wanted && !state.clearTodosRegistered) {
      draft('registerTool', clearTodosTool);
      state.clearTodosRegistered = true;
    } else if (!wanted && state.clearTodosRegistered) {
      draft('unregisterTool', 'clearTodos');
      state.clearTodosRegistered = false;
    }
  }

  function exposedToolNames() {
    if (!state.toolsEnabled) return [];
    const names = TOOL_SETS[state.mode].map((tool) => tool.name);
    if (state.clearTodosRegistered) names.push('clearTodos');
    return names;
  }

  // -------------------------------------------------------------------------
  // Actions (shared by tools and buttons)
  // -------------------------------------------------------------------------

  function addTodo(text) {
    const todo = { id: `t${state.nextId++}`, text };
    state.todos.push(todo);
    syncClearTodosTool();
    render();
    return { ...todo };
  }

  function archiveTodo(id) {
    const index = state.todos.findIndex((t) => t.id === id);
    if (index === -1) return;
    state.archived.push(...state.todos.splice(index, 1));
    syncClearTodosTool();
    render();
  }

  function clearTodos() {
    const cleared = state.todos.length;
    state.archived.push(...state.todos);
    state.todos = [];
    syncClearTodosTool(); // the list is empty now, so this unregisters clearTodos
    render();
    return cleared;
  }

  function setMode(mode) {
    state.mode = mode;
    if (state.toolsEnabled) provideToolsForMode();
    render();
  }

  function disableTools() {
    draft('clearContext');
    state.toolsEnabled = false;
    state.clearTodosRegistered = false;
    render();
  }

  function enableTools() {
    provideToolsForMode();
    render();
  }

  // -------------------------------------------------------------------------
  // Rendering (createElement/textContent only)
  // -------------------------------------------------------------------------

  function itemRow(item, className, buttonLabel) {
    const li = document.createElement('li');
    li.className = className;
    li.dataset.todoId = item.id;
    const text = document.createElement('span');
    text.className = 'todo-text';
    text.textContent = item.text;
    li.append(text);
    if (buttonLabel) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary done-button';
      button.textContent = buttonLabel;
      button.setAttribute('aria-label', `Mark "${item.text}" as done`);
      li.append(button);
    }
    return li;
  }

  function render() {
    const active = state.mode === 'active';
    $('mode-label').textContent = active ? 'To-do list' : 'Archive';
    $('mode-toggle').textContent = active ? 'Show archive' : 'Back to to-dos';
    $('active-view').hidden = !active;
    $('archive-view').hidden = active;

    $('todo-list').replaceChildren(...state.todos.map((t) => itemRow(t, 'todo-item', 'Done')));
    $('todo-empty').hidden = state.todos.length > 0;
    $('clear-todos').disabled = state.todos.length === 0;
    $('archived-list').replaceChildren(...state.archived.map((t) => itemRow(t, 'archived-item')));
    $('archive-empty').hidden = state.archived.length > 0;

    const names = exposedToolNames();
    $('agent-tools').replaceChildren(...names.map((name) => {
      const li = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = name;
      li.append(code);
      return li;
    }));
    $('agent-tools-none').hidden = names.length > 0;
    $('disable-tools').hidden = !state.toolsEnabled;
    $('enable-tools').hidden = state.toolsEnabled;
  }

  // -------------------------------------------------------------------------
  // Start-up
  // -------------------------------------------------------------------------

  $('add-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = $('todo-text').value.trim();
    if (!text) return;
    addTodo(text);
    $('todo-text').value = '';
  });
  $('todo-list').addEventListener('click', (event) => {
    const button = event.target.closest('.done-button');
    if (button) archiveTodo(button.closest('li').dataset.todoId);
  });
  $('clear-todos').addEventListener('click', clearTodos);
  $('mode-toggle').addEventListener('click', () => setMode(state.mode === 'active' ? 'archive' : 'active'));
  $('disable-tools').addEventListener('click', disableTools);
  $('enable-tools').addEventListener('click', enableTools);

  const params = new URLSearchParams(location.search);
  if (params.get('mode') === 'archive') state.mode = 'archive';

  $('app').hidden = false;
  if (params.get('disabled') === '1') {
    disableTools();
  } else {
    provideToolsForMode();
    render();
  }
})();
