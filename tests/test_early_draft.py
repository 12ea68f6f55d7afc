"""A page written against the early navigator.modelContext draft: every transition shows in Tab.tools."""

INITIAL = {"addTodo", "listTodos", "setMode", "disableTools"}


def test_provide_register_unregister_clear(open_tab):
    tab = open_tab("early-draft/")
    assert set(tab.tools) == INITIAL  # provideContext at load

    added = tab.call("addTodo", text="buy milk")
    assert added.value["count"] == 1
    tab.wait_for_tool("clearTodos", timeout=5)  # registerTool after the first item
    assert tab.call("listTodos").value["count"] == 1

    tab.call("clearTodos")  # unregisterTool("clearTodos")
    tab.refresh_tools()
    assert "clearTodos" not in tab.tools

    tab.call("setMode", mode="archive")  # provideContext replaces the whole set
    tab.refresh_tools()
    assert set(tab.tools) == {"listArchived", "setMode"}
    assert tab.call("listArchived").value["count"] >= 1

    tab.call("setMode", mode="active")
    tab.refresh_tools()
    assert set(tab.tools) == INITIAL

    tab.call("disableTools")  # clearContext
    tab.refresh_tools()
    assert len(tab.tools) == 0
