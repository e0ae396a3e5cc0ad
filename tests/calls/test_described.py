"""An endpoint failure's line names the endpoint: the openai client's connection error says only
"Connection error.", which left a user with several endpoints guessing which one was down."""
import openai

try:  # the HTTP library of the openai release installed: httpx2 for openai 3, httpx before
    import httpx2 as httpx
except ImportError:
    import httpx

from econarena_evals.calls.errors import described


def test_a_connection_error_names_the_endpoint_without_its_secrets():
    request = httpx.Request("POST", "http://user:pw@127.0.0.1:9/v1/chat/completions?key=sk-secret")
    line = described(openai.APIConnectionError(request=request))
    assert line == "APIConnectionError: Connection error. (POST http://127.0.0.1:9/v1/chat/completions)"
    assert "sk-secret" not in line and "pw" not in line


def test_an_error_that_names_no_request_is_its_type_and_message():
    assert described(ValueError("bad")) == "ValueError: bad"
