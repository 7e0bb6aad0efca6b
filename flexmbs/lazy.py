"""Imports paid for when used (issue 22, start-up): a package's public names loaded from their
submodules on first use, and a module imported at its first attribute.

Why: a command pays for every module it imports, used or not (``python -X importtime``):
``scipy.sparse`` or ``scipy.linalg`` cost about 0.25 s of CPU over numpy, because scipy's
array-API layer walks numpy's namespace (and so imports ``numpy.f2py`` and ``numpy.testing``),
which a rigid-body run on the compiled step never needs.  Both helpers import with
``importlib.import_module``, so a module is still imported once and a missing one raises the usual
``ModuleNotFoundError`` at its first use.
"""
from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator, Mapping
from types import ModuleType


def lazy_package(package: str, public: dict[str, str]):
    """``(__getattr__, __dir__)`` for the package named ``package`` (PEP 562).

    ``public`` maps each public name to the module it comes from; a name equal to its module's
    last part is that module.  Another name that is a submodule of the package (``pkg.name``) is
    imported as such; anything else is an ``AttributeError`` naming it.  A name once loaded is
    set as the package's global, so later uses cost a dictionary look-up.
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        source = public.get(name)
        if source is None:
            if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")        # the import sets the attribute
        module = importlib.import_module(source)
        value = module if source.rpartition(".")[2] == name else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__


class LazyModule(ModuleType):
    """The module ``name``, imported at the first use of one of its attributes.

    ``sparse = LazyModule("scipy.sparse")`` in place of ``from scipy import sparse`` at a module's
    top: ``sparse.csr_array(...)`` then imports scipy.sparse the first time it runs.  Each
    attribute read is kept on this object, so a hot loop pays the import machinery once.
    """

    def __init__(self, name: str):
        super().__init__(name, f"{name}, imported at its first use")

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):            # copy/pickle/inspect probing: no import for them
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self.__name__), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (lazy)>"


class LazyTable(Mapping):
    """A read-only ``name -> object`` table whose objects are named ``"module:attribute"`` and
    imported when looked up (``table[name]``), so a run loads the module of the one it asks for.

    ``INTEGRATORS = LazyTable({"RK45": "flexmbs.integrators.rk:RK45", ...})``: ``name in table``,
    ``len``, iteration and ``sorted(table)`` read the names only; ``table[name]``, ``.values()``
    and ``.items()`` import the modules concerned (each once: the object is kept).  The order of
    iteration is the order of ``sources``.
    """

    def __init__(self, sources: dict[str, str]):
        bad = {name: src for name, src in sources.items() if src.count(":") != 1}
        if bad:
            raise ValueError(f"`sources` must map each name to 'module:attribute', got {bad}")
        self._sources = dict(sources)
        self._loaded: dict[str, object] = {}

    def __getitem__(self, name: str):
        try:
            return self._loaded[name]
        except KeyError:
            pass
        module, attribute = self._sources[name].split(":")         # KeyError for an unknown name
        value = self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def __contains__(self, name) -> bool:
        return name in self._sources

    def source(self, name: str) -> str:
        """Where ``name``'s object is defined, ``"module:attribute"`` (no import)."""
        return self._sources[name]

    def __repr__(self) -> str:
        return f"LazyTable({self._sources!r})"


def loaded_class(source: str):
    """The class named ``"module:Class"`` if its module is loaded, else None: an object of a class
    exists only once its module has been imported, so while the module is absent from
    ``sys.modules`` no object is of that class (``type(obj) is None`` is False for every obj)."""
    import sys

    module, _, name = source.partition(":")
    return getattr(sys.modules.get(module), name, None)   # None: not loaded, or still being imported


def isinstance_of(obj, *sources: str) -> bool:
    """``isinstance(obj, cls)`` for any class ``cls`` named ``"module:Class"`` in ``sources``,
    without importing a module that is not yet loaded (`loaded_class`).  For type checks on the way
    of a run that would otherwise import every kind of body to learn that a System has none of them."""
    for source in sources:
        cls = loaded_class(source)
        if cls is not None and isinstance(obj, cls):
            return True
    return False
