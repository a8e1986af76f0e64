# An image of Mallard built from the release archive, not from the sources:
#   ./mvnw package                                   # writes mallard-cli/target/mallard-<version>.tar.gz
#   docker build --build-arg VERSION=0.1.0-SNAPSHOT -t mallard .
#   docker run --rm -p 59307:59307 -p 8081:8081 -v "$PWD/wh:/data" mallard \
#     server --conf warehouse=/data --conf users.0.username=ada --conf users.0.password=...
# It has not been built on the project's machines: they have no container base images (docs/cli.md).
FROM eclipse-temurin:21-jre
ARG VERSION
# ADD unpacks a local tar.gz; the archive's top directory is mallard-<version>/.
ADD mallard-cli/target/mallard-${VERSION}.tar.gz /opt/
RUN mv /opt/mallard-${VERSION} /opt/mallard && useradd --system --home-dir /data mallard && mkdir -p /data && chown mallard /data
USER mallard
WORKDIR /data
# Flight SQL and HTTP of `mallard server`.
EXPOSE 59307 8081
ENTRYPOINT ["/opt/mallard/bin/mallard"]
CMD ["--help"]
