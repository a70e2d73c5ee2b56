"""task_03 investigate_log: read a service log, find the entry that caused an incident, name it.

Measures careful reading over pattern matching. The log has a few hundred
entries of plausible noise: request lines, periodic stats, a recurring
upstream timeout that is retried and succeeds, token refreshes, harmless
configuration reloads. The root cause is a single INFO-level configuration
change; its consequences (warnings, then errors) follow it, and a harmless
reload sits between the cause and the first error, so neither "grep ERROR"
nor "the last change before the first error" finds it.

Answer contract (revision 5, in the prompt): the reply ends with the line
``ANSWER: <event id>``, and only that line is judged (``pytest_agentic.run.answerlines``, its
form and hedge rules): it must hold the root-cause event's id (in any case, or as ``id=<id>``,
``event <id>``) and nothing else: a note on the line (brackets, a dash, a footnote, other words)
fails as ``answer_format``, whatever it says. The rest of the reply is free: the one-sentence why,
other ids named to rule them out, quoted log lines, above the line. Two ``ANSWER:`` lines that
disagree, or one that names two ids, is a hedge and fails; no ``ANSWER:`` line fails as
``answer_format``.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import answerlines

_SERVICES = ["storefront", "checkout", "catalog", "accounts", "booking", "ledger-api"]
_PATHS = ["/v1/orders", "/v1/products", "/v1/cart", "/v1/users", "/v1/search", "/v1/invoices"]
_BENIGN = [
    ("feature.new_search_ui", "false", "true"),
    ("log.sample_rate", "0.05", "0.10"),
    ("email.digest_hour", "6", "7"),
    ("feature.dark_mode", "off", "on"),
    ("metrics.flush_interval_s", "10", "15"),
    ("feature.gift_cards", "false", "true"),
    ("ui.banner_text", "'spring'", "'summer'"),
]


def _scenario(rng: random.Random, kind: str) -> dict:
    if kind == "pool":
        old, new = rng.randint(30, 60), rng.randint(3, 6)
        return {
            "key": "db.pool.max_size", "old": str(old), "new": str(new),
            "stats": lambda r, after: (
                "db", f"pool stats: in_use={new if after else r.randint(5, old // 2)}/{new if after else old} "
                      f"waiting={r.randint(8, 40) if after else 0}"),
            "warn": lambda r: ("db", f"waited {r.randint(900, 4800)}ms for a connection (pool {new}/{new} busy)"),
            "error": lambda r: ("api", f"{r.choice(['GET', 'POST'])} {r.choice(_PATHS)}/{r.randint(1000, 9999)} "
                                       f"503 connection pool exhausted ({r.randint(3000, 5000)}ms)"),
            "why": f"it cut the database connection pool from {old} to {new}, so requests queued for connections "
                   "and then failed with 503 pool exhausted",
        }
    if kind == "cache":
        old = rng.choice([120, 300, 600])
        return {
            "key": "cache.ttl_seconds", "old": str(old), "new": "0",
            "stats": lambda r, after: (
                "cache", f"hit ratio {r.uniform(0.0, 0.04) if after else r.uniform(0.88, 0.97):.2f} "
                         f"entries={r.randint(0, 40) if after else r.randint(9000, 12000)}"),
            "warn": lambda r: ("db", f"slow query {r.randint(1500, 6000)}ms: SELECT * FROM products WHERE id = "
                                     f"{r.randint(1000, 9999)}"),
            "error": lambda r: ("api", f"GET /v1/products/{r.randint(1000, 9999)} 504 upstream timeout after 5000ms"),
            "why": f"it set the cache TTL from {old}s to 0, so every read missed the cache and went to the database, "
                   "which slowed down until requests timed out",
        }
    old, new = rng.choice([6000, 3000, 12000]), rng.choice([60, 30, 120])
    return {
        "key": "ratelimit.requests_per_minute", "old": str(old), "new": str(new),
        "stats": lambda r, after: (
            "gateway", f"rate limiter: {r.randint(40, 90) if after else 0} clients throttled in the last minute"),
        "warn": lambda r: ("gateway", f"throttled client c-{r.randint(100, 999)} (limit {new}/min)"),
        "error": lambda r: ("api", f"POST /v1/checkout 429 too many requests for client c-{r.randint(100, 999)}"),
        "why": f"it lowered the rate limit from {old} to {new} requests per minute, so normal clients were "
               "throttled and got 429 errors",
    }


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_03:{seed}")
    service = rng.choice(_SERVICES)
    kind = rng.choice(["pool", "cache", "ratelimit"])
    sc = _scenario(rng, kind)
    n_lines = rng.randint(280, 340)
    cause_at = int(n_lines * rng.uniform(0.5, 0.72))
    first_warn_at = cause_at + rng.randint(4, 7)
    benign_at = cause_at + rng.randint(1, 3)  # a harmless reload between the cause and the symptoms
    first_error_at = first_warn_at + rng.randint(3, 6)
    benign = rng.sample(_BENIGN, 4)
    early_benign = sorted(rng.sample(range(10, cause_at - 10), 3))

    t = datetime(2026, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 22), rng.randint(0, 59),
                 rng.randint(0, 59), rng.randint(0, 999) * 1000)
    ids: list[str] = []
    seen: set[str] = set()
    entries: list[tuple[str, str, str]] = []  # (level, component, message)
    retry_pending = 0  # the txn whose retry is due
    for i in range(n_lines):
        after = i > cause_at
        if i == cause_at:
            entry = ("INFO", "config", f"reloaded {sc['key']}: {sc['old']} -> {sc['new']} (source=ops-console)")
        elif i == benign_at:
            k, a, b = benign[3]
            entry = ("INFO", "config", f"reloaded {k}: {a} -> {b} (source=ops-console)")
        elif i in early_benign:
            k, a, b = benign[early_benign.index(i)]
            entry = ("INFO", "config", f"reloaded {k}: {a} -> {b} (source=ops-console)")
        elif i == first_warn_at:
            entry = ("WARN", *sc["warn"](rng))
        elif i == first_error_at:
            entry = ("ERROR", *sc["error"](rng))
        elif retry_pending:
            entry = ("INFO", "payments", f"ledger call succeeded on attempt 2 (txn t-{retry_pending})")
            retry_pending = 0
        else:
            roll = rng.random()
            if i > first_error_at and roll < 0.22:
                entry = ("ERROR", *sc["error"](rng))
            elif i > first_warn_at and roll < 0.34:
                entry = ("WARN", *sc["warn"](rng))
            elif roll < 0.40 and i % 3 == 0:
                entry = ("INFO", *sc["stats"](rng, after))
            elif roll < 0.45:
                retry_pending = rng.randint(10000, 99999)
                entry = ("ERROR", "payments", f"ledger call timed out after 2000ms (attempt 1/3), retrying txn t-{retry_pending}")
            elif roll < 0.50:
                entry = ("WARN", "auth", f"token expired for user u{rng.randint(1000, 9999)}; refreshed")
            elif roll < 0.53:
                entry = ("INFO", "scheduler", f"job {rng.choice(['cleanup_sessions', 'send_digests', 'rotate_keys'])} "
                                              f"finished in {rng.randint(40, 900)}ms")
            elif roll < 0.57:
                entry = ("WARN", "api", f"GET {rng.choice(_PATHS)}/{rng.randint(1000, 9999)} 404 not found "
                                        f"(ua=bot/{rng.randint(1, 9)}.{rng.randint(0, 9)})")
            else:
                method = rng.choice(["GET", "GET", "GET", "POST", "PUT"])
                status = {"GET": 200, "POST": 201, "PUT": 204}[method]
                ms = rng.randint(8, 140) if not after else rng.randint(30, 900)
                entry = ("INFO", "api", f"{method} {rng.choice(_PATHS)}/{rng.randint(1000, 9999)} {status} {ms}ms")
        while True:
            eid = f"{rng.getrandbits(32):08x}"
            if eid not in seen and not eid.isdigit():
                break
        seen.add(eid)
        ids.append(eid)
        entries.append(entry)
    lines = []
    for i, (level, comp, msg) in enumerate(entries):
        t += timedelta(milliseconds=rng.randint(150, 2600))
        if i == first_error_at:
            incident_time = t
        lines.append(f"{t.isoformat(timespec='milliseconds')}Z {level:<5} {comp:<9} id={ids[i]} {msg}")
    log = "\n".join(lines) + "\n"

    target = ids[cause_at]
    first_error = ids[first_error_at]
    benign_change = ids[benign_at]
    recurring = [ids[i] for i, e in enumerate(entries[:cause_at]) if e[1] == "payments" and e[0] == "ERROR"]
    recurring_error = recurring[-1] if recurring else ids[early_benign[0]]
    path = f"logs/{service}.log"
    prompt = (
        f"Since about {incident_time.strftime('%H:%M')} UTC the `{service}` service has been failing requests. "
        f"Its log is in `{path}`. Exactly one entry in that log is the root cause of the incident; the other "
        "entries are routine noise or consequences of it. Find the root-cause entry and reply with its event id "
        "(the `id=` field) and one sentence on why it caused the failures. End your reply with the line "
        f"`ANSWER: <event id>`, naming only that one event id. {answerlines.ALONE}"
    )
    answer = (f"The root cause is event id={target}: {sc['key']} was changed from {sc['old']} to {sc['new']}; "
              f"{sc['why']}.\n\nANSWER: {target}")
    reference = [
        ToolCall("fs_list", {"path": "."}),
        ToolCall("fs_read", {"path": path}),
        Final(answer),
    ]
    near_misses = {
        # The first error the customers saw: a consequence, not the cause.
        "first_error": [ToolCall("fs_read", {"path": path}),
                        Final(f"The incident starts with event {first_error}, the first failing request.\n"
                              f"ANSWER: {first_error}")],
        # The loudest recurring error, which is retried and succeeds all day long.
        "recurring_error": [ToolCall("fs_read", {"path": path}),
                            Final(f"Event `{recurring_error}`: the ledger call timed out; that is the root cause."
                                  f"\n\n**ANSWER:** `{recurring_error}`")],
        # The configuration change nearest before the errors, which is harmless.
        "last_change_before_errors": [
            ToolCall("fs_read", {"path": path}),
            Final(f"The root cause is the configuration reload id={benign_change} just before the errors."
                  f"\n\nANSWER: id={benign_change}")],
        # The right entry, hedged with a wrong one.
        "hedged": [ToolCall("fs_read", {"path": path}),
                   Final(f"Either {target} (the {sc['key']} change) or {first_error} (the first error) caused it."
                         f"\n\nANSWER: {target} or {first_error}")],
    }
    return TaskInstance(
        prompt=prompt,
        files={path: log},
        tools=("fs_list", "fs_read"),
        expected={"event_id": target, "all_ids": ids, "key": sc["key"],
                  "decoys": {"first_error": first_error, "recurring_error": recurring_error,
                             "benign_change": benign_change}},
        reference=reference,
        near_misses=near_misses,
    )


_ANSWER_ID = re.compile(r"(?<![0-9a-z])([0-9a-f]{8})(?![0-9a-z])", re.IGNORECASE)
#: The line's value as written: the id, as ``id=<id>`` or ``event <id>`` too.
_FORM = rf"(?:event\s*)?(?:id\s*[=:#]?\s*)?{_ANSWER_ID.pattern}"


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a reply whose ``ANSWER:`` line names the root-cause event id (and no other id)."""
    exp = instance.expected
    given = answerlines.token(run.final_answer or "", "answer", "ANSWER:", _ANSWER_ID, _FORM)
    roles = {v: k.replace("_", " ") for k, v in exp["decoys"].items()}
    role = roles.get(given, "another entry" if given in exp["all_ids"] else "no event of the log")
    assert given == exp["event_id"], f"the ANSWER: line names {given} ({role}), not the root cause"


@task("task_03", "investigate_log", build=build, limits={"max_turns": 10})
def test_investigate_log(agent):
    """Read a log, find the anomalous entry that caused the incident, name it."""
    run = agent.run()
    check(agent.instance, run)
