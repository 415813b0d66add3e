# Multi-stage build of CityHub's binaries; `--target api`, `--target order-worker`
# or `--target cli` (the `cityhub` operator commands).
FROM rust:1.95-bookworm AS build
WORKDIR /src
# The commit the binaries report in cityhub_build_info (`--build-arg CITYHUB_COMMIT=$(git rev-parse --short HEAD)`).
ARG CITYHUB_COMMIT=unknown
ENV CITYHUB_COMMIT=${CITYHUB_COMMIT}
COPY . .
RUN cargo build --release -p cityhub-api -p cityhub-order-worker -p cityhub-cli \
 && cp target/release/cityhub-api target/release/cityhub-order-worker target/release/cityhub /usr/local/bin/

FROM debian:bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* && useradd --system --uid 10001 cityhub
COPY --from=build /usr/local/bin/cityhub /usr/local/bin/
USER cityhub

FROM runtime AS api
COPY --from=build /usr/local/bin/cityhub-api /usr/local/bin/
EXPOSE 8080
ENTRYPOINT ["cityhub-api"]

FROM runtime AS order-worker
COPY --from=build /usr/local/bin/cityhub-order-worker /usr/local/bin/
ENTRYPOINT ["cityhub-order-worker"]

FROM runtime AS cli
ENTRYPOINT ["cityhub"]
