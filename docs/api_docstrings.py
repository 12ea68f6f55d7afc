"""A griffe extension for the API reference (mkdocs.yml, mkdocstrings): the docstrings as a reader of the site needs
them. ``name = blocking(aname)`` is documented as the function it is (``aname``'s signature and docstring, not
awaited) rather than as an attribute without a docstring; Sphinx roles (``:class:`Tab```) read as code (`Tab`)."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:mod|func|class|meth|attr|exc|data|obj):`~?([^`]+)`")


class ApiDocstrings(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._walk(pkg)

    def _walk(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"``\1``", obj.docstring.value)
        for name, member in list(obj.members.items()):
            if member.is_alias:
                continue
            if isinstance(member, griffe.Attribute) and (awaitable := _awaitable_of(obj, member)) is not None:
                member = _twin(name, member, awaitable)
                obj.set_member(name, member)
            if isinstance(member, griffe.Object):
                self._walk(member)


def _awaitable_of(parent: griffe.Object, attr: griffe.Attribute) -> griffe.Function | None:
    """The coroutine function ``attr`` is the blocking twin of, when its value is ``blocking(aname)``."""
    value = attr.value
    if not isinstance(value, griffe.ExprCall) or str(value.function).rsplit(".", 1)[-1] != "blocking":
        return None
    if len(value.arguments) != 1 or not isinstance(value.arguments[0], griffe.ExprName):
        return None
    target = parent.members.get(value.arguments[0].name)
    return target if isinstance(target, griffe.Function) else None


def _twin(name: str, attr: griffe.Attribute, awaitable: griffe.Function) -> griffe.Function:
    text = f"Blocking twin of `{awaitable.name}` (same arguments; it waits for the result)."
    if awaitable.docstring is not None:
        text = f"{awaitable.docstring.value}\n\n{text}"
    twin = griffe.Function(
        name,
        lineno=attr.lineno,
        endlineno=attr.endlineno,
        parameters=awaitable.parameters,
        returns=awaitable.returns,
        docstring=griffe.Docstring(text, parent=awaitable.parent),
    )
    twin.labels = awaitable.labels - {"async"}
    return twin
