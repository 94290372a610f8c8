"""The bridge: run a translation method in a child process speaking ``mt-eval-bridge/1`` (bridge/PROTOCOL.md).

- `mt_eval.bridge.messages`: the wire types and error codes;
- `mt_eval.bridge.lines`: newline framing with a size limit enforced before buffering;
- `mt_eval.bridge.connection`: one guest process (spawn, handshake, requests, shutdown escalation);
- `mt_eval.bridge.method`: `BridgeMethod`, a guest wrapped as an ordinary TranslationMethod;
- `mt_eval.bridge.guest`: ``mt-eval serve DIR``, the Python guest;
- `mt_eval.bridge.conformance`: replaying the conformance transcripts against any guest.
"""

# The logger the host writes each line of a guest's stderr to, and the warnings a guest sends (its ``log``
# notifications), each under the guest's label: the commands show them (`mt_eval.cli.guest_output`), a sandbox reads
# its refusals in them (`mt_eval.sandbox.denials`). It is kept here, which imports nothing, so that naming it loads
# none of the host's modules.
GUEST_LOGGER = "mt_eval.bridge.guest"
