"""cli/zmtp.py against a real pyzmq ROUTER (the broker's socket type) on an ipc endpoint."""

import os
import tempfile
import threading

import pytest
import zmq

from cli import zmtp


@pytest.fixture
def router():
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    path = os.path.join(tempfile.mkdtemp(prefix="bpz-"), "s")
    sock.bind("ipc://" + path)
    yield sock, path
    sock.close(linger=0)
    ctx.term()


def serve_once(sock, reply_of):
    def run():
        if sock.poll(5000):
            frames = sock.recv_multipart()
            route, payload = frames[:-1], frames[-1]
            sock.send_multipart(route + [reply_of(payload)])

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("size", [0, 1, 255, 256, 70_000, 3_000_000])
def test_a_request_and_its_reply_cross_intact_whatever_their_size(router, size):
    sock, path = router
    thread = serve_once(sock, lambda payload: b"<" + payload + b">")
    body = os.urandom(size)
    with zmtp.Req(path) as req:
        req.connect(2.0)
        req.send(body)
        assert req.recv(5.0, 10_000_000) == b"<" + body + b">"
    thread.join()


def test_the_router_sees_a_req_envelope(router):
    sock, path = router
    seen = []

    def reply(payload):
        seen.append(payload)
        return b"ok"

    thread = serve_once(sock, reply)
    with zmtp.Req(path) as req:
        req.connect(2.0)
        req.send(b'{"op":"ping"}')
        assert req.recv(5.0, 100) == b"ok"
    thread.join()
    assert seen == [b'{"op":"ping"}']


def test_a_reply_larger_than_the_bound_is_refused_from_its_header(router):
    sock, path = router
    thread = serve_once(sock, lambda payload: b"x" * 5000)
    with zmtp.Req(path) as req:
        req.connect(2.0)
        req.send(b"q")
        with pytest.raises(zmtp.TooLarge):
            req.recv(5.0, 4096)
    thread.join()


def test_no_reply_within_the_wait_is_none(router):
    _, path = router
    with zmtp.Req(path) as req:
        req.connect(2.0)
        req.send(b"q")
        assert req.recv(0.3, 100) is None


def test_nobody_listening_is_not_delivered():
    with zmtp.Req(os.path.join(tempfile.mkdtemp(prefix="bpz-"), "absent")) as req:
        with pytest.raises(zmtp.NotDelivered):
            req.connect(0.5)


def test_a_silent_listener_is_not_delivered():
    import socket

    path = os.path.join(tempfile.mkdtemp(prefix="bpz-"), "silent")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)  # accepts at the kernel level, never speaks: a stopped broker
    try:
        with zmtp.Req(path) as req:
            with pytest.raises(zmtp.NotDelivered):
                req.connect(0.3)
    finally:
        listener.close()
