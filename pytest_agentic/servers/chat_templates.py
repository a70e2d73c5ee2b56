"""Chat templates that the embedded llama.cpp server is started with.

SmolLM2's own template (in its GGUF) is plain ChatML with no place for tools,
so llama.cpp would neither show the tool definitions to the model nor parse
its tool calls. ``SMOLLM2_TOOLS`` is ChatML plus a Hermes-style tool section:

- the tool definitions go into the system turn, inside ``<tools></tools>``,
  one JSON object per line;
- an assistant's tool calls are rendered as
  ``<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>``;
- a tool result is its own ``<|im_start|>tool`` turn (not a user turn wrapped
  in ``<tool_response>``: with that layout the 135M model answers with a
  made-up ``<tool_response>`` instead of a call).

With ``--jinja`` llama.cpp analyses this template (its "differential
autoparser"), finds the ``<tool_call>`` markers, and turns such output back
into OpenAI ``tool_calls`` (a lazy grammar, triggered by ``<tool_call>``,
keeps the JSON well formed and the tool name one of those offered).
"""

SMOLLM2_TOOLS = r"""{%- if messages[0]['role'] == 'system' %}
{%- set system_message = messages[0]['content'] if messages[0]['content'] is string else '' %}
{%- set loop_messages = messages[1:] %}
{%- else %}
{%- set system_message = 'You are a helpful AI assistant named SmolLM, trained by Hugging Face' %}
{%- set loop_messages = messages %}
{%- endif %}
{{- '<|im_start|>system\n' + system_message }}
{%- if tools %}
{{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
{%- for tool in tools %}
{{- '\n' + (tool | tojson) }}
{%- endfor %}
{{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' }}
{%- endif %}
{{- '<|im_end|>\n' }}
{%- for message in loop_messages %}
{%- if message['role'] == 'assistant' and message.tool_calls %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message['role'] == 'tool' %}
{{- '<|im_start|>tool\n' + (message['content'] if message['content'] is string else '') + '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message['role'] + '\n' + (message['content'] if message['content'] is string else '') + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""
