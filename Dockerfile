# The Memoir app image: `memoir api` and `memoir worker` in docker-compose.yml (any `memoir` command).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The pinned torch first, its CPU build from PyTorch's CPU index, in its own layer: the project's
# dependencies then find it installed (2.13.0+cpu satisfies ==2.13.0) and pull no CUDA packages.
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"

# Dependencies next (cached while only the code changes), then the code itself.
COPY pyproject.toml README.md ./
COPY memoir ./memoir
COPY workflows ./workflows
COPY activities ./activities
COPY api ./api
COPY temporal ./temporal
COPY deploy ./deploy
RUN pip install .

# Nothing runs as root; the embedded stack's data folder (unused with MEMOIR_DATABASE_URL) is here.
RUN useradd --create-home --uid 1000 memoir && mkdir -p /data && chown memoir /data
USER memoir
ENV MEMOIR_DATA_DIR=/data

EXPOSE 8000
CMD ["memoir", "api"]
