"""Policy family: policy, audit (cli/commands/policy.py). Both read; neither changes anything:
the policy is the person's file, read once at start (bp/policy.py)."""

from bp import protocol
from broker.policy import audit
from broker.registry import handler


@handler(protocol.OP_POLICY)
def show_policy(broker, request):
    rules = broker.policy
    result = {"policy": rules.describe()}
    if rules.in_force:
        result["policy"]["rules"] = rules.data
        denied = sorted(op for op in protocol.OPERATIONS if rules.denied(request.client, op))
        result["policy"]["deniedForThisKey"] = denied
    return result


@handler(protocol.OP_AUDIT)
def show_audit(broker, request):
    journal = broker.journal
    if request.args.get("verify"):
        return {"audit": journal.verify()}
    return journal.entries(request.client, request.args.get("limit", 50), audit.cursor_of(request.args.get("after")))
