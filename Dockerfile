# The kcel command with every extra users need (the webhook server, built-in kinds' schemas, protobuf messages,
# the language server):
#   docker build -t kcel . && docker run --rm -v "$PWD:/work" -w /work kcel check config/
FROM python:3.12-slim
COPY pyproject.toml README.md /src/
COPY kcel /src/kcel
COPY conformance /src/conformance
RUN pip install --no-cache-dir "/src[serve,schemas,protobuf,lsp,go]" && rm -rf /src
USER 65532:65532
ENTRYPOINT ["kcel"]
CMD ["--help"]
