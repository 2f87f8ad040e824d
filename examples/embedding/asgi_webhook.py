"""An admission webhook as a bare ASGI application: kcel decides each AdmissionReview with the policies of
examples/admission/policies, as the API server would, and answers as `kcel serve` does.

Run it with any ASGI server (TLS is the server's job; the API server only calls webhooks over HTTPS):

    uvicorn examples.embedding.asgi_webhook:app --ssl-certfile tls.crt --ssl-keyfile tls.key
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from kcel.k8s.admission import PolicySet, RequestError, review_response

ADMISSION = Path(__file__).resolve().parent.parent / "admission"
POLICIES = PolicySet.load([ADMISSION / "policies"], resources=[ADMISSION / "params"])

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """POST /validate with an AdmissionReview; anything else is 404, a body that is not one 400."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] != "/validate" or scope["method"] != "POST":
        await _answer(send, 404, {"message": "POST an AdmissionReview to /validate"})
        return
    try:
        review = json.loads(body)
        request = review["request"]
        decision = POLICIES.admit(request)
    except (ValueError, KeyError, TypeError, RequestError) as err:
        await _answer(send, 400, {"message": f"not an AdmissionReview request: {err}"})
        return
    await _answer(send, 200, review_response(request["uid"], decision))


async def _answer(send: Send, status: int, document: Any) -> None:
    body = json.dumps(document).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
