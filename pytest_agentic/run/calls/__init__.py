"""The call path: how one model call of a run reaches the endpoint and what comes back.

The litellm call with its retries, per-call deadline and infra-error classification (``llm``),
the adaptive limit of each model's calls in flight and the rate-limit signals that move it
(``limiter``), litellm's HTTP connection pool sized from those limits (``connections``), the
server refusals that the model's own output provoked (``refusals``), the conversation as sent to
the endpoint (``history``) and the tool calls a model wrote as text instead of calling (``textcalls``).
Nothing here knows about tasks, tools or workspaces.
"""
