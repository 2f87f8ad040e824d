"""OpenAPI structural schemas and how CEL sees them: the schema model, whether it is structural, property
name escaping, schemas as CEL types, JSON data read through a schema, and old/new correlation for ratcheting."""
