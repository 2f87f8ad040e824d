"""CustomResourceDefinitions: loading them, the checks the API server runs on CRD create and update, one object
through a CRD (`validate_object`), and files of manifests against a set of CRDs (`kcel validate`)."""
