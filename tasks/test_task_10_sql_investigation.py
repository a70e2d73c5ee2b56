"""task_10 sql_investigation: a schema and a query log; find the failing query and its cause.

Measures investigation against a database. A nightly reporting job ran about
a dozen read-only queries and ended with one error whose message names a
column or table but not the query; several queries in the log mention that
name, and only one of them fails, for a reason the schema explains (the
column lives in another table, the column is ambiguous in a join, or the
table name is misspelt). The model can read the schema file and the log and
run queries on the SQLite database.

Answer contract (revision 3, in the prompt): the reply ends with the lines
``QUERY: <query id>`` and ``CAUSE: <one sentence>``, and only those lines are judged
(``pytest_agentic.run.answerlines``). The ``QUERY:`` line must hold the failing query's id
(``q-1a2b``, in any case, with or without ``q-``) and no other. The ``CAUSE:`` line is free
text judged by the smallest rule that decides the claim, on that line alone: it names the
name from the error as a whole identifier (``line_item``, not ``line_items``), says what
the schema says of it in words of the error's kind (the table it is read from has no such
column / it is in two of the joined tables / the schema has no such table, or calls it
``line_items``), and gives no cause of another kind (a lock, a timeout) unless it denies it.
The rest of the reply is free: other ids ruled out, quoted log lines, the fixed query.
Lines that disagree, or a ``QUERY:`` line with two ids, is a hedge and fails; a missing line
fails as ``answer_format``.
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


#: family -> (failing query, the valid queries that mention the same name)
def _family(kind: str, n: dict) -> tuple[str, list[str], str, list[list[str]], str]:
    if kind == "missing_column":
        sql = (f"SELECT substr({n['ts']}, 1, 7) AS month, SUM({n['ic']}) FROM orders "
               "WHERE status = 'paid' GROUP BY month ORDER BY month")
        why = (f"`orders` has no column `{n['ic']}`: that column belongs to `invoices`; "
               f"the order amount is `orders.{n['oc']}`.")
        return sql, ["unpaid_invoices", "refunded_invoices", "largest_invoice"], \
            f"no such column: {n['ic']}", [[n["ic"]], ["orders"]], why
    if kind == "ambiguous_column":
        sql = (f"SELECT c.region, COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.id "
               f"WHERE {n['ts']} >= '2026-03-01' GROUP BY c.region ORDER BY c.region")
        why = (f"`{n['ts']}` is ambiguous in that join: both `customers` and `orders` have a `{n['ts']}` "
               f"column and the WHERE clause does not say which (it should be `o.{n['ts']}`).")
        return sql, ["late_march_buyers", "recent_orders", "old_customers"], \
            f"ambiguous column name: {n['ts']}", [[n["ts"]], ["ambigu", "both", "customers", "qualif"]], why
    sql = (f"SELECT o.id, SUM(li.qty) FROM orders o JOIN {n['item']} li ON li.order_id = o.id "
           "GROUP BY o.id ORDER BY 2 DESC, o.id LIMIT 10")
    why = f"there is no table `{n['item']}`; the schema calls it `{n['items']}`."
    return sql, ["top_skus", "avg_line_value"], f"no such table: {n['item']}", \
        [[n["item"]], [n["items"], "no such table", "does not exist", "doesn't exist", "missing", "misspel", "typo"]], why


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
    bad_sql, related, error, cause_terms, why = _family(kind, n)

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
        "failed. Reply with the id of that query (as written in the log, like `q-1a2b`) and the cause. "
        "End your reply with the two lines `QUERY: <query id>` and `CAUSE: <one sentence>`, naming only "
        "that one query id."
    )
    probe = {
        "missing_column": "PRAGMA table_info(orders)",
        "ambiguous_column": "PRAGMA table_info(customers)",
        "missing_table": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    }[kind]
    reference = [
        ToolCall("fs_list", {"path": "."}),
        [ToolCall("fs_read", {"path": log_path}), ToolCall("fs_read", {"path": "schema.sql"})],
        ToolCall("sql_query", {"database": db_name, "query": probe}),
        Final(f"The failing query is {target}.\n\nQUERY: {target}\nCAUSE: {why}"),
    ]
    valid_text = pool[valid_name]
    near_misses = {
        # The query logged right before the failure line: last, but not guilty.
        "last_query_logged": [ToolCall("fs_read", {"path": log_path}),
                              Final(f"The job died on the last query, {last}.\nQUERY: {last}\nCAUSE: {error}.")],
        # A query that uses the name from the error message, where it is valid.
        "valid_use_of_the_name": [
            ToolCall("fs_read", {"path": log_path}),
            Final(f"{valid} fails: `{valid_text}` raises `{error}`.\n\nQUERY: {valid}\nCAUSE: {why}")],
        # The right query, hedged with another one.
        "hedged": [ToolCall("fs_read", {"path": log_path}),
                   Final(f"It is {target} or {valid}; both use the name from the error.\n\n"
                         f"QUERY: {target} or {valid}\nCAUSE: {why}")],
        # The right query, but a made-up cause.
        "wrong_cause": [ToolCall("fs_read", {"path": log_path}),
                        Final(f"{target} failed.\n\nQUERY: {target}\n"
                              "CAUSE: its GROUP BY clause lists a column the SELECT does not return.")],
    }
    return TaskInstance(
        prompt=prompt,
        files={db_name: db, "schema.sql": schema, log_path: log_text},
        tools=("fs_list", "fs_read", "sql_query"),
        expected={"query_id": target, "all_ids": ids, "error": error, "kind": kind, "cause_terms": cause_terms,
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


#: What the answer says of the failure, per kind: the name is not a column of the table it is read from
#: (it is the other table's), is in two of the joined tables, or is no table of the schema.
_KIND = {
    "missing_column": r"no such column|\bno\s+(?:\w+\s+)?column|\b(?:has|have|had)\s+no\b|n[o']t\s+(?:have|has|"
                      r"contain|include|exist|a\s+column|in|on|part|present|found|defined|belong)|\bmissing|\bbelongs?\b|"
                      r"\bonly\s+(?:exists?|in|on|lives|defined|present|has)|\bexists?\s+only|\blives?\s+(?:in|on)|"
                      r"\b(?:in|on|of|from|to)\s+(?:the\s+)?invoices\b|\binvoices(?:'s?)?\s+(?:column|field)|"
                      r"\binvoices\.|\bwrong\s+table|\bunknown\s+column|\black|\bnon-?existent|\binvalid\s+column|"
                      r"\binstead\s+of|\bshould\s+(?:be|use|read|sum|select)",
    "ambiguous_column": r"ambigu|\bboth\b|two\s+(?:of\s+the\s+)?(?:joined\s+)?tables|two of the|more than one|"
                        r"qualif|alias|prefix|which\s+(?:one|table)|either\s+table|each\s+table|multiple\s+tables|"
                        r"several\s+tables|same\s+(?:column|name)|as\s+well\s+as|resolve|(?:customers|orders)\s+"
                        r"(?:and|&)\s+(?:customers|orders)",
    "missing_table": r"no such table|n[o']t\s+(?:exist|defined|a\s+table|in\s+the\s+schema)|\bnon-?existent|"
                     r"\bmissing|misspel|\btypo|\bundefined|\bunknown\s+table|\bno\s+(?:\w+\s+)?table|"
                     r"\bwrong\s+(?:table\s+)?name|\bsingular|\bplural|\bshould\s+be|\bcalled|\bnamed|\binstead\s+of",
}
#: Causes of another kind than the schema's: "the invoices table was locked", "it timed out".
_OTHER_KIND = re.compile(r"\b(?:dead)?lock(?:ed|s|ing)?\b|\btim(?:ed|es|ing)?[- ]?out\b|\btimeouts?\b|\bbusy\b|"
                         r"\bpermissions?\b|access denied|syntax error|out of memory|\bdisk\b|\bnetwork\b|"
                         r"\bconnection\s+(?:error|lost|refused|dropped|reset|closed|failure|limit)|\boverflow|"
                         r"\bconstraint\s+(?:failed|violation)|\bcorrupt")
_DENIAL = re.compile(r"(?:\b(?:not|no|never|nor|neither|without|rather than|instead of|ruled? out|unrelated)|n't)"
                     r"(?:\s+\S+){0,6}\s*$")


def _other_kind(text: str) -> str | None:
    """A cause of another kind the answer asserts (not denied: "not a lock or a timeout"), or None."""
    for m in _OTHER_KIND.finditer(text):
        before = re.split(r"[.;:!?\n]", text[:m.start()])[-1]
        if not _DENIAL.search(before):
            return m.group()
    return None


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a reply whose ``QUERY:`` line names the failing query and whose ``CAUSE:`` line states its cause."""
    exp = instance.expected
    reply = run.final_answer or ""
    given = answerlines.read(reply, "query", "QUERY:", query_ids)
    role = exp["decoys"].get(given, "a query that succeeded" if given in exp["all_ids"] else "no query of the log")
    assert given == exp["query_id"], f"the QUERY: line names {given} ({role}), not the query that failed"
    causes = [line.text for line in answerlines.find(reply, "cause")]
    if not causes or not any(c.strip() for c in causes):
        answerlines.unreadable("the reply has no `CAUSE:` line" if not causes else "the `CAUSE:` line is empty")
    text = " ".join(causes).lower()
    name, *_ = exp["cause_terms"]  # the name from the error, then what the schema says of it
    # the name as a whole identifier: `line_items` (what the schema has) does not name `line_item`
    assert any(re.search(rf"(?<![a-z0-9_]){re.escape(term.lower())}(?![a-z0-9_])", text) for term in name), (
        f"the CAUSE: line does not name {' or '.join(name)}, the name from the error")
    kind = exp["kind"]
    says = _KIND[kind] + (rf"|\b{re.escape(exp['cause_terms'][1][0])}\b" if kind == "missing_table" else "")
    assert re.search(says, text), (
        f"the CAUSE: line names {name[0]} but not what is wrong with it ({exp['error']}): "
        + {"missing_column": "that the table it is read from has no such column",
           "ambiguous_column": "that two of the joined tables have it",
           "missing_table": "that the schema has no such table"}[kind])
    other = _other_kind(text)
    assert other is None, f"the CAUSE: line gives a cause of another kind ({other!r}), not {exp['error']!r}"


@task("task_10", "sql_investigation", build=build, limits={"max_turns": 14})
def test_sql_investigation(agent):
    """A schema and a query log; find the failing query and its cause."""
    run = agent.run()
    check(agent.instance, run)
