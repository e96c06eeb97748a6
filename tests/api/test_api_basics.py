"""Health, routing, auth and the error shape."""

from __future__ import annotations

import httpx
from temporalio.client import Client

from api.app import create_app
from memoir.settings import Settings
from tests.api.support import ApiUser, assert_error


async def test_healthz_answers_ok_without_a_token(http: httpx.AsyncClient) -> None:
    response = await http.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def test_unknown_route_answers_404_in_the_error_shape(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/nothing-here")
    error = assert_error(response, 404, "not_found")
    assert "/v1/nothing-here" in error["message"]


async def test_wrong_method_answers_405_in_the_error_shape(http: httpx.AsyncClient) -> None:
    response = await http.delete("/v1/messages")
    assert_error(response, 405, "method_not_allowed")


async def test_missing_token_is_401_with_reason_and_challenge(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/inbox")
    error = assert_error(response, 401, "unauthorized")
    assert "Authorization" in error["message"]
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_bad_token_is_401_invalid_token(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/inbox", headers={"Authorization": "Bearer not-a-token"})
    error = assert_error(response, 401, "unauthorized")
    assert "not valid" in error["message"]
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_non_bearer_scheme_is_401(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.get("/v1/inbox", headers={"Authorization": f"Basic {user.token}"})
    error = assert_error(response, 401, "unauthorized")
    assert "Bearer <token>" in error["message"]


async def test_missing_token_is_401_even_with_a_bad_body(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/messages", json={"nope": 1})
    assert_error(response, 401, "unauthorized")


async def test_inbox_page_is_plain_html_with_no_cdn(http: httpx.AsyncClient) -> None:
    response = await http.get("/inbox")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert "localStorage" in page and "/v1/inbox" in page
    assert "http://" not in page and "https://" not in page


async def test_openapi_documents_the_error_shape(http: httpx.AsyncClient) -> None:
    schema = (await http.get("/openapi.json")).json()
    responses = schema["paths"]["/v1/messages"]["post"]["responses"]
    assert responses["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ErrorResponse"
    )


async def test_lifespan_opens_the_database_and_connects_temporal(
    settings: Settings, temporal_client: Client, user: ApiUser
) -> None:
    address = temporal_client.service_client.config.target_host
    app = create_app(settings.model_copy(update={"temporal_address": address}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as http:
            response = await http.get("/v1/inbox", headers=user.headers)
        assert (response.status_code, response.json()) == (200, [])
    assert app.state.stores is None and app.state.client is None


async def test_requests_before_the_lifespan_are_503_not_ready(settings: Settings) -> None:
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as http:
        response = await http.get("/v1/inbox", headers={"Authorization": "Bearer x"})
    assert_error(response, 503, "not_ready")
