"""broker/network/har.py without a browser: cookies of the journal's headers become HAR cookies, with
their values redacted unless revealed, and a cut base64 body stays decodable."""

import base64

from broker.network import har


def test_cookies_are_parsed_and_redacted_unless_revealed():
    headers = [{"name": "Cookie", "value": "sid=abc; theme=dark"}]
    assert har._request_cookies(headers, False) == [{"name": "sid", "value": "[redacted]"},
                                                    {"name": "theme", "value": "[redacted]"}]
    assert har._request_cookies(headers, True)[1] == {"name": "theme", "value": "dark"}
    set_cookie = [{"name": "set-cookie", "value": "sid=abc; Path=/; HttpOnly; Secure; Domain=example.com"}]
    assert har._response_cookies(set_cookie, False) == [
        {"name": "sid", "value": "[redacted]", "path": "/", "httpOnly": True, "secure": True, "domain": "example.com"}]


def test_a_cut_base64_body_still_decodes():
    data = bytes(range(256)) * 10
    cut = har._cut(base64.b64encode(data).decode(), True, 100)
    assert len(cut) <= 100 and base64.b64decode(cut) == data[:len(base64.b64decode(cut))]
