"""The model registry: ``models.yaml`` entries, validated, with their call parameters."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .limits import Limits
from .yamlfile import load_yaml
from .redact import redact_secret_keys

#: The local server kinds a model entry may name (the servers package implements each).
SERVER_KINDS = ("llama.cpp", "vllm")

#: Keys an entry may have; anything else is a typo and is refused.
ENTRY_KEYS = {
    "model": "the litellm model string, e.g. 'openrouter/qwen/qwen3-coder-30b-a3b-instruct'",
    "description": "free text",
    "caveat": "what a reader of this model's results must know (shown in every summary)",
    "params": "call parameters passed to litellm.completion (temperature, max_tokens, extra_body, ...)",
    "price": "per-token prices in dollars: input_per_token, output_per_token",
    "api_base": "the endpoint URL",
    "api_base_env": "name of the environment variable holding the endpoint URL",
    "api_key_env": "name of the environment variable holding the API key",
    "required_env": "names of environment variables the provider needs (e.g. AWS credentials)",
    "limits": "per-run limits overriding the task's (max_turns, max_seconds, ...)",
    "server": "a local server the plugin starts: kind llama.cpp or vllm",
    "max_concurrency": "a cap on this model's runs in flight at once, per pytest process (a provider's "
                       "rate limit; the adaptive limit stays under it); 1: one at a time",
    "variants": "settings swept in one campaign: a mapping of labels (e.g. 'reasoning=off') to call "
                "parameters merged over 'params'; each variant is a model 'NAME[LABEL]' of the campaign",
}
PRICE_KEYS = ("input_per_token", "output_per_token")
#: Keys of the file's top level.
TOP_KEYS = ("models", "default", "callbacks")
#: Parameters the harness sets itself; an entry may not override them.
RESERVED_PARAMS = {"model", "messages", "tools", "api_key", "api_base", "metadata", "stream"}


class ModelsFileError(ValueError):
    """A models file that cannot be used; the message names file, entry and key."""


@dataclass(frozen=True)
class ModelEntry:
    name: str
    model: str
    params: Mapping[str, Any] = field(default_factory=dict)
    price: Mapping[str, float] | None = None
    api_base: str | None = None
    api_base_env: str | None = None
    api_key_env: str | None = None
    required_env: tuple[str, ...] = ()
    limits: Mapping[str, Any] = field(default_factory=dict)
    server: Mapping[str, Any] | None = None
    description: str = ""
    caveat: str = ""
    max_concurrency: int | None = None
    #: For a variant (``NAME[LABEL]``): the entry it is a variant of and its label; else None.
    variant_of: str | None = None
    variant: str | None = None

    @property
    def scripted(self) -> bool:
        return self.model.startswith("agentic-scripted/")

    def missing_env(self) -> list[str]:
        names = [*self.required_env]
        if self.api_key_env:
            names.append(self.api_key_env)
        if self.api_base_env:
            names.append(self.api_base_env)
        return [n for n in names if not os.environ.get(n)]

    def public(self) -> dict[str, Any]:
        """The entry as recorded in campaign.json: parameters and env *names*, never values."""
        return {
            "name": self.name,
            "model": self.model,
            "params": redact_secret_keys(dict(self.params)),
            "price": dict(self.price) if self.price is not None else None,
            "api_base": self.api_base,
            "api_base_env": self.api_base_env,
            "api_key_env": self.api_key_env,
            "required_env": list(self.required_env),
            "limits": dict(self.limits),
            "server": dict(self.server) if self.server is not None else None,
            "max_concurrency": self.max_concurrency,
            "caveat": self.caveat,
            **({"variant_of": self.variant_of, "variant": self.variant} if self.variant_of else {}),
        }


@dataclass(frozen=True)
class Registry:
    path: Path
    entries: Mapping[str, ModelEntry]
    default: tuple[str, ...]
    #: Entries that declare ``variants:``, by name: the ids of their variants (each one of ``entries``).
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: litellm callbacks that receive every model call of a campaign (top-level ``callbacks:``): names of
    #: litellm's integrations (``langfuse``, ``mlflow``, ...) or ``module:Class`` of a litellm ``CustomLogger``.
    callbacks: tuple[str, ...] = ()

    def select(self, names: list[str]) -> list[ModelEntry]:
        """The entries for ``--model`` values (``all`` = every entry; none = the default); an entry with
        variants stands for all of them, ``NAME[LABEL]`` for one."""
        if not names:
            names = list(self.default)
        if "all" in names:
            return [e for e in self.entries.values() if not e.scripted]
        chosen: list[ModelEntry] = []
        for name in names:
            ids = self.groups.get(name, (name,))
            for one in ids:
                if one not in self.entries:
                    known = [*self.groups, *(n for n, e in self.entries.items() if e.variant_of is None)]
                    raise ModelsFileError(
                        f"--model {name!r}: no such entry in {self.path}; known: {', '.join(known)}"
                        + (f"; variants: {', '.join(n for n, e in self.entries.items() if e.variant_of)}"
                           if self.groups else ""))
                if self.entries[one] not in chosen:
                    chosen.append(self.entries[one])
        return chosen


def load_registry(path: Path) -> Registry:
    data = load_yaml(path, ModelsFileError, "models file not found (pass --models-file PATH)")
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ModelsFileError(f"{path}: expected a mapping with a 'models' mapping at the top")
    unknown_top = set(data) - set(TOP_KEYS)
    if unknown_top:
        raise ModelsFileError(f"{path}: unknown top-level key(s) {sorted(unknown_top)}; expected "
                              f"{', '.join(repr(k) for k in TOP_KEYS)}")
    entries: dict[str, ModelEntry] = {}
    groups: dict[str, tuple[str, ...]] = {}
    for name, raw in data["models"].items():
        entry = _entry(path, str(name), raw)
        variants = _variants(path, entry, raw.get("variants"))
        if variants:
            groups[entry.name] = tuple(v.name for v in variants)
            entries.update((v.name, v) for v in variants)
        else:
            entries[entry.name] = entry
    default = data.get("default", [])
    if isinstance(default, str):
        default = [default]
    if not isinstance(default, list) or not all(isinstance(d, str) for d in default):
        raise ModelsFileError(f"{path}: key 'default' must be a model name or a list of names")
    for name in default:
        if name not in entries and name not in groups:
            raise ModelsFileError(f"{path}: key 'default' names {name!r}, which is not an entry")
    return Registry(path=path, entries=entries, default=tuple(default), groups=groups,
                    callbacks=callback_names(data.get("callbacks"), f"{path}: key 'callbacks'"))


#: A litellm integration's name (``langfuse``) or a ``CustomLogger`` class by its import path (``module:Class``).
_CALLBACK = re.compile(r"[a-z][a-z0-9_]*|[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def callback_names(raw: Any, where: str) -> tuple[str, ...]:
    """The callbacks a models file (or ``--agentic-callback``) names, checked for their form only: which
    names litellm knows is checked where litellm is imported (``telemetry.callbacks``). A name carries no
    credential: an integration reads its own from the environment."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise ModelsFileError(f"{where} must be a list of litellm callback names or module:Class paths")
    for name in raw:
        if not isinstance(name, str) or not _CALLBACK.fullmatch(name):
            raise ModelsFileError(f"{where}: {name!r} is neither a litellm callback name (e.g. 'langfuse') nor "
                                  "a module:Class path of a litellm CustomLogger; credentials go in environment "
                                  "variables, never here")
    return tuple(dict.fromkeys(raw))


#: A variant's label: readable, and free of the brackets that delimit it in the model's id.
_LABEL_CHARS = set("[]\n\r\t")


def variant_id(name: str, label: str) -> str:
    """The id of an entry's variant as the campaign names it: ``nemotron-nano-3-30b[reasoning=off]``."""
    return f"{name}[{label}]"


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged into ``base``; mappings (``extra_body``, ``chat_template_kwargs``) merge key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _variants(path: Path, entry: ModelEntry, raw: Any) -> list[ModelEntry]:
    """The variants an entry declares (``variants: {LABEL: {param: value, ...}}``), each a model of its own."""
    if raw is None:
        return []
    where = f"{path}: entry {entry.name!r}: key 'variants'"
    if not isinstance(raw, dict) or not raw:
        raise ModelsFileError(f"{where} must be a mapping of labels to call parameters, e.g. "
                              "{'reasoning=off': {reasoning_effort: none}}")
    out = []
    for label, params in raw.items():
        if not isinstance(label, str) or not label.strip() or _LABEL_CHARS & set(label) or len(label) > 80:
            raise ModelsFileError(f"{where}: label {label!r} must be a short text without brackets or line breaks")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ModelsFileError(f"{where}.{label}: expected a mapping of call parameters, got {type(params).__name__}")
        reserved = RESERVED_PARAMS & set(params)
        if reserved:
            raise ModelsFileError(f"{where}.{label}: may not set {sorted(reserved)}; the harness sets these")
        out.append(replace(entry, name=variant_id(entry.name, label), params=_merged(entry.params, params),
                           variant_of=entry.name, variant=label))
    return out


def _entry(path: Path, name: str, raw: Any) -> ModelEntry:
    where = f"{path}: entry {name!r}"
    if not isinstance(raw, dict):
        raise ModelsFileError(f"{where}: expected a mapping of keys, got {type(raw).__name__}")
    for key in raw:
        if key not in ENTRY_KEYS:
            raise ModelsFileError(f"{where}: unknown key {key!r}; known keys: {', '.join(ENTRY_KEYS)}")
    model = raw.get("model")
    if not isinstance(model, str) or "/" not in model:
        raise ModelsFileError(f"{where}: key 'model' must be a litellm model string like 'provider/name', got {model!r}")
    params = _mapping(where, raw, "params")
    reserved = RESERVED_PARAMS & set(params)
    if reserved:
        raise ModelsFileError(f"{where}: key 'params' may not set {sorted(reserved)}; the harness sets these")
    price = raw.get("price")
    if price is not None:
        price = _mapping(where, raw, "price")
        for key in price:
            if key not in PRICE_KEYS:
                raise ModelsFileError(f"{where}: key 'price.{key}' is unknown; use {', '.join(PRICE_KEYS)}")
        for key in PRICE_KEYS:
            value = price.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ModelsFileError(f"{where}: key 'price.{key}' must be a non-negative number, got {value!r}")
    for key in ("api_base", "api_base_env", "api_key_env", "description", "caveat"):
        if key in raw and not isinstance(raw[key], str):
            raise ModelsFileError(f"{where}: key {key!r} must be a string, got {raw[key]!r}")
    required_env = raw.get("required_env", [])
    if not isinstance(required_env, list) or not all(isinstance(v, str) for v in required_env):
        raise ModelsFileError(f"{where}: key 'required_env' must be a list of variable names")
    limits = _mapping(where, raw, "limits")
    try:
        Limits().merged(limits, f"{where}: key 'limits'")
    except ValueError as exc:
        raise ModelsFileError(str(exc)) from None
    server = raw.get("server")
    if server is not None:
        server = _mapping(where, raw, "server")
        if server.get("kind") not in SERVER_KINDS:
            kinds = " or ".join(repr(k) for k in SERVER_KINDS)
            raise ModelsFileError(f"{where}: key 'server.kind' must be {kinds}, got {server.get('kind')!r}")
    _check_context(where, params, server)
    max_concurrency = raw.get("max_concurrency")
    if max_concurrency is not None and (isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int)
                                        or max_concurrency < 1):
        raise ModelsFileError(f"{where}: key 'max_concurrency' must be a whole number of 1 or more, "
                              f"got {max_concurrency!r}")
    return ModelEntry(
        name=name,
        model=model,
        params=params,
        price={k: float(v) for k, v in price.items()} if price is not None else None,
        api_base=raw.get("api_base"),
        api_base_env=raw.get("api_base_env"),
        api_key_env=raw.get("api_key_env"),
        required_env=tuple(required_env),
        limits=limits,
        server=server,
        description=raw.get("description", ""),
        caveat=raw.get("caveat", ""),
        max_concurrency=max_concurrency,
    )


def _check_context(where: str, params: Mapping[str, Any], server: Mapping[str, Any] | None) -> None:
    """A reply may take at most half a llama.cpp slot's context: the rest holds the conversation (a first
    prompt of the benchmark is some 500 to 1,500 tokens, and each turn adds a reply and a tool result)."""
    ctx, most = (server or {}).get("ctx_size"), params.get("max_tokens")
    if (server or {}).get("kind") != "llama.cpp" or not isinstance(ctx, int) or not isinstance(most, int):
        return
    if most > ctx // 2:
        raise ModelsFileError(f"{where}: key 'params.max_tokens' ({most}) leaves too little of the server's context "
                              f"(server.ctx_size {ctx}) for the conversation; size them together: max_tokens at "
                              f"most {ctx // 2}, or ctx_size at least {2 * most}")


def _mapping(where: str, raw: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ModelsFileError(f"{where}: key {key!r} must be a mapping, got {type(value).__name__}")
    return dict(value)
