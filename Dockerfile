# syntax=docker/dockerfile:1
# ragpulse container image: `docker build -t ragpulse:0.1.0 .` (BuildKit, the default builder).
# Stage 1 builds wheels for ragpulse and every dependency; stage 2 installs them into a
# clean slim image without compilers, running as uid/gid 10001.
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
# Compilers only here, for any dependency that ships no wheel for the target platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY stream/ stream/
COPY detectors/ detectors/
COPY monitors/ monitors/
COPY exporters/ exporters/
RUN pip wheel --wheel-dir /wheels .

FROM python:${PYTHON_VERSION}-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="ragpulse" \
      org.opencontainers.image.description="Streaming production monitor for RAG services: Kafka events -> rule detectors -> Prometheus metrics" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/python:${PYTHON_VERSION}-slim"
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FAUST_DATADIR=/tmp/ragpulse-data
RUN groupadd --system --gid 10001 ragpulse \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin ragpulse
# Install from the builder's wheels only (no index); the wheels never land in a layer.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels ragpulse \
 && ragpulse --help > /dev/null
WORKDIR /tmp
USER 10001:10001
EXPOSE 9108
ENTRYPOINT ["ragpulse"]
CMD ["run"]
