"""One agent run: a task instance played by a model through tools, and what it produced.

The task model (``task``), the model registry (``models``), the call path to the endpoint
(``calls``: the litellm call, its limiter, connections and refusals), the tools and their workspace (``tools``), per-run limits (``limits``),
the agent loop (``agent``), the scripted litellm provider for tests and self-checks
(``scripted``), the failure classifier (``failures``), the run records (``records``) and
credential redaction (``redact``). Nothing here knows about campaigns or pytest sessions.
"""
