# schemathesis hooks for scripts/fuzz-api.sh: the documented exceptions to positive_data_acceptance.
# A schema-valid request must be accepted unless the service refuses it for a rule the document
# states only in words, because JSON Schema cannot: a reference to data that does not exist, a
# capture's PVT1 content, a webhook host that must resolve to a public address, a plan's limits,
# and `from` <= `to` across two query parameters. Each exception below names the operation, the
# status and the stable codes allowed; any other refusal of a schema-valid request still fails.
#   python3 scripts/fuzz-api-hooks.py   prints the schemathesis.toml sections that let these statuses through
from datetime import datetime

import schemathesis
from schemathesis.config._checks import POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES

CAPTURE = {400: {"capture_invalid"}}  # PVT1 magic, CRC, and the environment's dimension, extractor, quality
DOCUMENTED = {
    "POST /v1/projects/{project_id}/biometrics/enroll": {**CAPTURE, 422: {"invalid_reference"}},
    "POST /v1/projects/{project_id}/biometrics/identify": CAPTURE,
    "POST /v1/device-com/identify": CAPTURE,
    "POST /v1/device-com/enrollment/{session_id}/complete": CAPTURE,
    # References to what does not exist: a project, an environment, a member, a registration code, a kiosk.
    "POST /v1/organization/{org_id}/api-keys": {422: {"invalid_reference"}},
    "POST /v1/organization/{org_id}/projects": {422: {"invalid_reference"}},
    "POST /v1/devices/{device_id}/enroll/member/start": {422: {"invalid_reference"}},
    "POST /v1/projects/{project_id}/device/android/complete_registration": {422: {"registration_code_invalid"}},
    "POST /v1/self-enrollment/sessions": {422: {"self_enrollment_unavailable"}},
    # The URL's host is resolved: one that does not resolve, or is private, is refused; 25 per project.
    "POST /v1/projects/{project_id}/webhooks": {422: {"webhook_url_rejected", "webhook_limit_reached"}},
    "PATCH /v1/projects/{project_id}/webhooks/{webhook_id}": {422: {"webhook_url_rejected"}},
    # The plan's headcount.
    "POST /v1/projects/{project_id}/members": {422: {"headcount_reached"}},
}


@schemathesis.check
def refusal_is_documented(ctx, response, case):
    """A schema-valid request let through by an exception was refused with one of its codes."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    allowed = DOCUMENTED.get(case.operation.label, {}).get(response.status_code)
    if allowed is None:
        return None
    code = (response.json() or {}).get("code")
    if code not in allowed:
        raise AssertionError(f"{response.status_code} {code} is not a documented refusal of a schema-valid request (allowed: {', '.join(sorted(allowed))})")
    return None


def _instant(text):
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except (AttributeError, ValueError):
        return None


@schemathesis.hook
def map_case(context, case):
    """from <= to: the description says it, JSON Schema cannot; a positive case gets its window in order."""
    query = case.query
    if case.meta is None or not case.meta.generation.mode.is_positive or not query or "from" not in query or "to" not in query:
        return case
    start, end = _instant(query["from"]), _instant(query["to"])
    if start is not None and end is not None and start > end:
        query["from"], query["to"] = query["to"], query["from"]
    return case


def toml_sections():
    lines = []
    for label, statuses in DOCUMENTED.items():
        method, path = label.split(" ", 1)
        expected = [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, *map(str, statuses)]
        lines += [
            "[[operations]]",
            f'include-method = "{method}"',
            f'include-path = "{path}"',
            "checks.positive_data_acceptance.expected-statuses = [" + ", ".join(f'"{status}"' for status in expected) + "]",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(toml_sections())
