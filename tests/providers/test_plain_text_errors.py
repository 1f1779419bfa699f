"""A server whose error body is plain text (tinyq4: ``422`` with serde's message): the
provider error says why, on one line, instead of the SDK's bare ``Error code: 422``."""

from __future__ import annotations

from jupyter_brain.providers.sdk_support import map_sdk_error


class UnprocessableEntityError(Exception):
    """Shaped as the SDK's status errors: ``status_code`` and ``body`` (the text when it is not JSON)."""

    def __init__(self, body: object) -> None:
        super().__init__("Error code: 422")
        self.status_code = 422
        self.body = body


def test_a_plain_text_body_is_the_message_on_one_line() -> None:
    text = "Failed to deserialize the JSON body into the target type: messages[3].content:\n  invalid type: sequence\n"
    error = map_sdk_error(UnprocessableEntityError(text), "openai")
    assert (error.kind, error.status_code, error.retryable) == ("bad_request", 422, False)
    assert error.message == ("Error code: 422: Failed to deserialize the JSON body into the target type: "
                             "messages[3].content: invalid type: sequence")


def test_an_empty_or_json_body_keeps_the_message_it_had() -> None:
    assert map_sdk_error(UnprocessableEntityError(""), "openai").message == "Error code: 422"
    assert map_sdk_error(UnprocessableEntityError(None), "openai").message == "Error code: 422"
    body = {"error": {"message": "bad field", "type": "invalid_request_error"}}
    assert map_sdk_error(UnprocessableEntityError(body), "openai").message == "bad field"
