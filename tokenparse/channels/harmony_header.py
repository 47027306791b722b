"""The Harmony message header as a pure function: ``(header parts) -> (fields, issues)``.

A header is collected by :class:`~tokenparse.channels.harmony.HarmonyDecoder` in three
parts: the text before ``<|channel|>`` (role, maybe ``to=``), after it (channel, maybe
``to=`` and a content type) and after ``<|constrain|>``. :func:`parse_header` reads those
parts; it holds no state and reports nothing itself. Problems come back as
:class:`HeaderIssue` values, in the order they were found, for the decoder to report at
its current token position (strict mode raises on the first).

``complete`` is true when ``<|message|>`` ended the header: then every word is a header
word. Otherwise (a terminator, the header cap or the end of stream cut the header short)
the first word that cannot be a header word starts the body, returned as ``body``.
"""
from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["HeaderFields", "HeaderIssue", "parse_header", "OpenRecorder"]

#: words a header may carry after the channel that name the body's format
_CONTENT_TYPES = frozenset({"json", "code", "text", "markdown", "md", "python", "html", "yaml", "xml", "csv"})
_ROLES = frozenset({"assistant", "user", "system", "developer", "tool"})
_CHANNELS = ("analysis", "commentary", "final")
#: characters a recipient is made of; anything after them is markup the model leaked
_RECIPIENT = re.compile(r"[A-Za-z0-9_.:/\-]+")
#: the channel name ends at whitespace or '<' (markup written as text)
_CHANNEL_NAME = re.compile(r"[^\s<]*")
_WORD = re.compile(r"\S+")


class HeaderFields(NamedTuple):
    channel: str | None
    recipient: str | None
    content_type: str | None
    #: body text that followed the header words (incomplete headers only)
    body: str


class HeaderIssue(NamedTuple):
    code: str
    message: str
    text: str | None = None


class _Reading:
    """Fields found so far while reading one header (local to one :func:`parse_header` call)."""

    __slots__ = ("channel", "recipient", "content_type", "stray", "issues")

    def __init__(self) -> None:
        self.channel: str | None = None
        self.recipient: str | None = None
        self.content_type: str | None = None
        self.stray: list[str] = []
        self.issues: list[HeaderIssue] = []

    def take_recipient(self, value: str) -> None:
        match = _RECIPIENT.match(value)
        clean = match.group(0) if match else ""
        if clean != value:
            self.issues.append(HeaderIssue(
                "recipient_markup", f"recipient {value!r} carries trailing markup; using {clean!r}", value[len(clean):]
            ))
        if not clean:
            return
        if self.recipient is None:
            self.recipient = clean
        elif self.recipient != clean:
            self.issues.append(HeaderIssue("duplicate_recipient", f"second recipient {clean!r} ignored", clean))

    def words(
        self, text: str, *, allow_body: bool, first_is_channel: bool, complete: bool, channel_repeat_reported: bool
    ) -> str:
        """Consume the header words of one part; return the body text that follows, if any."""
        words = list(_WORD.finditer(text))
        i = 0
        if first_is_channel and words:
            word = words[0].group(0)
            name_end = _CHANNEL_NAME.match(word).end()  # type: ignore[union-attr]  # matches ""
            self.channel = word[:name_end] or None
            if name_end < len(word):
                rest = word[name_end:]
                if rest.startswith("to="):
                    self.take_recipient(rest[3:])
                else:
                    self.stray.append(rest)
            i = 1
        while i < len(words):
            word = words[i].group(0)
            if word.startswith("to="):
                target = word[3:]
                if not target and i + 1 < len(words):  # "to= name"
                    i += 1
                    target = words[i].group(0)
                    self.issues.append(HeaderIssue("recipient_space", "space after 'to='"))
                self.take_recipient(target)
            elif word in _ROLES and not first_is_channel and i == 0:
                pass  # the role word after <|start|>
            elif word == self.channel or (self.channel is None and word in _CHANNELS):
                if self.channel is None:
                    self.channel = word
                elif not channel_repeat_reported:
                    self.issues.append(HeaderIssue("duplicate_channel", f"channel word {word!r} repeated", word))
            elif (
                self.content_type is None
                and (word in _CONTENT_TYPES or (complete and first_is_channel))
                and len(word) <= 32
            ):
                self.content_type = word
            elif allow_body:
                return text[words[i].start():]
            else:
                self.stray.append(word)
            i += 1
        return ""


def parse_header(
    parts: tuple[str, str, str], part: int, *, complete: bool, channel_repeat_reported: bool = False
) -> tuple[HeaderFields, tuple[HeaderIssue, ...]]:
    """Channel, recipient, content type and (for an incomplete header) the body text.

    ``parts`` are the decoded texts before ``<|channel|>``, after it and after
    ``<|constrain|>``; ``part`` is the index of the last part the header reached (0, 1 or
    2). ``channel_repeat_reported``: a second ``<|channel|>`` token was already reported,
    so a repeated channel word is not reported again.
    """
    role_text, channel_text, constrain_text = parts
    r = _Reading()
    options = {"complete": complete, "channel_repeat_reported": channel_repeat_reported}
    body = r.words(role_text, allow_body=not complete and part == 0, first_is_channel=False, **options)
    if part >= 1:
        body = r.words(channel_text, allow_body=not complete and part == 1, first_is_channel=True, **options)
    if part >= 2:
        words = constrain_text.split()
        if words:
            if r.content_type is not None:  # a word before <|constrain|> read as a type: keep it
                r.stray.append(r.content_type)
            r.content_type = "<|constrain|>" + words[0]
            rest = constrain_text[constrain_text.find(words[0]) + len(words[0]):]
            if complete:
                for word in rest.split():
                    if word.startswith("to="):
                        r.take_recipient(word[3:])
                    else:
                        r.stray.append(word)
            else:
                body = rest.lstrip()
    if r.stray:
        r.issues.append(HeaderIssue("stray_header_words", f"unexpected header words {r.stray!r}", " ".join(r.stray)))
    return HeaderFields(r.channel, r.recipient, r.content_type, body), tuple(r.issues)


class OpenRecorder:
    """SegmentSink that keeps only the last segment header (``HarmonyDecoder.continue_prompt``)."""

    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        self.channel, self.recipient, self.content_type = channel, recipient, content_type

    def text(self, text: str) -> None:
        pass

    def marker(self, role: str, pos: int) -> None:
        pass

    def close(self, end: str, pos: int) -> None:
        pass
