"""What litellm and the endpoint say of a ``models.yaml`` entry, asked once before the first run.

The controller asks at session start (``Controller.pytest_sessionstart``): whether litellm knows the
provider the entry's ``model`` names (``litellm.provider_list`` and the custom providers), whether it
knows each call parameter for that provider (``litellm.get_supported_openai_params`` and litellm's own
keyword arguments), and, where the endpoint lists its models (``GET {api_base}/models``), whether it
serves the one the entry names. Each finding names the file, the entry and the key; a parameter
finding is a warning, not an error, where the entry sets ``drop_params``. Scripted models are not
asked: they reach no provider.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..limits import Deadline
from ..models import ModelEntry
from . import llm

#: Seconds the models list of an endpoint may take, all of it (a dripping endpoint is given up on).
LIST_TIMEOUT_S = 10.0
#: Bytes of the models list read at most.
LIST_MAX_BYTES = 1 << 20
#: Keyword arguments ``litellm.completion`` reads from its ``**kwargs`` that neither list below names.
_KWARGS = ("extra_body", "drop_params", "additional_drop_params")

#: The name each entry's provider is asked for, by ``model``, as litellm said (now or in a session before).
_SERVED: dict[str, str] = {}


@dataclass(frozen=True)
class Finding:
    message: str
    #: False: a warning (the session goes on), True: the session stops.
    error: bool = True


class Unreachable(Exception):
    """No connection could be made to the endpoint."""


def where(path: Path, entry: ModelEntry) -> str:
    if entry.variant_of:
        return f"{path}: entry {entry.variant_of!r}, variant {entry.variant!r}"
    return f"{path}: entry {entry.name!r}"


def _suggest(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def providers(litellm: Any) -> list[str]:
    """The provider prefixes litellm routes: its own list and the custom providers installed."""
    names = [getattr(p, "value", p) for p in litellm.provider_list]
    names += [c["provider"] for c in (litellm.custom_provider_map or [])]
    return [str(n) for n in names]


def provider_of(litellm: Any, path: Path, entry: ModelEntry) -> tuple[str, str] | Finding:
    """(provider, the model name the provider is asked for), or why litellm cannot route the entry."""
    prefix = entry.model.split("/", 1)[0]
    known = providers(litellm)
    if prefix not in known:
        return Finding(f"{where(path, entry)}: key 'model': {entry.model!r} names provider {prefix!r}, which litellm "
                       f"does not know{_suggest(prefix, known)}; an OpenAI-compatible endpoint is "
                       "'openai/<the name it serves>' (litellm's providers: https://docs.litellm.ai/docs/providers)")
    try:
        served, provider, _, _ = litellm.get_llm_provider(model=entry.model)
    except Exception as exc:  # noqa: BLE001 - litellm's refusal, said with the entry's name
        return Finding(f"{where(path, entry)}: key 'model': litellm cannot route {entry.model!r}: "
                       f"{str(exc).strip().splitlines()[0][:200]}")
    _SERVED[entry.model] = str(served)  # for ``served_name``: litellm is not asked twice
    return str(provider), str(served)


def litellm_kwargs(litellm: Any) -> tuple[set[str], set[str]]:
    """(the OpenAI parameters litellm checks against a provider's support, the keyword arguments litellm
    itself reads whatever the provider: credentials, regions, timeouts, its own options)."""
    from litellm.constants import DEFAULT_CHAT_COMPLETION_PARAM_VALUES
    from litellm.types.utils import all_litellm_params

    own = set(all_litellm_params) | set(_KWARGS)
    own |= {p for p in inspect.signature(litellm.completion).parameters if p != "kwargs"}
    try:  # credentials and regions of the providers (aws_region_name, vertex_project, ...)
        from litellm.litellm_core_utils.get_litellm_params import OPTIONAL_KWARGS_KEYS

        own |= set(OPTIONAL_KWARGS_KEYS)
    except ImportError:  # pragma: no cover - a litellm that moved it: those are then unknown
        pass
    checked = set(DEFAULT_CHAT_COMPLETION_PARAM_VALUES) - set(all_litellm_params) - set(_KWARGS) - {"messages", "model"}
    return checked, own


def param_findings(litellm: Any, path: Path, entry: ModelEntry, provider: str, served: str) -> list[Finding]:
    """A finding for each call parameter litellm does not know, or that the provider does not support."""
    try:
        supported = set(litellm.get_supported_openai_params(model=served, custom_llm_provider=provider) or ())
    except Exception:  # noqa: BLE001 - litellm cannot tell: only unknown names are found
        supported = set()
    allowed = entry.params.get("allowed_openai_params")
    supported |= set(allowed) if isinstance(allowed, list) else set()
    checked, own = litellm_kwargs(litellm)
    found = []
    for key in entry.params:
        if key in supported:
            continue
        if key in checked:
            if not supported:
                continue  # litellm cannot tell what this provider supports
            why = (f"is an OpenAI parameter that litellm does not support for provider {provider!r} "
                   f"(it supports {', '.join(sorted(supported))}; or set drop_params: true to send the calls "
                   "without what the provider does not support)")
        elif key in own:
            continue
        else:
            why = (f"is not a call parameter litellm knows for provider {provider!r}"
                   f"{_suggest(key, sorted(supported | checked))}; a parameter only the endpoint knows "
                   "goes under 'params.extra_body'")
        if entry.params.get("drop_params"):
            found.append(Finding(f"{where(path, entry)}: key 'params.{key}' {why}; a warning only, as the entry "
                                 "sets drop_params", error=False))
        else:
            found.append(Finding(f"{where(path, entry)}: key 'params.{key}' {why}"))
    return found


def check_entry(path: Path, entry: ModelEntry) -> list[Finding]:
    """What litellm says of the entry: its provider, then its call parameters (none for scripted models)."""
    if entry.scripted:
        return []
    litellm = llm.litellm_module()
    routed = provider_of(litellm, path, entry)
    if isinstance(routed, Finding):
        return [routed]
    return param_findings(litellm, path, entry, *routed)


#: Where a clean entry is remembered in pytest's cache (``config.cache``), one key a check.
CACHE_PREFIX = "agentic/startcheck/"


def entry_key(entry: ModelEntry) -> str:
    """What litellm's answer on ``entry`` depends on: litellm's release, this module's code, the entry's model
    and call parameters (a hash; read without importing litellm)."""
    from importlib.metadata import version

    facts = {"litellm": version("litellm"), "check": _code_hash(), "model": entry.model, "params": entry.params}
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=repr).encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def _code_hash() -> str:
    """This module's source, hashed once a process: a change to the checks forgets what they found clean."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def check_entry_remembered(path: Path, entry: ModelEntry, cache: Any) -> list[Finding]:
    """``check_entry``, skipped for an entry litellm found clean before (same releases, same model and
    parameters: the answer cannot differ). Only a clean answer is kept, with the name litellm sends to the
    provider (``served_name``, which the endpoint's check reads), so a finding is always said afresh.

    It spares xdist's controller, which makes no model call, litellm's import (seconds of CPU while its
    workers start, and some 130 MB) on every session after the first.
    """
    if cache is None or entry.scripted:
        return check_entry(path, entry)
    key = CACHE_PREFIX + entry_key(entry)
    remembered = cache.get(key, None)
    if isinstance(remembered, dict) and isinstance(remembered.get("served"), str):
        _SERVED[entry.model] = remembered["served"]
        return []
    found = check_entry(path, entry)
    if not found:
        cache.set(key, {"served": served_name(entry)})
    return found


def served_name(entry: ModelEntry) -> str:
    """The model name the entry's provider is asked for (``litellm.get_llm_provider``), remembered."""
    if entry.model not in _SERVED:
        _SERVED[entry.model] = str(llm.litellm_module().get_llm_provider(model=entry.model)[0])
    return _SERVED[entry.model]


def served_models(api_base: str, api_key: str | None, timeout_s: float = LIST_TIMEOUT_S) -> list[dict[str, Any]] | None:
    """The models the endpoint lists at ``GET {api_base}/models``; None when it lists none (any answer but a
    200 with a JSON ``data`` list, or no whole answer in time). ``Unreachable`` when no connection is made."""
    request = urllib.request.Request(api_base.rstrip("/") + "/models", headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")

    def fetch() -> bytes | None:
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - the entry's URL
                return response.read(LIST_MAX_BYTES) if response.status == 200 else None
        except urllib.error.HTTPError:
            return None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                return None  # it answered the connection; a slow list is no verdict
            raise Unreachable(f"{type(reason).__name__}: {reason}") from None

    done, body = Deadline(fetch, "agentic-list-models").wait(timeout_s + 1)
    if not done or body is None:
        return None
    try:
        data = json.loads(body).get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _shown(name: str) -> str:
    """An endpoint-written model name, safe to print: escapes written out, bounded."""
    return repr(name[:100])


def endpoint_findings(path: Path, entry: ModelEntry, api_base: str, api_key: str | None,
                      base_key: str = "api_base") -> list[Finding]:
    """Whether the endpoint can be reached and, where it lists its models, serves the one the entry names."""
    if entry.scripted:
        return []
    try:
        listed = served_models(api_base, api_key)
    except Unreachable as exc:
        return [Finding(f"{where(path, entry)}: key {base_key!r}: the endpoint {api_base} cannot be reached "
                        f"({exc}); is it running, and is the URL right?")]
    if not listed:
        return []
    # llama.cpp's server serves its one model under any name it is asked for.
    if all(m.get("owned_by") == "llamacpp" for m in listed):
        return []
    provider_served = served_name(entry)
    ids = [m["id"] for m in listed]
    if provider_served in ids:
        return []
    shown = ", ".join(_shown(i) for i in ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
    prefix = entry.model.split("/", 1)[0]
    return [Finding(f"{where(path, entry)}: key 'model': the endpoint {api_base} does not serve {provider_served!r}; "
                    f"it serves {shown} (the name after '{prefix}/' must be one of these)")]
