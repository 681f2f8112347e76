# kreact's container image: a static binary on an empty base, run as a
# non-root user.
#
#   docker build -t kreact:dev --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#
# The build stage is the official Go image (pinned to the go.mod's Go
# version); the final image holds the binary only. `make image` builds the
# same final image from a binary built on the host (Dockerfile.prebuilt),
# without pulling anything.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# make image passes the same values from git; without them kreact version
# says dev and unknown.
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/kreact ./cmd/kreact

FROM scratch
# No CA bundle: the binary carries its roots (cmd/kreact/roots.go), so this
# image and the one of Dockerfile.prebuilt hold the same single file.
COPY --from=build /out/kreact /kreact
# 65532 is the conventional "nonroot" user of distroless images; the
# Deployment's runAsNonRoot check needs a numeric user.
USER 65532:65532
ENTRYPOINT ["/kreact"]
CMD ["run", "-f", "/etc/kreact/rules"]
