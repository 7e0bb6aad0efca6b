"""`Fields` and `FrozenFields`: the methods a dataclass would generate, written once for the classes a run imports.

``@dataclass`` generates each class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``, ``__setattr__`` and ``__delattr__``) as source text compiled with ``exec`` when the
module is imported, at every import (the bytecode cache does not hold them): 0.4-2 ms a class,
22 ms for the 24 a triple-pendulum run created (docs/benchmarks.md 20.6, 2026-11-28 01:25).  A
class deriving from `Fields` or `FrozenFields` lists its fields in ``_fields`` and writes its own
``__init__`` (``self.__dict__.update(...)`` when frozen, as the frozen dataclass's
``object.__setattr__`` per field); the rest is here, compiled once into the bytecode cache, with
the dataclass's behaviour:

- ``repr``: ``Name(a=1, b=2)`` over ``_fields``, the class's ``__qualname__``;
- ``==``: the tuples of the fields compared, only between instances of the same class
  (``NotImplemented`` otherwise);
- ``hash``: `Fields` unhashable (``__hash__ = None``, a dataclass with ``eq`` and not frozen);
  `FrozenFields` that of the fields' tuple (so unhashable where a field is, a numpy array);
- `FrozenFields`: assigning or deleting any attribute raises `dataclasses.FrozenInstanceError`;
- ``replace(**changes)``: a copy with some fields changed, through ``__init__`` (what
  `dataclasses.replace` does for a dataclass);
- pickling and `copy` as for any plain class (the instance's ``__dict__``).

docs/design.md "Hot-import classes are plain classes" says where they are used.
"""
from __future__ import annotations

from dataclasses import FrozenInstanceError

__all__ = ["Fields", "FrozenFields"]


class Fields:
    """Base of a record whose fields are ``_fields`` (see the module docstring); mutable, unhashable."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    __hash__ = None

    def _values(self) -> tuple:
        """The fields' values, in ``_fields`` order (what ``==`` and ``hash`` compare)."""
        return tuple(getattr(self, name) for name in self._fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def replace(self, **changes):
        """A copy with ``changes`` (field name -> value), made by ``__init__`` as `dataclasses.replace` does."""
        unknown = sorted(set(changes) - set(self._fields))
        if unknown:
            raise TypeError(f"{type(self).__qualname__}.replace: unknown field(s) {', '.join(unknown)}; "
                            f"the fields are {', '.join(self._fields)}")
        return type(self)(**{**{name: getattr(self, name) for name in self._fields}, **changes})


class FrozenFields(Fields):
    """Base of an immutable record whose fields are ``_fields`` (see the module docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
