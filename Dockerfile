# syntax=docker/dockerfile:1
# toolnexus-server (and the toolnexus CLI) as a static binary on distroless.
#
#   docker build -t toolnexus .
#   docker run --rm -p 127.0.0.1:50051:50051 -e TOOLNEXUS_INSECURE=true toolnexus
#
# Inside a container the server must listen on 0.0.0.0, and it refuses a
# non-loopback address unless auth tokens or TLS are configured, or
# --insecure / TOOLNEXUS_INSECURE=true is given. The image does not decide
# for you: mount a config with auth.tokens (what deploy/kubernetes does), or
# opt in to --insecure where a NetworkPolicy or a loopback-only port
# publish fences the port. See docs/deploy.md.
#
# The sandbox (README, "The sandbox") runs every command a model starts in
# new user, PID and network namespaces, which the runtime's default seccomp
# profile refuses; it needs no capability. Run with
#   docker run --security-opt seccomp=unconfined ...
# (deploy/kubernetes sets seccompProfile: Unconfined); without it the
# sandbox runs with Landlock, seccomp and limits only, and says so in the
# startup log and ListSources.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so editing code does not refetch them.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
# CGO off: a fully static binary that needs no libc in the runtime image.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/toolnexus-server ./cmd/server && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/toolnexus ./cmd/client && \
    mkdir -p /out/workspace /out/workspace.sessions

# The stdio variant: docker build --target stdio -t toolnexus:stdio .
# The same server on Debian with a shell and the runtimes stdio MCP servers
# are launched with: Node.js (node, npm, npx) and Python 3 (pip, uv, uvx).
# Install the servers you run into an image FROM this one and start them
# directly: a sandboxed server has no network, so `npx -y` cannot download
# at start. Non-root like the default image; the builtin bash tool works.
FROM node:22.12.0-bookworm-slim AS stdio
RUN apt-get update && \
    apt-get install -y --no-install-recommends python3 python3-pip python3-venv ca-certificates && \
    rm -rf /var/lib/apt/lists/* && \
    pip3 install --no-cache-dir --break-system-packages uv==0.5.11 && \
    groupadd -g 65532 nonroot && useradd -u 65532 -g 65532 -m -d /home/nonroot nonroot
COPY --from=build /out/toolnexus-server /out/toolnexus /usr/local/bin/
COPY --from=build /src/skills /app/skills
COPY --from=build --chown=65532:65532 /out/workspace /workspace
COPY --from=build --chown=65532:65532 /out/workspace.sessions /workspace.sessions
WORKDIR /app
ENV TOOLNEXUS_LISTEN=0.0.0.0:50051 \
    TOOLNEXUS_METRICS_LISTEN=0.0.0.0:9464 \
    TOOLNEXUS_WORKSPACE=/workspace \
    TOOLNEXUS_LOG_FORMAT=json \
    NPM_CONFIG_UPDATE_NOTIFIER=false
USER 65532:65532
EXPOSE 50051 9464
ENTRYPOINT ["/usr/local/bin/toolnexus-server"]

# The default image (the last stage).
# distroless/static: CA certificates and tzdata, no shell, no package
# manager. The builtin bash tool needs /bin/sh, so the Kubernetes config
# turns it off; use the stdio target above when your tools need a shell,
# node or python.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/toolnexus-server /out/toolnexus /usr/local/bin/
COPY --from=build /src/skills /app/skills
COPY --from=build --chown=65532:65532 /out/workspace /workspace
# Sessions live beside the workspace (sessions.root), out of the shared one's reach.
COPY --from=build --chown=65532:65532 /out/workspace.sessions /workspace.sessions
WORKDIR /app
# Flags override server.listen / server.metricsListen from the config.
ENV TOOLNEXUS_LISTEN=0.0.0.0:50051 \
    TOOLNEXUS_METRICS_LISTEN=0.0.0.0:9464 \
    TOOLNEXUS_WORKSPACE=/workspace \
    TOOLNEXUS_LOG_FORMAT=json
# nonroot (65532) from the base image, by number so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 50051 9464
ENTRYPOINT ["/usr/local/bin/toolnexus-server"]
