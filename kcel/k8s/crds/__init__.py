"""CustomResourceDefinitions: loading them, the checks the API server runs on CRD create and update, one object
through a CRD (`validate_object`), and files of manifests against a set of CRDs (`kcel validate`)."""

from kcel.k8s.crds.crd import CRD, CRDLoadError, check_crd, load_crds, validate_crd
from kcel.k8s.crds.objects import ObjectResult, validate_object

__all__ = ["CRD", "CRDLoadError", "ObjectResult", "check_crd", "load_crds", "validate_crd", "validate_object"]
