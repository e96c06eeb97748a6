"""A local stand-in for a Pinecone index's data plane, for tests of PineconeVectorStore.

It serves the REST paths the official SDK (`pinecone.Index`, v10) calls, with the same JSON
shapes: `POST /vectors/upsert`, `POST /query`, `POST /vectors/delete`, `GET /vectors/fetch`,
`POST /vectors/update` and `POST /describe_index_stats`. Search is exact cosine over one
namespace; metadata filters follow Pinecone's rules ($eq $ne $gt $gte $lt $lte $in $nin
$exists $and $or; ranges on numbers only; no null metadata), numbers come back as floats, and
deleting from a namespace that does not exist answers 404, as serverless indexes do.

`serve_standin()` runs it with uvicorn on 127.0.0.1 on a free port in a background thread; point
the SDK at `http://127.0.0.1:{port}` (an `http://` host is sent in cleartext, no TLS).
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

API_KEY = "standin-key"
_RANGE_OPS = {"$gt", "$gte", "$lt", "$lte"}


class BadRequest(Exception):
    """A request Pinecone would answer with 400 INVALID_ARGUMENT."""


@dataclass
class Record:
    """One stored vector."""

    values: list[float]
    metadata: dict[str, Any]


@dataclass
class IndexState:
    """Every namespace of the index: namespace -> id -> record."""

    dimension: int
    namespaces: dict[str, dict[str, Record]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # "METHOD /path", for assertions


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message, "details": []}, status_code=status)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _stored_metadata(metadata: Any) -> dict[str, Any]:
    """Validate metadata as Pinecone does; numbers are kept as floats."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise BadRequest("metadata must be an object")
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, bool | str):
            out[key] = value
        elif _is_number(value):
            out[key] = float(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            raise BadRequest(
                f"Metadata value for field {key} must be a string, number, boolean or list of "
                f"strings, got {value!r}"
            )
    return out


def _values(raw: Any, dimension: int) -> list[float]:
    if not isinstance(raw, list) or not all(_is_number(v) for v in raw):
        raise BadRequest("values must be a list of numbers")
    if len(raw) != dimension:
        raise BadRequest(
            f"Vector dimension {len(raw)} does not match the dimension of the index {dimension}"
        )
    return [float(v) for v in raw]


def _field_matches(value: Any, condition: Any) -> bool:
    """Whether one metadata value (or its absence, None) satisfies one field condition.

    Every operator is checked, so an invalid filter is refused even where nothing is stored.
    """
    if not isinstance(condition, dict):
        condition = {"$eq": condition}
    candidates = value if isinstance(value, list) else ([] if value is None else [value])
    results: list[bool] = []
    for op, operand in condition.items():
        if op in ("$eq", "$ne"):
            if isinstance(operand, list | dict) or operand is None:
                raise BadRequest(f"{op} operator must be followed by a string, number or boolean")
            hit = any(_same(c, operand) for c in candidates)
            results.append(hit == (op == "$eq"))
        elif op in _RANGE_OPS:
            if not _is_number(operand):
                raise BadRequest(f"{op} operator must be followed by a number")
            numbers = [c for c in candidates if _is_number(c)]
            results.append(bool(numbers) and all(_compare(op, c, operand) for c in numbers))
        elif op in ("$in", "$nin"):
            if not isinstance(operand, list):
                raise BadRequest(f"{op} operator must be followed by an array")
            hit = any(_same(c, o) for c in candidates for o in operand)
            results.append(hit == (op == "$in"))
        elif op == "$exists":
            if not isinstance(operand, bool):
                raise BadRequest("$exists operator must be followed by a boolean")
            results.append((value is not None) == operand)
        else:
            raise BadRequest(f"unknown filter operator {op}")
    return all(results)


def _same(stored: Any, operand: Any) -> bool:
    if isinstance(stored, bool) or isinstance(operand, bool):
        return isinstance(stored, bool) and isinstance(operand, bool) and stored == operand
    return bool(stored == operand)


def _compare(op: str, left: float, right: float) -> bool:
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    return left <= right


def matches(metadata: Mapping[str, Any], filter: Any) -> bool:
    """Whether a record's metadata satisfies a Pinecone metadata filter."""
    if filter is None:
        return True
    if not isinstance(filter, dict):
        raise BadRequest("filter must be an object")
    results: list[bool] = []
    for key, condition in filter.items():
        if key in ("$and", "$or"):
            if not isinstance(condition, list) or not condition:
                raise BadRequest(f"{key} operator must be followed by a non-empty array")
            subs = [matches(metadata, sub) for sub in condition]
            results.append(all(subs) if key == "$and" else any(subs))
        elif key.startswith("$"):
            raise BadRequest(f"unknown top-level operator {key}")
        else:
            results.append(_field_matches(metadata.get(key), condition))
    return all(results)


def cosine(a: list[float], b: list[float]) -> float:
    """Exact cosine similarity; 0 for a zero vector."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def create_app(state: IndexState, api_key: str = API_KEY) -> FastAPI:
    """The stand-in's ASGI app over `state`."""
    app = FastAPI()

    @app.middleware("http")
    async def check(request: Request, call_next: Any) -> Any:
        state.requests.append(f"{request.method} {request.url.path}")
        if request.headers.get("api-key") != api_key:
            return _error(401, 16, "Invalid API Key")
        if not request.headers.get("x-pinecone-api-version"):
            return _error(400, 3, "missing X-Pinecone-Api-Version header")
        return await call_next(request)

    @app.exception_handler(BadRequest)
    async def bad_request(_request: Request, exc: BadRequest) -> JSONResponse:
        return _error(400, 3, str(exc))

    async def body(request: Request) -> dict[str, Any]:
        data = await request.json()
        if not isinstance(data, dict):
            raise BadRequest("body must be a JSON object")
        return data

    @app.post("/vectors/upsert")
    async def upsert(request: Request) -> Any:
        data = await body(request)
        vectors = data.get("vectors")
        if not isinstance(vectors, list) or not vectors:
            raise BadRequest("vectors must be a non-empty list")
        records = {}
        for v in vectors:
            if not isinstance(v, dict) or not isinstance(v.get("id"), str) or not v["id"]:
                raise BadRequest("every vector needs a non-empty string id")
            records[v["id"]] = Record(
                _values(v.get("values"), state.dimension), _stored_metadata(v.get("metadata"))
            )
        state.namespaces.setdefault(data.get("namespace") or "", {}).update(records)
        return {"upsertedCount": len(vectors)}

    @app.post("/query")
    async def query(request: Request) -> Any:
        data = await body(request)
        top_k = data.get("topK")
        if not isinstance(top_k, int) or not 1 <= top_k <= 10_000:
            raise BadRequest("topK must be between 1 and 10000")
        namespace = data.get("namespace") or ""
        records = state.namespaces.get(namespace, {})
        if "id" in data:
            if data["id"] not in records:
                return {"matches": [], "namespace": namespace, "usage": {"readUnits": 1}}
            vector = records[data["id"]].values
        else:
            vector = _values(data.get("vector"), state.dimension)
        flt = data.get("filter")
        matches({}, flt)  # refuse an invalid filter even on an empty namespace
        scored = [
            (cosine(vector, rec.values), rid, rec)
            for rid, rec in records.items()
            if matches(rec.metadata, flt)
        ]
        scored.sort(key=lambda t: (-t[0], t[1]))
        out = []
        for score, rid, rec in scored[:top_k]:
            match: dict[str, Any] = {"id": rid, "score": score, "values": []}
            if data.get("includeValues"):
                match["values"] = rec.values
            if data.get("includeMetadata") and rec.metadata:
                match["metadata"] = rec.metadata
            out.append(match)
        return {"results": [], "matches": out, "namespace": namespace, "usage": {"readUnits": 1}}

    @app.post("/vectors/delete")
    async def delete(request: Request) -> Any:
        data = await body(request)
        namespace = data.get("namespace") or ""
        if namespace not in state.namespaces:
            return _error(404, 5, "Namespace not found")
        records = state.namespaces[namespace]
        if data.get("deleteAll"):
            records.clear()
        elif "ids" in data:
            for rid in data["ids"]:
                records.pop(rid, None)
        elif "filter" in data:
            for rid in [r for r, rec in records.items() if matches(rec.metadata, data["filter"])]:
                del records[rid]
        else:
            raise BadRequest("one of ids, deleteAll or filter is required")
        if not records:
            del state.namespaces[namespace]  # serverless drops an emptied namespace
        return {}

    @app.get("/vectors/fetch")
    async def fetch(request: Request) -> Any:
        ids = request.query_params.getlist("ids")
        namespace = request.query_params.get("namespace") or ""
        records = state.namespaces.get(namespace, {})
        found = {
            rid: {"id": rid, "values": records[rid].values, "metadata": records[rid].metadata}
            for rid in ids
            if rid in records
        }
        return {"vectors": found, "namespace": namespace, "usage": {"readUnits": 1}}

    @app.post("/vectors/update")
    async def update(request: Request) -> Any:
        data = await body(request)
        record = state.namespaces.get(data.get("namespace") or "", {}).get(data.get("id", ""))
        if record is None:
            return {}
        if "values" in data:
            record.values = _values(data["values"], state.dimension)
        if "setMetadata" in data:
            record.metadata.update(_stored_metadata(data["setMetadata"]))
        return {}

    @app.post("/describe_index_stats")
    async def stats(request: Request) -> Any:
        data = await body(request)
        flt = data.get("filter")
        counts = {
            ns: sum(1 for rec in records.values() if matches(rec.metadata, flt))
            for ns, records in state.namespaces.items()
        }
        return {
            "namespaces": {ns: {"vectorCount": n} for ns, n in counts.items()},
            "dimension": state.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(counts.values()),
            "metric": "cosine",
            "vectorType": "dense",
        }

    return app


@dataclass
class StandIn:
    """A running stand-in: its base URL (the SDK's `host=`), API key and index state."""

    url: str
    api_key: str
    state: IndexState


@contextmanager
def serve_standin(dimension: int = 384, api_key: str = API_KEY) -> Iterator[StandIn]:
    """Run the stand-in on 127.0.0.1 on a free port until the block ends."""
    state = IndexState(dimension=dimension)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(state, api_key), log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the Pinecone stand-in did not start")
        time.sleep(0.01)
    try:
        yield StandIn(url=f"http://127.0.0.1:{port}", api_key=api_key, state=state)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
