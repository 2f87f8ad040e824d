"""CRD validation rules (`x-kubernetes-validations`): compiled once per schema, evaluated over objects as the API
server does (messages, fieldPath, transition rules, budgets), their estimated cost and its explanation."""
