"""`Fields` and `FrozenFields`: the methods a dataclass would generate, written once for the classes a run imports.

``@dataclass`` generates each class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``, ``__setattr__`` and ``__delattr__``) as source text compiled with ``exec`` when the
module is imported, at every import (the bytecode cache does not hold them): 0.4-2 ms a class,
22 ms for the 24 a triple-pendulum run created (docs/benchmarks.md 20.6, 2026-11-28 01:25).

A class deriving from `Fields` or `FrozenFields` declares its fields once, as the parameters of
its ``__init__`` (names, annotations, defaults, keyword-only-ness: what a dataclass reads from its
annotations), and stores them with ``self._set_fields(locals())`` as the first statement::

    class Point(FrozenFields):
        def __init__(self, x: float, y: float = 0.0):
            self._set_fields(locals())

``__init_subclass__`` reads the field names from the ``__init__``'s code object into ``_fields``
(no ``exec``, no `inspect`: microseconds a class).  A parameter annotated ``dict | None`` stands
for a dataclass's ``field(default_factory=dict)``: None there is stored as a new ``{}``.  Attributes
that ``__init__`` computes from the fields (a dataclass's ``field(init=False)``) are named in
``_derived``: they are shown and compared after the fields, and ``replace`` computes them again.  The rest is here, compiled once into
the bytecode cache, with the dataclass's behaviour:

- ``repr``: ``Name(a=1, b=2)`` over ``_fields`` and ``_derived``, the class's ``__qualname__``;
- ``==``: the tuples of the fields (and ``_derived``) compared, only between instances of the same class
  (``NotImplemented`` otherwise);
- ``hash``: `Fields` unhashable (``__hash__ = None``, a dataclass with ``eq`` and not frozen);
  `FrozenFields` that of the fields' tuple (so unhashable where a field is, a numpy array);
- `FrozenFields`: assigning or deleting any attribute raises `dataclasses.FrozenInstanceError`
  (the `dataclasses` module is imported when one is raised, not before);
- ``replace(**changes)``: a copy with some fields changed, through ``__init__`` (what
  `dataclasses.replace` does for a dataclass);
- ``__match_args__``: the positional fields (``case Name(a, b)`` patterns);
- pickling and `copy` as for any plain class (the instance's ``__dict__``).

docs/design.md "Hot-import classes are plain classes" says where they are used.
"""
from __future__ import annotations

__all__ = ["Fields", "FrozenFields", "field_names", "init_fields", "new_dict_fields"]

_VARARGS, _VARKEYWORDS = 0x04, 0x08          # inspect.CO_VARARGS, CO_VARKEYWORDS (not imported: import time)


def init_fields(cls: type) -> tuple[str, ...]:
    """The field names of ``cls``: the parameters of its ``__init__`` after ``self``, in order.

    Read from the code object, ``co_varnames[1:co_argcount + co_kwonlyargcount]`` (the positional
    then the keyword-only parameters come first among the local names).  TypeError naming the class
    for an ``__init__`` that ``_set_fields(locals())`` cannot store exactly: one with ``*args`` or
    ``**kwargs`` (no names to declare) or with free variables (``super()``'s ``__class__`` cell
    would be among its ``locals()``)."""
    code = cls.__init__.__code__
    if code.co_flags & (_VARARGS | _VARKEYWORDS) or code.co_freevars:
        raise TypeError(f"{cls.__qualname__}.__init__ must declare the fields as named parameters, without "
                        f"*args, **kwargs or free variables ({', '.join(code.co_freevars) or 'none'}), "
                        f"got the signature {code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]}")
    return code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]


def new_dict_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` whose ``__init__`` annotation is ``dict | None`` (the string, as under
    ``from __future__ import annotations``, or the union object): a None given there is stored as a
    new ``{}``, what a dataclass's ``field(default_factory=dict)`` gives."""
    annotations = cls.__init__.__annotations__
    return tuple(name for name in cls._fields if str(annotations.get(name, "")).replace(" ", "") == "dict|None")


def field_names(record) -> tuple[str, ...]:
    """The names a `Fields` class or instance shows and compares: its fields, then its ``_derived``
    attributes (what `dataclasses.fields` names for a dataclass, ``init=False`` ones included)."""
    return record._shown


class Fields:
    """Base of a record whose fields are its ``__init__``'s parameters (see the module docstring);
    mutable, unhashable."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _new_dicts: tuple[str, ...] = ()
    _derived: tuple[str, ...] = ()
    _shown: tuple[str, ...] = ()                # _fields + _derived: what repr, == and hash read
    __hash__ = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            fields = init_fields(cls)
            declared = cls.__dict__.get("_fields", fields)
            if tuple(declared) != fields:
                raise TypeError(f"{cls.__qualname__}._fields {tuple(declared)} differs from its __init__'s "
                                f"parameters {fields}; the parameters are the declaration (drop `_fields`)")
            cls._fields = fields
            cls._new_dicts = new_dict_fields(cls)
            cls.__match_args__ = fields[:cls.__init__.__code__.co_argcount - 1]   # the positional ones
        cls._shown = cls._fields + tuple(cls._derived)

    def _set_fields(self, values: dict) -> None:
        """Store the fields from ``values``, the ``locals()`` of the subclass's ``__init__`` taken
        as its first statement (its parameters and ``self``), in the instance's ``__dict__``
        (bypassing a frozen class's ``__setattr__``, as the frozen dataclass's ``object.__setattr__``);
        a ``dict | None`` field given None becomes a new ``{}`` (`new_dict_fields`)."""
        fields = self.__dict__
        fields.update(values)
        del fields["self"]
        for name in self._new_dicts:
            if fields[name] is None:
                fields[name] = {}

    def _values(self) -> tuple:
        """The fields' values, in ``_fields`` then ``_derived`` order (what ``==`` and ``hash`` compare)."""
        return tuple(getattr(self, name) for name in self._shown)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
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
    """Base of an immutable record whose fields are its ``__init__``'s parameters (see the module docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name, value):
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot delete field {name!r}")
