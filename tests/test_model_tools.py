"""Page schemas made acceptable to model providers, and names mapped both ways."""

from webmcp_nb.agent.model_tools import model_name, normalize_schema


def test_meta_keys_dropped_and_local_refs_resolved():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "x",
        "$defs": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "pair": {"type": "array", "items": {"$ref": "#/$defs/code"}},
        },
        "type": "object",
        "properties": {"from": {"$ref": "#/$defs/code", "description": "origin"}, "legs": {"$ref": "#/$defs/pair"}},
        "required": ["from"],
    }
    out, wrapped = normalize_schema(schema)
    assert not wrapped
    assert out == {
        "type": "object",
        "properties": {
            "from": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "origin"},
            "legs": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        },
        "required": ["from"],
    }


def test_self_referential_schema_is_cut_not_looped():
    schema = {"type": "object", "properties": {"node": {"$ref": "#"}}}
    out, _ = normalize_schema(schema)
    depth, node = 0, out
    while "properties" in node and "node" in node["properties"]:
        node, depth = node["properties"]["node"], depth + 1
    assert depth <= 10


def test_roots_become_objects():
    assert normalize_schema(None) == ({"type": "object", "properties": {}}, False)
    assert normalize_schema({"properties": {"a": {"type": "string"}}})[0]["type"] == "object"
    wrapped, flag = normalize_schema({"type": "string"})
    assert flag and wrapped == {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}


def test_names_fit_providers_and_stay_unique():
    taken = set()
    first = model_name("shop.search", taken)
    taken.add(first)
    assert first == "shop_search"
    assert model_name("shop_search", taken) == "shop_search_2"
    assert len(model_name("x" * 200, set())) == 64
