"""Where else a campaign is seen: OpenTelemetry traces and litellm's own integrations.

``settings`` says from the environment and the options whether traces are wanted (importing nothing);
``traces`` exports them with the OpenTelemetry SDK (imported only then); ``callbacks`` installs the
litellm callbacks a models file names; ``process`` is what one pytest process does with both.
"""
