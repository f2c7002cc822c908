"""Reading one answer off a socket: what a well-formed answer gives, and what a broken or
hostile one is refused with (``kubesched.backends.kube.http_exchange``).

Each answer is written by the peer of a socket pair, as a server would; a row whose answer
ends the connection closes the peer's side after writing it."""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backends.kube.http_exchange import (
    MAX_HEAD_BYTES,
    ClosedEarly,
    MalformedAnswer,
    TooLarge,
    encode_request,
    read_answer,
)

LIMIT = 1 << 20


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    yield ours, theirs
    ours.close()
    theirs.close()


def served(pair: tuple[socket.socket, socket.socket], answer: bytes, close: bool = True):
    """Write ``answer`` from the server's side (from a thread: it may exceed the socket
    buffer) and, with ``close``, end the connection after it."""
    ours, theirs = pair

    def write() -> None:
        try:
            theirs.sendall(answer)
            if close:
                theirs.shutdown(socket.SHUT_WR)
        except OSError:  # the reader gave up first
            pass

    threading.Thread(target=write, daemon=True).start()
    return ours


def head(status: str = "200 OK", *fields: str, version: str = "HTTP/1.1") -> bytes:
    text = f"{version} {status}\r\n" + "".join(f"{f}\r\n" for f in fields) + "\r\n"
    return text.encode("latin-1")  # HTTP/1.1 fields are bytes: Latin-1 text


# -- what a well-formed answer gives ------------------------------------------------------------
WELL_FORMED = [
    pytest.param(
        head("201 Created", "Content-Type: application/json", "Content-Length: 2") + b"{}",
        "POST",
        (201, "Created", b"{}", True),
        id="content-length",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked")
        + b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n",
        "GET",
        (200, "OK", b"hello world", True),
        id="chunked, with an extension and a trailer",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: Chunked") + b"A\r\n0123456789\r\n0\r\n\r\n",
        "GET",
        (200, "OK", b"0123456789", True),
        id="chunked spelt in capitals, size in upper-case hex",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 3", "Content-Length: 3") + b"abc",
        "GET",
        (200, "OK", b"abc", True),
        id="a Content-Length repeated with the same value",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 3, 3") + b"abc",
        "GET",
        (200, "OK", b"abc", True),
        id="a Content-Length listed twice with the same value",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 10"),
        "HEAD",
        (200, "OK", b"", True),
        id="HEAD: no body whatever the length says",
    ),
    pytest.param(head("204 No Content"), "DELETE", (204, "No Content", b"", True), id="204"),
    pytest.param(head("304 Not Modified"), "GET", (304, "Not Modified", b"", True), id="304"),
    pytest.param(
        head("200 OK", "Connection: keep-alive, Close", "Content-Length: 1") + b"x",
        "GET",
        (200, "OK", b"x", False),
        id="Connection: close ends the connection",
    ),
    pytest.param(
        head("200 OK", version="HTTP/1.0") + b"to the end",
        "GET",
        (200, "OK", b"to the end", False),
        id="HTTP/1.0 framed by the connection's end",
    ),
    pytest.param(
        head("200 OK") + b"no length at all",
        "GET",
        (200, "OK", b"no length at all", False),
        id="HTTP/1.1 without a length: to the end",
    ),
    pytest.param(
        head("100 Continue")
        + head("103 Early Hints", "Link: </a>")
        + head("201 Created", "Content-Length: 0"),
        "POST",
        (201, "Created", b"", True),
        id="informational answers are skipped",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 2") + b"{}" + head("200 OK", "Content-Length: 0"),
        "GET",
        (200, "OK", b"{}", False),
        id="a second answer in the same write: the connection is not reused",
    ),
    pytest.param(
        head("503 Service Unavailable", "Retry-After: 3", "Content-Length: 4") + b"busy",
        "GET",
        (503, "Service Unavailable", b"busy", True),
        id="an error answer",
    ),
]


@pytest.mark.parametrize(("answer", "method", "want"), WELL_FORMED)
def test_a_well_formed_answer(pair, answer: bytes, method: str, want: tuple) -> None:
    got = read_answer(served(pair, answer, close=not want[3]), method, LIMIT)
    assert (got.status, got.reason, got.body, got.reusable) == want


def test_header_names_are_looked_up_without_case_and_repeats_joined(pair) -> None:
    answer = head("200 OK", "Retry-After:  7 ", "Warning: a", "warning: b", "Content-Length: 0")
    got = read_answer(served(pair, answer, close=False), "GET", LIMIT)
    assert got.headers.get("retry-after") == got.headers["Retry-After"] == "7"
    assert got.headers.get("WARNING") == "a, b"
    assert "content-length" in got.headers and "Content-Length" in got.headers
    assert got.headers.get("missing") is None


# -- what a broken or hostile answer is refused with --------------------------------------------
REFUSED = [
    pytest.param(b"SPDY/3 200 OK\r\n\r\n", MalformedAnswer, "status line", id="not HTTP/1.x"),
    pytest.param(b"HTTP/1.1 2000 OK\r\n\r\n", MalformedAnswer, "status line", id="4-digit code"),
    pytest.param(
        "HTTP/1.1 2\u00b2\u00b3 OK\r\n\r\n".encode("latin-1"),
        MalformedAnswer,
        "status line",
        id="superscript digits",
    ),
    pytest.param(
        head("200 OK", "no colon here"), MalformedAnswer, "malformed header", id="no colon"
    ),
    pytest.param(
        head("200 OK", "Content-Length : 2") + b"{}",
        MalformedAnswer,
        "malformed header",
        id="white space before the colon",
    ),
    pytest.param(
        head("200 OK", "X-A: 1", " folded", "Content-Length: 0"),
        MalformedAnswer,
        "malformed header",
        id="an obsolete folded line",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n",
        MalformedAnswer,
        "CR or LF",
        id="a bare LF",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nX-A: 1\x00\r\nContent-Length: 0\r\n\r\n",
        MalformedAnswer,
        "NUL",
        id="a NUL",
    ),
    pytest.param(
        head("200 OK", *[f"X-{i}: v" for i in range(101)]),
        MalformedAnswer,
        "more than 100 header lines",
        id="101 header lines",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 2", "Transfer-Encoding: chunked") + b"0\r\n\r\n",
        MalformedAnswer,
        "both a Content-Length and a Transfer-Encoding",
        id="length and chunks (smuggling)",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: gzip, chunked") + b"0\r\n\r\n",
        MalformedAnswer,
        "not chunked",
        id="a coding nobody asked for",
    ),
    pytest.param(
        head("200 OK", "Content-Length: 2", "Content-Length: 3") + b"abc",
        MalformedAnswer,
        "conflicting Content-Length",
        id="two lengths",
    ),
    pytest.param(
        head("200 OK", "Content-Length: -1"), MalformedAnswer, "not a number", id="negative length"
    ),
    pytest.param(head("200 OK", "Content-Length: 1e3"), MalformedAnswer, "not a number", id="1e3"),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked") + b"zz\r\n",
        MalformedAnswer,
        "chunk size",
        id="a chunk size that is not hex",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked") + b"-5\r\nhello\r\n",
        MalformedAnswer,
        "chunk size",
        id="a negative chunk size",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked") + b"1" * 5000 + b"\r\n",
        MalformedAnswer,
        "longer than 4096",
        id="an endless chunk size line",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked") + b"2\r\nabc\r\n0\r\n\r\n",
        MalformedAnswer,
        "longer than its size",
        id="a chunk longer than its size",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked")
        + b"0\r\n"
        + b"".join(b"T-%d: v\r\n" % i for i in range(101))
        + b"\r\n",
        MalformedAnswer,
        "trailer lines",
        id="endless trailers",
    ),
    pytest.param(
        head("101 Switching Protocols", "Upgrade: h2c"),
        MalformedAnswer,
        "switched protocols",
        id="101",
    ),
    pytest.param(
        head("100 Continue") * 9 + head("200 OK", "Content-Length: 0"),
        MalformedAnswer,
        "informational",
        id="nine informational answers",
    ),
    pytest.param(
        head("200 OK", f"Content-Length: {LIMIT + 1}"),
        TooLarge,
        f"announces {LIMIT + 1} bytes",
        id="a length over the cap",
    ),
    pytest.param(
        head("200 OK", "Transfer-Encoding: chunked") + (b"10000\r\n" + b"x" * 65536 + b"\r\n") * 17,
        TooLarge,
        f"longer than {LIMIT} bytes",
        id="chunks over the cap",
    ),
    pytest.param(
        head("200 OK", version="HTTP/1.0") + b"x" * (LIMIT + 10),
        TooLarge,
        f"longer than {LIMIT} bytes",
        id="a body to the end over the cap",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (MAX_HEAD_BYTES + 10),
        MalformedAnswer,
        "head is longer than",
        id="an endless head",
    ),
    pytest.param(b"", ClosedEarly, "before any answer", id="closed before a byte"),
    pytest.param(
        head("200 OK", "Content-Length: 10") + b"12345",
        ClosedEarly,
        "in the middle of the answer's body",
        id="closed in the body",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nContent-", ClosedEarly, "answer's head", id="closed in the head"
    ),
]


@pytest.mark.parametrize(("answer", "error", "words"), REFUSED)
def test_a_broken_answer_is_refused_with_what_is_wrong(
    pair, answer: bytes, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        read_answer(served(pair, answer), "GET", LIMIT)


def test_only_a_connection_closed_before_any_byte_says_nothing_came(pair) -> None:
    with pytest.raises(ClosedEarly) as caught:
        read_answer(served(pair, b""), "GET", LIMIT)
    assert caught.value.nothing


def test_a_length_over_the_cap_is_refused_before_the_body_comes(pair) -> None:
    """The server announces 10 GB and sends nothing more, the connection open: the refusal
    comes at once, not after a read that would wait for (or keep) the body."""
    sock = served(pair, head("200 OK", "Content-Length: 10737418240"), close=False)
    sock.settimeout(2)
    with pytest.raises(TooLarge, match="10737418240 bytes"):
        read_answer(sock, "GET", LIMIT)


def test_a_server_that_stops_mid_answer_ends_in_the_socket_timeout(pair) -> None:
    sock = served(pair, head("200 OK", "Content-Length: 10") + b"123", close=False)
    sock.settimeout(0.2)
    with pytest.raises(TimeoutError):
        read_answer(sock, "GET", LIMIT)


# -- any well-formed answer reads back as it was written ----------------------------------------
_TOKEN = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-!#$%&'*+.^_`|~",
    min_size=1,
    max_size=20,
)
_VALUE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF), max_size=40).map(str.strip)


@settings(max_examples=150, deadline=None)
@given(
    status=st.integers(200, 599).filter(lambda s: s not in (204, 304)),
    fields=st.lists(st.tuples(_TOKEN, _VALUE), max_size=12),
    body=st.binary(max_size=3000),
    cuts=st.lists(st.integers(1, 3000), max_size=6),
    chunked=st.booleans(),
)
def test_any_well_formed_answer_reads_back_as_written(status, fields, body, cuts, chunked) -> None:
    fields = [
        (n, v)
        for n, v in fields
        if n.lower() not in ("content-length", "transfer-encoding", "connection")
    ]
    lines = [f"{n}: {v}" for n, v in fields]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        points = sorted({0, len(body), *(c for c in cuts if c < len(body))})
        payload = (
            b"".join(
                b"%x\r\n%s\r\n" % (end - start, body[start:end])
                for start, end in itertools.pairwise(points)
            )
            + b"0\r\n\r\n"
        )
    else:
        lines.append(f"Content-Length: {len(body)}")
        payload = body
    ours, theirs = socket.socketpair()
    try:
        ours.settimeout(5)
        got = read_answer(
            served((ours, theirs), head(f"{status} Reason", *lines) + payload, close=False),
            "GET",
            LIMIT,
        )
    finally:
        ours.close()
        theirs.close()
    assert (got.status, got.reason, got.body, got.reusable) == (status, "Reason", body, True)
    for name, _ in fields:
        joined = ", ".join(v for n, v in fields if n.lower() == name.lower())
        assert got.headers[name] == joined


# -- the request's bytes --------------------------------------------------------------------------
def test_the_request_is_one_write_with_host_headers_and_body() -> None:
    data = encode_request(
        "POST", "/api/v1/namespaces/ns/pods/p/binding", "10.0.0.1:6443",
        {"Content-Type": "application/json", "Content-Length": "2"}, b"{}",
    )  # fmt: skip
    assert data == (
        b"POST /api/v1/namespaces/ns/pods/p/binding HTTP/1.1\r\nHost: 10.0.0.1:6443\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    )


def test_a_header_that_is_not_latin_1_cannot_be_encoded() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_request("GET", "/", "h", {"Authorization": "Bearer \u2603"}, b"")
