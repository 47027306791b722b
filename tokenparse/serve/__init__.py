"""``tokenparse serve``: OpenAI Chat Completions, Responses and Anthropic Messages over any
engine that streams token IDs (the only tokenparse package that does I/O; extra ``[serve]``).

Request path: the app (:mod:`.app`) checks the key, the caps and the body, converts it
(:mod:`.convert_chat`, :mod:`.convert_responses`, :mod:`.convert_anthropic`) to a
:class:`~.conversation.Conversation`, renders the prompt (:mod:`.render_harmony` for
gpt-oss, :mod:`.render_template` for tag models), and :mod:`.driver` streams the upstream's
token IDs (:mod:`.upstreams`, one class per engine) through the parser and the adapters'
wire fast path. Nothing here is imported by the rest of tokenparse except the CLI's
argument declarations (:mod:`.cli`).
"""
