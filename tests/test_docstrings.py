"""Every public name has a docstring, and no docstring sends the reader somewhere the reference omits.

The API reference (docs/reference/, mkdocstrings) renders a package's ``__all__``: each class and
function listed there, and each public method or property a class defines itself. A name without a
docstring shows up there as a bare signature, so this test lists every one of them. A method that
overrides a documented one of a base class (a protocol it subclasses, say) inherits that docstring
and passes. Private modules are never rendered, so a public docstring must not point to "the module
docstring" or "the module table".
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

import agcore.integrations

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = (
    "agcore",
    "agcore.agent",
    "agcore.llm",
    "agcore.memory",
    "agcore.tools",
    "agcore.tools.workspace",
    "agcore.hooks",
    "agcore.context",
    "agcore.code",
    "agcore.testing",
    "agcore.plugins",
)

# Pointers into text the reference never shows: a module's docstring, or a private module by name.
PRIVATE_POINTER = re.compile(
    r"\bsee the module\b|\bmodule(?:'s)? (?:docstring|table|doc|rules)\b|\bagcore(?:\.\w+)*\._[a-z]\w*", re.I
)


def public_packages() -> list[str]:
    """The packages above and every public integration (a new one is checked as soon as it exists)."""
    integrations = sorted(
        f"agcore.integrations.{info.name}"
        for info in pkgutil.iter_modules(agcore.integrations.__path__)
        if info.ispkg and not info.name.startswith("_")
    )
    return [*PACKAGES, *integrations]


def own_doc(obj: Any) -> str:
    """The docstring ``obj`` itself carries (a class does not inherit its base's)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return doc.strip() if isinstance(doc, str) else ""


def member_function(value: Any) -> Any:
    """The function behind a class attribute (property, classmethod, ...), or None for data."""
    if isinstance(value, property):
        return value.fget
    if isinstance(value, functools.cached_property):
        return value.func
    if isinstance(value, (classmethod, staticmethod)):
        return value.__func__
    return value if inspect.isfunction(value) else None


def inherits_doc(cls: type, attr: str) -> bool:
    """Whether a base class documents ``attr`` (an override of a documented method)."""
    for base in cls.__mro__[1:]:
        if attr in vars(base):
            function = member_function(vars(base)[attr])
            if function is not None and own_doc(function):
                return True
    return False


def public_names() -> Iterator[tuple[str, Any, str]]:
    """(qualified name, object, docstring) of every public class, function, method and property."""
    seen: set[tuple[str, str]] = set()
    for package_name in public_packages():
        package = importlib.import_module(package_name)
        for export in getattr(package, "__all__", ()):
            obj = getattr(package, export)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not (getattr(obj, "__module__", None) or "").startswith("agcore"):
                continue
            key = (obj.__module__, obj.__qualname__)
            if key in seen:
                continue
            seen.add(key)
            yield f"{package_name}.{export}", obj, own_doc(obj)
            if not inspect.isclass(obj):
                continue
            for attr, value in vars(obj).items():
                function = member_function(value)
                if attr.startswith("_") or function is None:
                    continue
                doc = own_doc(function)
                if not doc and inherits_doc(obj, attr):
                    continue
                yield f"{package_name}.{export}.{attr}", function, doc


def test_the_packages_checked_are_the_public_ones() -> None:
    names = public_packages()
    integrations = {"agcore.integrations.mcp", "agcore.integrations.otel", "agcore.integrations.langgraph"}
    assert integrations <= set(names)
    checked = {name for name, _, _ in public_names()}
    # Spot checks that each kind of member is reached: a method, a property, a re-exported class.
    spot_checks = {"agcore.DefaultTaskAgent.run", "agcore.llm.LLMResponse.text", "agcore.AgentBuilder"}
    assert spot_checks <= checked


def test_every_public_name_has_a_docstring() -> None:
    missing = sorted(name for name, _, doc in public_names() if not doc)
    assert not missing, f"{len(missing)} public names have no docstring:\n" + "\n".join(missing)


def test_no_docstring_points_to_a_private_module() -> None:
    pointing = sorted(name for name, _, doc in public_names() if PRIVATE_POINTER.search(doc))
    assert not pointing, (
        "these docstrings point readers to a module docstring the API reference never renders; "
        "say it in the docstring or link the docs page:\n" + "\n".join(pointing)
    )


def test_every_public_package_is_in_the_api_reference() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    (reference,) = (entry["API reference"] for entry in config["nav"] if "API reference" in entry)
    pages = {name: page for entry in reference for name, page in entry.items()}
    # agcore itself only re-exports names documented in its subpackages' pages.
    missing = [name for name in public_packages()[1:] if name not in pages]
    assert not missing, f"add a docs/reference page and a nav entry for: {missing}"
    for name, page in pages.items():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        if f"::: {name}\n" in text:
            continue  # the whole package, its __all__ in order
        # A page listing the members one by one must list every one.
        exports = importlib.import_module(name).__all__
        unlisted = [export for export in exports if f"::: {name}.{export}\n" not in text]
        assert not unlisted, f"docs/{page} does not render {unlisted}"
    options = config["plugins"][1]["mkdocstrings"]["handlers"]["python"]["options"]
    assert options["show_signature_annotations"] is True
