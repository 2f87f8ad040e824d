"""Reading manifests: files and directories of YAML/JSON, decoded as the API server decodes a request body."""
