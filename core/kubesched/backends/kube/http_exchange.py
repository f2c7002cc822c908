"""One HTTP/1.1 exchange on a connected socket: the request written whole, the answer read,
framed by its own headers and capped.

Why by hand: every Binding and every Event is one request, two per pod. Through urllib3's
``urlopen`` and ``http.client`` one cost the scheduler about 1 ms of CPU on the benchmark
machine, on a raw socket about a quarter of that (docs/benchmarks.md, "The request path"):
the rest was header parsing by the ``email`` package and the layers around it. Connections
(TCP, TLS with the configuration's CA and host name check, proxies and tunnels, the check that
an idle one is still good) stay urllib3's; only what goes over them is done here. Watches stay
on urllib3's streamed answers (one long request per informer, not per pod).

What it accepts of an answer (RFC 9112) and what it refuses, with a :class:`MalformedAnswer`
naming it: a status line ``HTTP/1.0`` or ``HTTP/1.1`` with a three-digit code; at most
:data:`MAX_HEAD_BYTES` of status line and headers and :data:`MAX_HEADERS` header lines, each
``name: value`` (a line without a colon, a name with white space, a folded line, or CR or NUL
inside a line is refused); informational answers (1xx) before the final one are skipped, at
most :data:`MAX_INFORMATIONAL` of them (101 Switching Protocols is refused: nothing here asks
to switch). The body: none for HEAD, 1xx, 204 and 304; ``Transfer-Encoding: chunked`` (the
only coding accepted) with chunk extensions and trailer fields, each line capped; else a
``Content-Length`` of digits (repeated only with the same value); else up to the end of the
connection. Both a Content-Length and a Transfer-Encoding is the shape of request smuggling
and is refused. The body is capped by the caller's ``max_body`` before its bytes are kept
(a Content-Length over it is refused before reading).

A connection may carry the next request only when the answer was HTTP/1.1, without
``Connection: close``, framed by its length or its chunks, and nothing followed it: bytes after
the answer (a second answer in the same write, a Content-Length too short) belong to no
request, and the connection is dropped with them.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "MAX_HEADERS",
    "MAX_HEAD_BYTES",
    "MAX_INFORMATIONAL",
    "Answer",
    "ClosedEarly",
    "Headers",
    "MalformedAnswer",
    "TooLarge",
    "encode_request",
    "read_answer",
]

#: The most status line and header bytes an answer may have (http.client's line limit).
MAX_HEAD_BYTES = 64 << 10
#: The most header lines an answer may have (http.client's ``_MAXHEADERS``).
MAX_HEADERS = 100
#: Informational answers skipped before the final one, at most.
MAX_INFORMATIONAL = 8
#: The longest chunk-size line or trailer line of a chunked body.
MAX_CHUNK_LINE = 4096
_READ_SIZE = 65536
_NO_BODY_STATUSES = frozenset({204, 304})


class MalformedAnswer(ValueError):
    """The answer breaks HTTP/1.1's framing or this module's limits."""


class TooLarge(MalformedAnswer):
    """The answer's body is, or announces itself as, longer than the caller allows."""


class ClosedEarly(ConnectionError):
    """The connection ended before the answer was complete. ``nothing`` is True when not one
    byte of an answer had come (a kept-alive connection the server closed as we wrote)."""

    def __init__(self, message: str, nothing: bool) -> None:
        super().__init__(message)
        self.nothing = nothing


class Headers(dict[str, str]):
    """An answer's header fields by lower-case name (repeated fields joined with ", ");
    lookups ignore case, as HTTP's field names do."""

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return dict.get(self, name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())


@dataclass(slots=True)
class Answer:
    """The final answer to one request."""

    status: int
    reason: str
    headers: Headers
    body: bytes
    #: The connection may carry the next request.
    reusable: bool


def encode_request(
    method: str, target: str, host: str, headers: Mapping[str, str], body: bytes
) -> bytes:
    """The request's bytes: request line, ``Host``, ``headers`` (checked by the caller for
    CR, LF and NUL), a blank line and ``body``. A header that is not Latin-1 raises
    ``UnicodeEncodeError`` (HTTP/1.1 fields are bytes; http.client refuses them alike)."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    lines.append("\r\n")
    return "\r\n".join(lines).encode("latin-1") + body


class _Reader:
    """Bytes from a socket, kept until used: the answer is taken from the front."""

    __slots__ = ("buffer", "received", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        #: Bytes read from the socket so far.
        self.received = 0

    def _fill(self, what: str) -> None:
        chunk = self.sock.recv(_READ_SIZE)
        if not chunk:
            nothing = self.received == 0
            raise ClosedEarly(
                "the connection closed before any answer"
                if nothing
                else f"the connection closed in the middle of the answer's {what}",
                nothing,
            )
        self.buffer += chunk
        self.received += len(chunk)

    def until(self, mark: bytes, limit: int, what: str) -> bytes:
        """The bytes before the next ``mark`` (both taken); at most ``limit`` of them."""
        start = 0
        while (end := self.buffer.find(mark, start)) < 0:
            if len(self.buffer) > limit:
                raise MalformedAnswer(f"the answer's {what} is longer than {limit} bytes")
            start = max(len(self.buffer) - len(mark) + 1, 0)
            self._fill(what)
        if end > limit:
            raise MalformedAnswer(f"the answer's {what} is longer than {limit} bytes")
        taken = bytes(self.buffer[:end])
        del self.buffer[: end + len(mark)]
        return taken

    def exactly(self, count: int, what: str) -> bytes:
        while len(self.buffer) < count:
            self._fill(what)
        if len(self.buffer) == count:  # the usual case: one copy, not two
            taken = bytes(self.buffer)
            self.buffer.clear()
            return taken
        taken = bytes(self.buffer[:count])
        del self.buffer[:count]
        return taken

    def to_the_end(self, limit: int) -> bytes:
        """Everything up to the connection's end; at most ``limit`` bytes."""
        while True:
            if len(self.buffer) > limit:
                raise TooLarge(f"the answer is longer than {limit} bytes")
            chunk = self.sock.recv(_READ_SIZE)
            if not chunk:
                taken = bytes(self.buffer)
                self.buffer.clear()
                return taken
            self.buffer += chunk
            self.received += len(chunk)


#: A header line: a field name (an RFC 9110 token) right before the colon, then its value
#: less the white space around it.
_FIELD_LINE = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(.*?)[ \t]*")


def _parse_head(head: bytes) -> tuple[str, int, str, Headers]:
    """Version, status, reason and fields of a status line and its header lines."""
    text = head.decode("latin-1")
    if "\0" in text or not text.count("\r") == text.count("\n") == text.count("\r\n"):
        raise MalformedAnswer("the answer's head has a NUL, or a CR or LF not ending a line")
    lines = text.split("\r\n")
    status_line = lines[0]
    version, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if version not in ("HTTP/1.1", "HTTP/1.0") or not (
        len(code) == 3 and code.isascii() and code.isdigit()
    ):
        raise MalformedAnswer(f"not an HTTP/1.1 status line: {status_line[:100]!r}")
    if len(lines) - 1 > MAX_HEADERS:
        raise MalformedAnswer(f"the answer has more than {MAX_HEADERS} header lines")
    headers = Headers()
    match = _FIELD_LINE.fullmatch
    for line in lines[1:]:
        field = match(line)
        if field is None:
            raise MalformedAnswer(f"a malformed header line in the answer: {line[:100]!r}")
        key = field[1].lower()
        value = field[2]
        previous = dict.get(headers, key)
        dict.__setitem__(headers, key, value if previous is None else f"{previous}, {value}")
    return version, int(code), reason.strip(), headers


def _content_length(value: str) -> int:
    """A Content-Length field's value: digits, repeated (by a list or by repeated fields)
    only with the same value."""
    values = {part.strip(" \t") for part in value.split(",")}
    if len(values) != 1:
        raise MalformedAnswer(f"the answer has conflicting Content-Length values: {value[:100]!r}")
    (only,) = values
    if not (only.isascii() and only.isdigit()):
        raise MalformedAnswer(f"the answer's Content-Length is not a number: {value[:100]!r}")
    return int(only)


def _read_chunked(reader: _Reader, max_body: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        line = reader.until(b"\r\n", MAX_CHUNK_LINE, "chunk size line")
        digits = line.split(b";", 1)[0].strip(b" \t")
        if not digits or len(digits) > 16 or digits.strip(b"0123456789abcdefABCDEF"):
            raise MalformedAnswer(f"a malformed chunk size line in the answer: {line[:100]!r}")
        length = int(digits, 16)
        if length == 0:
            for _ in range(MAX_HEADERS + 1):  # trailer fields, then the blank line
                if not reader.until(b"\r\n", MAX_CHUNK_LINE, "trailer"):
                    return b"".join(parts)
            raise MalformedAnswer(f"the answer has more than {MAX_HEADERS} trailer lines")
        size += length
        if size > max_body:
            raise TooLarge(f"the answer is longer than {max_body} bytes")
        parts.append(reader.exactly(length, "chunk"))
        if reader.exactly(2, "chunk") != b"\r\n":
            raise MalformedAnswer("a chunk of the answer is longer than its size says")


def read_answer(sock: socket.socket, method: str, max_body: int) -> Answer:
    """Read the final answer to ``method`` from ``sock`` (see the module docstring).

    Raises :class:`MalformedAnswer` (:class:`TooLarge`) for an answer it refuses,
    :class:`ClosedEarly` when the connection ends first, and the socket's own ``OSError``
    (a timeout included)."""
    reader = _Reader(sock)
    for _ in range(MAX_INFORMATIONAL + 1):
        head = reader.until(b"\r\n\r\n", MAX_HEAD_BYTES, "head")
        version, status, reason, headers = _parse_head(head)
        if status == 101:
            raise MalformedAnswer("the server switched protocols (101) though nobody asked it to")
        if not 100 <= status < 200:
            break
    else:
        raise MalformedAnswer(f"more than {MAX_INFORMATIONAL} informational answers in a row")
    connection = {t.strip().lower() for t in (headers.get("connection") or "").split(",")}
    reusable = version == "HTTP/1.1" and "close" not in connection
    encoding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if method == "HEAD" or status in _NO_BODY_STATUSES:
        body = b""
    elif encoding is not None:
        if length is not None:
            raise MalformedAnswer("the answer has both a Content-Length and a Transfer-Encoding")
        if encoding.strip(" \t").lower() != "chunked":
            raise MalformedAnswer(
                f"the answer's Transfer-Encoding is not chunked: {encoding[:100]!r}"
            )
        body = _read_chunked(reader, max_body)
    elif length is not None:
        count = _content_length(length)
        if count > max_body:
            raise TooLarge(f"the answer announces {count} bytes, more than the {max_body} allowed")
        body = reader.exactly(count, "body")
    else:
        body = reader.to_the_end(max_body)
        reusable = False
    if reader.buffer:  # bytes no request asked for
        reusable = False
    return Answer(status, reason, headers, body, reusable)
