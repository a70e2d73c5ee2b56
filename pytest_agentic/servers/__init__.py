"""Local model servers the plugin starts and stops itself: llama.cpp on CPU, vLLM on GPU.

``lifecycle`` starts, health-checks and stops them (once per session, in the controller),
``config`` validates a model entry's ``server:`` block and builds the command line,
``llama_server`` is the llama.cpp server process, ``gguf`` fetches and caches model files,
``chat_templates`` holds the templates that make small models call tools, and
``_supervise`` keeps a server from outliving the session. Used by the integration alone.
"""
