"""`kcel serve`: a validating admission webhook that enforces ValidatingAdmissionPolicies from files.

Layout: `review` (AdmissionReview wire format), `policies` (the served policy set and its reloads), `tls`
(reloadable certificate), `metrics`, `logs`, `app` (Starlette handlers), `server` (uvicorn), `command` (CLI).
Nothing is imported here, so `import kcel.webhook.command` stays cheap.
"""
