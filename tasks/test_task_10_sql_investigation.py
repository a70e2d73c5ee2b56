"""task_10 sql_investigation: a schema and a query log; find the failing query and its cause.

Measures investigation against a database. A nightly reporting job ran about
a dozen read-only queries and ended with one error whose message names a
column or table but not the query; several queries in the log mention that
name, and only one of them fails, for a reason the schema explains (the
column lives in another table, the column is ambiguous in a join, or the
table name is misspelt). The model can read the schema file and the log and
run queries on the SQLite database.

Answer contract (revision 5, in the prompt): the reply ends with three lines that hold the answer
alone, each of a closed form, read through ``pytest_agentic.run.answerlines``:

- ``QUERY: <query id>``: the failing query's id (``q-1a2b``, in any case, with or without ``q-``);
- ``CAUSE: <kind>``: one word of the set ``missing_column``, ``ambiguous_column``, ``missing_table``
  (spaces or dashes for the underscore, any case);
- ``NAMES: <name>, <name>``: schema names, ``table.column`` or ``table``, compared as a set (for
  ``missing_table`` as a pair in the prompt's order: a reversed pair calls the schema's table missing):
  for ``missing_column`` the column qualified by the table the query reads it from, which lacks it
  (``orders.billed_cents``); for ``ambiguous_column`` the column qualified by every joined table that
  has it (``customers.created_at, orders.created_at``); for ``missing_table`` the table the query
  names and the schema's table it meant (``line_item, line_items``).

What the lines must say is computed by running the failing query on the real database at build time
and reading the schema from it (``PRAGMA table_info``, ``sqlite_master``), never written by hand.
Copying the error cannot pass: the error names neither the table that lacks the column, nor the
tables that share it, nor the table that was meant. No verdict reads a sentence: a ``CAUSE:`` line
without one of the three words fails as ``answer_format``; so does a judged line with a note (in
brackets, after a dash, alone in brackets under it, a footnote) or with words beyond its form
(``missing_column on invoices``), whatever they say. Hedges fail (the shared rule of ``answerlines``:
another query id or kind on any judged line); so does a judged line that names a table or column of
the schema outside its ``NAMES:`` answer.
The rest of the reply is free: other ids ruled out, quoted log lines, the fixed query, the reasoning.
"""

from __future__ import annotations

import random
import re
import sqlite3

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import answerlines

_DBS = ["shop.db", "sales.db", "warehouse.db", "crm.db", "store.db"]
_JOBS = ["nightly_revenue", "daily_kpis", "finance_rollup", "ops_report"]
_ORDER_MONEY = ["amount_cents", "net_cents", "value_cents"]
_INVOICE_MONEY = ["total_cents", "gross_cents", "billed_cents"]
_STAMP = ["created_at", "inserted_at", "created_on"]
_ITEMS = [("order_items", "order_item"), ("order_lines", "order_line"), ("line_items", "line_item")]
_REGIONS = ["north", "south", "east", "west"]
_STATUSES = ["paid", "paid", "paid", "pending", "refunded", "cancelled"]


def _schema(n: dict) -> str:
    return (
        "CREATE TABLE customers (\n"
        "    id INTEGER PRIMARY KEY,\n"
        "    name TEXT NOT NULL,\n"
        "    email TEXT,\n"
        "    region TEXT NOT NULL,\n"
        f"    {n['ts']} TEXT NOT NULL\n"
        ");\n"
        "CREATE TABLE orders (\n"
        "    id INTEGER PRIMARY KEY,\n"
        "    customer_id INTEGER NOT NULL REFERENCES customers(id),\n"
        "    status TEXT NOT NULL,\n"
        f"    {n['oc']} INTEGER NOT NULL,\n"
        f"    {n['ts']} TEXT NOT NULL\n"
        ");\n"
        "CREATE TABLE invoices (\n"
        "    id INTEGER PRIMARY KEY,\n"
        "    order_id INTEGER NOT NULL REFERENCES orders(id),\n"
        f"    {n['ic']} INTEGER NOT NULL,\n"
        "    issued_at TEXT NOT NULL,\n"
        "    paid_at TEXT\n"
        ");\n"
        "CREATE TABLE products (\n"
        "    id INTEGER PRIMARY KEY,\n"
        "    sku TEXT NOT NULL UNIQUE,\n"
        "    title TEXT NOT NULL,\n"
        "    price_cents INTEGER NOT NULL\n"
        ");\n"
        f"CREATE TABLE {n['items']} (\n"
        "    order_id INTEGER NOT NULL REFERENCES orders(id),\n"
        "    product_id INTEGER NOT NULL REFERENCES products(id),\n"
        "    qty INTEGER NOT NULL,\n"
        "    unit_price_cents INTEGER NOT NULL\n"
        ");\n"
    )


def _database(rng: random.Random, n: dict, schema: str) -> bytes:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA page_size = 4096")
        conn.executescript(schema)
        first = ["Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lou"]
        last = ["Stone", "Reed", "Marsh", "Vale", "Frost", "Hart", "Lowe", "Pike"]
        for cid in range(1, 25):
            name = f"{rng.choice(first)} {rng.choice(last)}"
            conn.execute(f"INSERT INTO customers (id, name, email, region, {n['ts']}) VALUES (?, ?, ?, ?, ?)",
                         (cid, name, f"{name.split()[0].lower()}{cid}@example.com", rng.choice(_REGIONS),
                          f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"))
        for pid in range(1, 11):
            conn.execute("INSERT INTO products VALUES (?, ?, ?, ?)",
                         (pid, f"SKU-{100 + pid}", f"Product {pid}", rng.randint(3, 90) * 100 + 99))
        invoice_id = 1
        for oid in range(1, 71):
            status = rng.choice(_STATUSES)
            amount = rng.randint(10, 400) * 100 + rng.choice([0, 50, 99])
            day = f"2026-03-{rng.randint(1, 31):02d}"
            conn.execute(f"INSERT INTO orders (id, customer_id, status, {n['oc']}, {n['ts']}) VALUES (?, ?, ?, ?, ?)",
                         (oid, rng.randint(1, 24), status, amount, day))
            for _ in range(rng.randint(1, 3)):
                conn.execute(f"INSERT INTO {n['items']} VALUES (?, ?, ?, ?)",
                             (oid, rng.randint(1, 10), rng.randint(1, 4), rng.randint(3, 90) * 100 + 99))
            if status != "cancelled":
                paid = f"2026-04-{rng.randint(1, 9):02d}" if status == "paid" else None
                conn.execute(f"INSERT INTO invoices (id, order_id, {n['ic']}, issued_at, paid_at) VALUES (?, ?, ?, ?, ?)",
                             (invoice_id, oid, amount + rng.choice([0, 0, 500, 1900]), day, paid))
                invoice_id += 1
        conn.commit()
        data = bytearray(conn.serialize())
    finally:
        conn.close()
    # Bytes 96..99 hold the version of the SQLite library that wrote the file: pin them so
    # the canonical instance is the same bytes whatever SQLite this machine has.
    data[96:100] = (3045000).to_bytes(4, "big")
    return bytes(data)


def _queries(n: dict, rng: random.Random) -> dict[str, str]:
    r = rng.choice(_REGIONS)
    return {
        "customers_in_region": f"SELECT COUNT(*) FROM customers WHERE region = '{r}'",
        "orders_by_status": "SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY status",
        "paid_revenue": f"SELECT SUM({n['oc']}) FROM orders WHERE status = 'paid'",
        "unpaid_invoices": f"SELECT COUNT(*), SUM({n['ic']}) FROM invoices WHERE paid_at IS NULL",
        "refunded_invoices": (f"SELECT i.id, i.{n['ic']} FROM invoices i JOIN orders o ON o.id = i.order_id "
                              "WHERE o.status = 'refunded' ORDER BY i.id"),
        "revenue_by_region": (f"SELECT c.region, SUM(o.{n['oc']}) FROM customers c JOIN orders o "
                              "ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region"),
        "top_skus": (f"SELECT p.sku, SUM(li.qty) FROM {n['items']} li JOIN products p ON p.id = li.product_id "
                     "GROUP BY p.sku ORDER BY 2 DESC LIMIT 5"),
        "recent_orders": f"SELECT COUNT(*) FROM orders WHERE {n['ts']} >= '2026-03-15'",
        "late_march_buyers": (f"SELECT c.name, o.{n['ts']} FROM customers c JOIN orders o ON o.customer_id = c.id "
                              f"WHERE o.{n['ts']} >= '2026-03-25' ORDER BY o.{n['ts']}, c.name"),
        "old_customers": f"SELECT COUNT(*) FROM customers WHERE {n['ts']} < '2025-07-01'",
        "avg_line_value": f"SELECT AVG(unit_price_cents * qty) FROM {n['items']}",
        "largest_invoice": f"SELECT MAX({n['ic']}) FROM invoices",
        "paying_customers": "SELECT COUNT(DISTINCT customer_id) FROM orders WHERE status = 'paid'",
    }


#: The words a ``CAUSE:`` line may hold, one per kind of failure.
KINDS = ("missing_column", "ambiguous_column", "missing_table")


def _family(kind: str, n: dict) -> tuple[str, list[str], str, str]:
    """(the failing query, the valid queries that mention the same name, the error, the cause in words)."""
    if kind == "missing_column":
        sql = (f"SELECT substr({n['ts']}, 1, 7) AS month, SUM({n['ic']}) FROM orders "
               "WHERE status = 'paid' GROUP BY month ORDER BY month")
        why = (f"`orders` has no column `{n['ic']}`: that column belongs to `invoices`; "
               f"the order amount is `orders.{n['oc']}`.")
        return sql, ["unpaid_invoices", "refunded_invoices", "largest_invoice"], f"no such column: {n['ic']}", why
    if kind == "ambiguous_column":
        sql = (f"SELECT c.region, COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.id "
               f"WHERE {n['ts']} >= '2026-03-01' GROUP BY c.region ORDER BY c.region")
        why = (f"`{n['ts']}` is ambiguous in that join: both `customers` and `orders` have a `{n['ts']}` "
               f"column and the WHERE clause does not say which (it should be `o.{n['ts']}`).")
        return sql, ["late_march_buyers", "recent_orders", "old_customers"], f"ambiguous column name: {n['ts']}", why
    sql = (f"SELECT o.id, SUM(li.qty) FROM orders o JOIN {n['item']} li ON li.order_id = o.id "
           "GROUP BY o.id ORDER BY 2 DESC, o.id LIMIT 10")
    why = f"there is no table `{n['item']}`; the schema calls it `{n['items']}`."
    return sql, ["top_skus", "avg_line_value"], f"no such table: {n['item']}", why


def _names(conn: sqlite3.Connection, kind: str, n: dict) -> tuple[list[str], list[str]]:
    """What the ``NAMES:`` line must hold, read from the database itself; and every table and column name
    of the schema, with the name of the error (what a judged line may not name besides its answer)."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    columns = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
    if kind == "missing_column":  # the failing query reads from orders alone
        assert n["ic"] not in columns["orders"] and n["ic"] in columns["invoices"]
        names = [f"orders.{n['ic']}"]
    elif kind == "ambiguous_column":  # the failing query joins customers and orders
        names = [f"{t}.{n['ts']}" for t in ("customers", "orders") if n["ts"] in columns[t]]
        assert len(names) == 2
    else:
        assert n["item"] not in tables and n["items"] in tables
        names = [n["item"], n["items"]]
    known = sorted({*tables, *(c for cs in columns.values() for c in cs), n["ic"], n["item"]})
    return names, known


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_10:{seed}")
    items, item = rng.choice(_ITEMS)
    n = {"oc": rng.choice(_ORDER_MONEY), "ic": rng.choice(_INVOICE_MONEY), "ts": rng.choice(_STAMP),
         "items": items, "item": item}
    db_name, job = rng.choice(_DBS), rng.choice(_JOBS)
    kind = rng.choice(["missing_column", "ambiguous_column", "missing_table"])
    schema = _schema(n)
    db = _database(rng, n, schema)
    pool = _queries(n, rng)
    bad_sql, related, error, why = _family(kind, n)

    others = [k for k in pool if k not in related]
    chosen = rng.sample(others, 7) + related
    rng.shuffle(chosen)
    position = rng.randint(2, len(chosen) - 2)  # never first, never last
    names = chosen[:position] + ["FAILING"] + chosen[position:]
    ids: list[str] = []
    while len(ids) < len(names):
        qid = f"{rng.getrandbits(16):04x}"
        if qid not in ids and re.search(r"[a-f]", qid) and re.search(r"\d", qid):
            ids.append(qid)
    ids = [f"q-{i}" for i in ids]

    # run every query: exactly the failing one must fail, with the expected message
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(db)
        timings = []
        for name in names:
            sql = bad_sql if name == "FAILING" else pool[name]
            try:
                conn.execute(sql).fetchall()
                assert name != "FAILING", f"the failing query of {kind} did not fail"
            except sqlite3.OperationalError as exc:
                assert name == "FAILING" and str(exc) == error, f"{name}: {exc}"
            timings.append(rng.randint(2, 90))
        names_, known = _names(conn, kind, n)
    finally:
        conn.close()

    hh, mm = rng.randint(0, 3), rng.randint(0, 50)
    ms = rng.randint(0, 900)
    log = [f"[0{hh}:{mm:02d}:00.{ms:03d}] {job}: starting, {len(names)} queries against {db_name}"]
    t = mm * 60_000 + ms
    for qid, name, took in zip(ids, names, timings):
        t += rng.randint(40, 400)
        sql = bad_sql if name == "FAILING" else pool[name]
        stamp = f"0{hh}:{t // 60_000:02d}:{t % 60_000 // 1000:02d}.{t % 1000:03d}"
        log.append(f"[{stamp}] {qid} submitted ({took} ms)\n    {sql};")
    t += rng.randint(100, 900)
    stamp = f"0{hh}:{t // 60_000:02d}:{t % 60_000 // 1000:02d}.{t % 1000:03d}"
    log.append(f"[{stamp}] {job}: finished with 1 error: sqlite3.OperationalError: {error} "
               "(the query id was not recorded)")
    log_text = "\n".join(log) + "\n"

    target = ids[names.index("FAILING")]
    last = ids[-1]
    valid_name = next(r for r in related if ids[names.index(r)] != last)
    valid = ids[names.index(valid_name)]
    log_path = f"logs/{job}.log"
    prompt = (
        f"Last night's `{job}` job failed. Its log is `{log_path}`; it ran its queries against the SQLite "
        f"database `{db_name}`, whose schema is in `schema.sql`. Find the query that failed and explain why it "
        "failed. End your reply with these three lines, which hold the answer alone (no other query id, kind "
        f"or schema name on them). {answerlines.ALONE}\n"
        "`QUERY: <query id>`: the id of the failing query, as written in the log (like `q-1a2b`);\n"
        "`CAUSE: <kind>`: one word: `missing_column` (the query reads a column that the table it reads it "
        "from does not have), `ambiguous_column` (the query names, unqualified, a column that more than one "
        "of its joined tables has) or `missing_table` (the query names a table the schema does not have);\n"
        "`NAMES: <names>`: the schema names of the cause, comma-separated: for `missing_column` the column "
        "qualified by the table the query reads it from (like `accounts.balance`); for `ambiguous_column` the "
        "column qualified by each joined table that has it (like `users.id, teams.id`); for `missing_table` "
        "the table the query names, then the schema's table it meant (like `person, people`)."
    )
    probe = {
        "missing_column": "PRAGMA table_info(orders)",
        "ambiguous_column": "PRAGMA table_info(customers)",
        "missing_table": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    }[kind]
    answer = f"CAUSE: {kind}\nNAMES: {', '.join(names_)}"
    reference = [
        ToolCall("fs_list", {"path": "."}),
        [ToolCall("fs_read", {"path": log_path}), ToolCall("fs_read", {"path": "schema.sql"})],
        ToolCall("sql_query", {"database": db_name, "query": probe}),
        Final(f"The failing query is {target}: {why}\n\nQUERY: {target}\n{answer}"),
    ]
    valid_text = pool[valid_name]
    #: A plausible wrong set of names: the table that has the column, one of the two tables, a column of orders.
    wrong_names = {"missing_column": f"invoices.{n['ic']}", "ambiguous_column": f"orders.{n['ts']}",
                   "missing_table": f"orders.{n['item']}"}[kind]
    wrong_kind = {"missing_column": "ambiguous_column", "ambiguous_column": "missing_column",
                  "missing_table": "missing_column"}[kind]
    name = error.rsplit(": ", 1)[1]
    near_misses = {
        # The query logged right before the failure line: last, but not guilty.
        "last_query_logged": [ToolCall("fs_read", {"path": log_path}),
                              Final(f"The job died on the last query, {last}.\nQUERY: {last}\n{answer}")],
        # A query that uses the name from the error message, where it is valid.
        "valid_use_of_the_name": [
            ToolCall("fs_read", {"path": log_path}),
            Final(f"{valid} fails: `{valid_text}` raises `{error}`.\n\nQUERY: {valid}\n{answer}")],
        # The right query, hedged with another one.
        "hedged": [ToolCall("fs_read", {"path": log_path}),
                   Final(f"It is {target} or {valid}; both use the name from the error.\n\n"
                         f"QUERY: {target} or {valid}\n{answer}")],
        # The right query and kind, the wrong names: where the name lives, or half of the ambiguity.
        "wrong_names": [ToolCall("fs_read", {"path": log_path}),
                        Final(f"{target} failed.\n\nQUERY: {target}\nCAUSE: {kind}\nNAMES: {wrong_names}")],
        # The right query and names, the wrong kind of failure.
        "wrong_kind": [ToolCall("fs_read", {"path": log_path}),
                       Final(f"{target} failed.\n\nQUERY: {target}\nCAUSE: {wrong_kind}\nNAMES: {', '.join(names_)}")],
        # The error message copied onto the lines: its kind in its own words, its one name.
        "error_copied": [ToolCall("fs_read", {"path": log_path}),
                         Final(f"{target} failed with {error}.\n\nQUERY: {target}\nCAUSE: {kind}\nNAMES: {name}")],
        # The right query, but a cause in a sentence (issue 24, case 1): no kind word, nothing to judge.
        "cause_in_a_sentence": [ToolCall("fs_read", {"path": log_path}),
                                Final(f"{target} failed.\n\nQUERY: {target}\n"
                                      "CAUSE: its GROUP BY clause lists a column the SELECT does not return.")],
    }
    return TaskInstance(
        prompt=prompt,
        files={db_name: db, "schema.sql": schema, log_path: log_text},
        tools=("fs_list", "fs_read", "sql_query"),
        expected={"query_id": target, "all_ids": ids, "error": error, "kind": kind, "names": names_, "known": known,
                  "decoys": {last: "the last query logged", valid: "a valid use of the same name"}},
        reference=reference,
        near_misses=near_misses,
    )


_QID = re.compile(r"(?<![0-9a-z])(q\s*-?\s*)?([0-9a-f]{4})(?![0-9a-z])", re.IGNORECASE)


def query_ids(value: str) -> list[str]:
    """The query ids a ``QUERY:`` value names (``q-1a2b``, ``Q-1A2B``, ``1a2b``), each as ``q-1a2b``: four hex
    digits written with ``q-``, or holding a letter and a digit as every id of the log does."""
    return [f"q-{m[2].lower()}" for m in _QID.finditer(value)
            if m[1] or (re.search(r"[a-f]", m[2], re.I) and re.search(r"\d", m[2]))]


_KIND = re.compile(r"(?<![a-z0-9])(missing|ambiguous)[\s_-]+(column|table)(?![a-z0-9])", re.IGNORECASE)
_REF = re.compile(r"(?<![\w.-])([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)(?![\w-])", re.IGNORECASE)


def kinds(value: str) -> list[str]:
    """The kinds of failure a ``CAUSE:`` value names, of :data:`KINDS` (``missing_column``, ``Missing column``)."""
    return [k for k in (f"{a}_{b}".lower() for a, b in _KIND.findall(value)) if k in KINDS]


def names(value: str) -> list[frozenset[str]]:
    """The set of schema names a ``NAMES:`` value gives (``orders.billed_cents``; ``a.x, b.x``; ``t, ts``), as
    one candidate: lower-cased, separated by commas, spaces or "and"."""
    refs = frozenset(r.lower() for r in _REF.findall(value) if r.lower() != "and")
    return [refs] if refs else []


def _names_in(known: list[str]) -> answerlines.Parser:
    """What a ``NAMES:`` line offers: the set of schema names (:func:`names`) of each part of its value that
    "or" separates ("a.x or b.x": two candidates, a hedge); a word that is no schema name is not read here,
    and puts the line out of form (:func:`_names_form`)."""
    schema = set(known)

    def offered(value: str) -> list[frozenset[str]]:
        sets = [frozenset(n for n in refs if n in schema or any(p in schema for p in n.split(".")[:1]))
                for part in re.split(r"(?i)\bor\b", value) for refs in names(part)]
        return list(dict.fromkeys(s for s in sets if s))
    return offered


def _names_form(known: list[str]) -> str:
    """A ``NAMES:`` value as written: schema names (a table, a column, ``table.column``; the query's missing
    table too), separated by commas or "and"; any other word is no schema name and puts the line out of form."""
    word = "|".join(re.escape(k) for k in sorted(known, key=len, reverse=True))
    return rf"(?<![\w.])(?:{word})(?:\.\w+)?(?![\w.])|\band\b"


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a reply whose three lines name the failing query, the kind of its failure and its schema names."""
    exp = instance.expected
    reply = run.final_answer or ""
    fields = (answerlines.Field("query", "QUERY:", query_ids, form=_QID.pattern),
              answerlines.Field("cause", "CAUSE:", kinds, form=_KIND.pattern),
              answerlines.Field("names", "NAMES:", _names_in(exp["known"]), mentions=lambda text: [],  # read below
                                form=_names_form(exp["known"])))
    given, kind, named = answerlines.sheet(reply, *fields)
    role = exp["decoys"].get(given, "a query that succeeded" if given in exp["all_ids"] else "no query of the log")
    assert given == exp["query_id"], f"the QUERY: line names {given} ({role}), not the query that failed"
    # an answer line (one that gives a value of its form) may name no table or column of the schema
    # besides those of the NAMES: answer: "missing_column (otherwise ... on invoices)" is a hedge
    allowed = {part for ref in named for part in ref.split(".")}
    known = set(exp["known"])
    for f in fields:
        for line in answerlines.find(reply, f.label, [o.label for o in fields if o is not f]):
            if not f.candidates(line.value):
                continue  # prose that starts with a label ("Cause: it reads ..."): no answer line
            extra = [r for r in _REF.findall(line.text) if r.lower() in known and r.lower() not in allowed
                     or "." in r and all(p in known for p in r.lower().split(".")) and r.lower() not in named]
            assert not extra, (f"the `{f.shown}` line names {extra[0]} besides the NAMES: answer ({line.text!r}): "
                               "a second candidate on a judged line is a hedge")
    assert kind == exp["kind"], f"the CAUSE: line says {kind}, but the query fails with {exp['error']!r} ({exp['kind']})"
    want = frozenset(exp["names"])
    assert named == want, (
        f"the NAMES: line gives {', '.join(sorted(named))}, but the names of the cause are {', '.join(sorted(want))}"
        + (" (the error's own words name neither table)" if len(named) == 1 and "." not in next(iter(named)) else ""))
    if kind == "missing_table":  # two roles, in the order the prompt gives: the table named, then the one meant
        named_first, meant = exp["names"]
        for line in answerlines.find(reply, fields[2].label, [fields[0].label, fields[1].label]):
            order = [r.lower() for r in _REF.findall(line.value) if r.lower() != "and"]
            if names(line.value) and order[0] != named_first:
                raise AssertionError(
                    f"the NAMES: line gives {order[0]} first, as the table the query names, but {order[0]} is the "
                    f"schema's table; the query names {named_first} (missing), meant {meant}")


@task("task_10", "sql_investigation", build=build, limits={"max_turns": 14})
def test_sql_investigation(agent):
    """A schema and a query log; find the failing query and its cause."""
    run = agent.run()
    check(agent.instance, run)
