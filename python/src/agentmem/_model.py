"""Model: the base of the API's types, dataclasses read from and written
to the API's JSON field by field."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, List, Mapping, Tuple, Type, TypeVar

M = TypeVar("M", bound="Model")


@dataclasses.dataclass
class Model:
    """A record of the API. ``from_dict`` reads one from the API's JSON and
    ``to_dict`` writes it back: fields a newer server sends that this SDK
    does not know are kept and written back too, so that an export read
    here imports whole. A field's JSON name is its own, or
    ``metadata["json"]`` where the name is a Python keyword (``from``)."""

    _extra: Dict[str, Any] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_dict(cls: Type[M], data: Mapping[str, Any]) -> M:
        """Returns the record of the JSON object data."""
        known = {name: (attr, hint) for attr, name, hint, _ in _fields(cls)}
        kwargs: Dict[str, Any] = {}
        extra: Dict[str, Any] = {}
        for key, value in data.items():
            if key in known:
                attr, hint = known[key]
                kwargs[attr] = _convert(hint, value)
            else:
                extra[key] = value
        obj = cls(**kwargs)
        obj._extra = extra
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """Returns the record as the API's JSON object: None fields, and
        the empty ones the server leaves out (times of records made here
        rather than read among them), are left out."""
        out: Dict[str, Any] = {}
        for attr, name, _, omitempty in _fields(type(self)):
            value = getattr(self, attr)
            if value is None or (omitempty and not value):
                continue
            out[name] = _plain(value)
        out.update(self._extra)
        return out


def time_field() -> Any:
    """A field holding an RFC 3339 time as the API sends it ("" when unset,
    and then left out of to_dict)."""
    return dataclasses.field(default="", metadata={"omitempty": True})


def omitempty(default: Any = "") -> Any:
    """A field the server leaves out when empty ("", 0, False or []), and
    to_dict too, so that it writes a record as the server does."""
    if isinstance(default, list):
        return dataclasses.field(default_factory=list, metadata={"omitempty": True})
    return dataclasses.field(default=default, metadata={"omitempty": True})


_FieldSpec = Tuple[str, str, Any, bool]  # attribute, JSON name, type, omit when empty
_specs: Dict[type, List[_FieldSpec]] = {}


def _fields(cls: type) -> List[_FieldSpec]:
    spec = _specs.get(cls)
    if spec is None:
        hints = typing.get_type_hints(cls)
        spec = [
            (f.name, f.metadata.get("json", f.name), hints[f.name], bool(f.metadata.get("omitempty")))
            for f in dataclasses.fields(cls)
            if f.name != "_extra"
        ]
        _specs[cls] = spec
    return spec


def _convert(hint: Any, value: Any) -> Any:
    """Returns the JSON value as the type hint says: records for Model
    types, recursively in lists and dicts; a null list or object as an
    empty one."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union:  # Optional[X]
        if value is None:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin is list:
        return [_convert(args[0], v) for v in value] if isinstance(value, list) else ([] if value is None else value)
    if origin is dict:
        return (
            {k: _convert(args[1], v) for k, v in value.items()}
            if isinstance(value, dict)
            else ({} if value is None else value)
        )
    if isinstance(hint, type) and issubclass(hint, Model) and isinstance(value, dict):
        return hint.from_dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
