# Loaded by stack/schemathesis.mjs (SCHEMATHESIS_HOOKS). Two built-in checks are run with the exceptions the contract
# states, and no others:
# - positive_data_acceptance: a schema-valid request may still be refused with 400 when it names a resource that is
#   missing (`invalid_reference`, info "References" in openapi.yaml), or when it breaks a rule that OpenAPI 3.0's
#   JSON Schema cannot state (it depends on what is stored, or relates two fields); each such rule is listed on its
#   operation in `x-rules-beyond-schema`, with the message the service answers it with. Every other answer to a
#   schema-valid request is judged exactly as the built-in check judges it.
# - negative_data_rejection: a request whose only violation is a `readOnly` property it sends back is accepted and the
#   property ignored (docs/architecture.md "API conventions"). Schemathesis means to allow that (its own exemption), but in the coverage phase
#   the body's negation is not marked on the body, so its exemption never applies there.
#   Nor is one whose only violation is in `organizationId` in the path: stack/schemathesis.mjs fixes that parameter to
#   the fuzzed organization, so the coverage phase's too-long id is replaced before the request is sent (the URL
#   holds the real id), and the case's own record of it is not.
# - use_after_free: a default agent (lib/agents/default-agents.ts) is created when absent, by the spec ("a default
#   agent id (created when absent)"), so one deleted comes back afresh on its next lookup (openapi.yaml, deleteAgent).
import re

import schemathesis
from schemathesis.core.jsonschema import make_validator
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    _has_other_negated_location,
    negative_data_rejection,
    positive_data_acceptance,
    use_after_free,
)

DEFAULT_AGENTS = {"default-assistant", "default-writer", "default-analyst"}


def _error(response):
    if response.status_code != 400:
        return None
    try:
        body = response.json()
    except Exception:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


def _problems(error):
    details = error.get("details")
    messages = [d.get("message") for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    return [m for m in messages if isinstance(m, str)] or [str(error.get("message", ""))]


def _breaks(rule, code, message):
    # A rule names the error code it is answered with, the message (a regular expression), or both.
    return rule.get("code", code) == code and re.search(rule.get("message", ""), message) is not None


def _beyond_schema(case, error):
    rules = case.operation.definition.raw.get("x-rules-beyond-schema") or []
    code = error.get("code")
    return bool(rules) and all(any(_breaks(r, code, m) for r in rules) for m in _problems(error))


@schemathesis.check
def positive_data_acceptance_but_references(ctx, response, case):
    error = _error(response)
    if error is not None and (error.get("code") == "invalid_reference" or _beyond_schema(case, error)):
        return None
    return positive_data_acceptance(ctx, response, case)


def _only_read_only_sent(case):
    meta = case.meta
    if meta is None or not isinstance(case.body, dict):
        return False
    at_body = meta.is_negative_at(ParameterLocation.BODY) or (
        getattr(meta.phase.data, "parameter_location", None) == ParameterLocation.BODY
    )
    if not at_body or _has_other_negated_location(case, ParameterLocation.BODY):
        return False
    alternative = case.operation.get_body_for_media_type(case.media_type)
    if alternative is None or alternative.permissive_schema is alternative.optimized_schema:
        return False
    validator_cls = case.operation.schema.adapter.jsonschema_validator_cls
    try:
        return make_validator(alternative.permissive_schema, validator_cls).is_valid(case.body)
    except Exception:
        return False


# Parameters stack/schemathesis.mjs sets in its [parameters] table: a generated value there is never sent.
FIXED_PATH_PARAMETERS = {"organizationId"}
SENT_ORGANIZATION = re.compile(r"/orgs/([^/?#]{1,100})(?:[/?#]|$)")


def _only_fixed_parameter_negated(case, response):
    data = getattr(case.meta.phase, "data", None) if case.meta else None
    if data is None or getattr(data, "parameter_location", None) != ParameterLocation.PATH:
        return False
    names = [data.parameter] if getattr(data, "parameter", None) else []
    names += [m.parameter for m in getattr(data, "mutations", None) or [] if m.parameter]
    if not names or not set(names) <= FIXED_PATH_PARAMETERS:
        return False
    if _has_other_negated_location(case, ParameterLocation.PATH):
        return False
    # and what was sent is a valid id (at most 100 characters), not the generated one
    return SENT_ORGANIZATION.search(response.request.url) is not None


@schemathesis.check
def negative_data_rejection_but_read_only(ctx, response, case):
    if 200 <= response.status_code < 300 and (
        _only_read_only_sent(case) or _only_fixed_parameter_negated(case, response)
    ):
        return None
    return negative_data_rejection(ctx, response, case)


@schemathesis.check
def use_after_free_but_default_agents(ctx, response, case):
    if (case.path_parameters or {}).get("agentId") in DEFAULT_AGENTS:
        return None
    return use_after_free(ctx, response, case)
