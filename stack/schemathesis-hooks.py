# Loaded by stack/schemathesis.mjs (SCHEMATHESIS_HOOKS). openapi.yaml cannot say whether a resource that a body or
# query names exists: its one rule (info, "References") is that a missing or invisible one is
# `400 invalid_reference`. Schemathesis's positive_data_acceptance is run with that one exception; every other
# answer to a schema-valid request is judged exactly as the built-in check judges it.
import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance


def _invalid_reference(response):
    if response.status_code != 400:
        return False
    try:
        body = response.json()
    except Exception:
        return False
    return isinstance(body, dict) and (body.get("error") or {}).get("code") == "invalid_reference"


@schemathesis.check
def positive_data_acceptance_but_references(ctx, response, case):
    if _invalid_reference(response):
        return None
    return positive_data_acceptance(ctx, response, case)
