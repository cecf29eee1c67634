"""A real SMTP server for tests/notifiers.rs: aiosmtpd (from PyPI) on 127.0.0.1, with TLS
(STARTTLS required before anything, or TLS from the first byte) and AUTH required. Each message
it takes is written whole to OUTDIR/NNNN.eml, and what the session was to OUTDIR/NNNN.json
(sender, recipients, whether it was encrypted and authenticated). Prints "ready" when it listens.

    python3 server.py PORT CERT KEY OUTDIR USER PASSWORD starttls|implicit
"""

import json
import logging
import os
import signal
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    logging.basicConfig(level=logging.WARNING)
    port, cert, key, outdir, user, password, mode = sys.argv[1:8]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    class Keep:
        async def handle_DATA(self, server, session, envelope):
            n = len([f for f in os.listdir(outdir) if f.endswith(".eml")])
            base = os.path.join(outdir, f"{n:04}")
            with open(base + ".json", "w") as f:
                json.dump(
                    {
                        "mail_from": envelope.mail_from,
                        "rcpt_tos": envelope.rcpt_tos,
                        # With TLS from the first byte the listener takes nothing else.
                        "encrypted": session.ssl is not None or mode == "implicit",
                        "authenticated": bool(session.authenticated),
                    },
                    f,
                )
            with open(base + ".tmp", "wb") as f:
                f.write(envelope.original_content or envelope.content)
            os.rename(base + ".tmp", base + ".eml")
            return "250 Message accepted for delivery"

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user.encode()
            and auth_data.password == password.encode()
        )
        # Not handled here: the server answers a refusal itself (535).
        return AuthResult(success=ok, handled=False)

    kwargs = {"authenticator": authenticate, "auth_required": True}
    if mode == "starttls":
        kwargs.update(tls_context=context, require_starttls=True)
    else:
        # TLS from the first byte: aiosmtpd does not see it as a STARTTLS session, and would not
        # offer AUTH unless told that the connection is already encrypted.
        kwargs.update(ssl_context=context, auth_require_tls=False)
    controller = Controller(Keep(), hostname="127.0.0.1", port=int(port), **kwargs)
    controller.start()
    print("ready", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    controller.stop()


if __name__ == "__main__":
    main()
